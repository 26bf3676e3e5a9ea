/**
 * The hand-written safetensors reader and writer: an exact byte layout for a tiny tensor,
 * round trips (bytes and files, F32 and F64), refusal of malformed files with one clear line,
 * and the policy file built on it (metadata, shapes).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createPolicyModel,
  decodePolicy,
  encodePolicy,
  loadPolicy,
  savePolicy,
} from "../../../src/improve/rl/policy/model.js";
import { ARCHITECTURE, PARAM_NAMES } from "../../../src/improve/rl/policy/network.js";
import {
  decodeSafetensors,
  encodeSafetensors,
  readSafetensors,
  SafetensorsError,
  writeSafetensors,
} from "../../../src/improve/rl/policy/safetensors.js";
import type { Tensor } from "../../../src/improve/rl/policy/tensor.js";

const dir = mkdtempSync(join(tmpdir(), "clade-policy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file from a header object (or raw header text) and a data buffer, as a writer might. */
function rawFile(header: unknown, data: number[] = [], headerLength?: number): Uint8Array {
  const json = new TextEncoder().encode(
    typeof header === "string" ? header : JSON.stringify(header),
  );
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLength ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function refusal(bytes: Uint8Array): string {
  try {
    decodeSafetensors(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(SafetensorsError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    expect(message.startsWith("safetensors: ")).toBe(true);
    return message;
  }
  throw new Error("the file was accepted");
}

describe("safetensors layout", () => {
  it("writes the exact expected bytes for a tiny tensor", () => {
    const bytes = encodeSafetensors(
      new Map([["a", { shape: [2], data: Float32Array.from([1, -2]) }]]),
      {
        k: "v",
      },
    );
    const json = '{"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}';
    expect(json.length).toBe(79);
    const expected = [
      ...[80, 0, 0, 0, 0, 0, 0, 0], // header length 80 = 79 padded to a multiple of 8
      ...Buffer.from(json, "utf8"),
      0x20, // one space of padding
      ...[0x00, 0x00, 0x80, 0x3f], // 1.0f little-endian
      ...[0x00, 0x00, 0x00, 0xc0], // -2.0f little-endian
    ];
    expect(Array.from(bytes)).toEqual(expected);
  });

  it("orders tensors by name (F64 first), metadata first, and omits empty metadata", () => {
    const bytes = encodeSafetensors(
      new Map<string, Tensor>([
        ["b", { shape: [1], data: Float32Array.from([2]) }],
        ["a", { shape: [1, 1], data: Float32Array.from([1]) }],
        ["z", { shape: [1], data: Float64Array.from([3]) }],
      ]),
    );
    const length = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect((8 + length) % 8).toBe(0);
    const header = new TextDecoder().decode(bytes.subarray(8, 8 + length)).trimEnd();
    expect(header).toBe(
      '{"z":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},' +
        '"a":{"dtype":"F32","shape":[1,1],"data_offsets":[8,12]},' +
        '"b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}}',
    );
  });

  it("round-trips F32 and F64 tensors, empty tensors and metadata", () => {
    const tensors = new Map<string, Tensor>([
      ["policy.w1", { shape: [3, 2], data: Float32Array.from([0.1, -0.2, 3e-8, 1e30, -0, 7]) }],
      ["x64", { shape: [2], data: Float64Array.from([Math.PI, -1e-300]) }],
      ["empty", { shape: [0, 4], data: new Float32Array(0) }],
    ]);
    const metadata = { env: "somewhere", note: "ünïcode ✓", json: '{"a":[1,2]}' };
    const back = decodeSafetensors(encodeSafetensors(tensors, metadata));
    expect(back.metadata).toEqual(metadata);
    expect([...back.tensors.keys()].sort()).toEqual(["empty", "policy.w1", "x64"]);
    for (const [name, t] of tensors) {
      const r = back.tensors.get(name) as Tensor;
      expect(r.shape).toEqual(t.shape);
      expect(r.data.constructor).toBe(t.data.constructor);
      expect(Array.from(r.data)).toEqual(Array.from(t.data));
    }
  });

  it("round-trips through a file", async () => {
    const path = join(dir, "t.safetensors");
    const tensors = new Map([["w", { shape: [2, 2], data: Float32Array.from([1, 2, 3, 4]) }]]);
    await writeSafetensors(path, tensors, { step: "3" });
    const back = await readSafetensors(path);
    expect(Array.from((back.tensors.get("w") as Tensor).data)).toEqual([1, 2, 3, 4]);
    expect(back.metadata).toEqual({ step: "3" });
  });
});

describe("refusing malformed files", () => {
  const good = { a: { dtype: "F32", shape: [2], data_offsets: [0, 8] } };
  const eight = [0, 0, 128, 63, 0, 0, 0, 192];

  it("accepts the well-formed baseline", () => {
    expect(decodeSafetensors(rawFile(good, eight)).tensors.get("a")?.data).toEqual(
      Float32Array.from([1, -2]),
    );
  });

  it("bad header length", () => {
    expect(refusal(new Uint8Array(5))).toMatch(/too short/);
    expect(refusal(rawFile(good, eight, 10_000))).toMatch(/bad header length 10000/);
    const huge = rawFile(good, eight);
    new DataView(huge.buffer).setBigUint64(0, 2n ** 63n, true);
    expect(refusal(huge)).toMatch(/bad header length/);
  });

  it("header that is not a JSON object", () => {
    expect(refusal(rawFile("[1, 2]"))).toMatch(/does not start with '\{'/);
    expect(refusal(rawFile('{"a": '))).toMatch(/not valid JSON/);
    const invalidUtf8 = rawFile("{}");
    invalidUtf8[9] = 0xff;
    expect(refusal(invalidUtf8)).toMatch(/UTF-8/);
  });

  it("overlapping, out-of-range or gapped offsets", () => {
    expect(
      refusal(
        rawFile(
          {
            a: { dtype: "F32", shape: [2], data_offsets: [0, 8] },
            b: { dtype: "F32", shape: [1], data_offsets: [4, 8] },
          },
          eight,
        ),
      ),
    ).toMatch(/overlaps/);
    expect(
      refusal(rawFile({ a: { dtype: "F32", shape: [2], data_offsets: [4, 12] } }, eight)),
    ).toMatch(/outside the 8-byte data/);
    expect(
      refusal(rawFile({ a: { dtype: "F32", shape: [1], data_offsets: [4, 8] } }, eight)),
    ).toMatch(/bytes 0\.\.4 of the data belong to no tensor/);
    expect(
      refusal(rawFile({ a: { dtype: "F32", shape: [1], data_offsets: [0, 4] } }, eight)),
    ).toMatch(/bytes 4\.\.8/);
    expect(
      refusal(rawFile({ a: { dtype: "F32", shape: [3], data_offsets: [0, 8] } }, eight)),
    ).toMatch(/shape \[3\]/);
    expect(
      refusal(rawFile({ a: { dtype: "F32", shape: [2], data_offsets: [8, 0] } }, eight)),
    ).toMatch(/data_offsets \[8, 0\]/);
    expect(refusal(rawFile({ a: { dtype: "F32", shape: [2], data_offsets: [0] } }, eight))).toMatch(
      /bad data_offsets/,
    );
    expect(
      refusal(rawFile({ a: { dtype: "F32", shape: [-2], data_offsets: [0, 8] } }, eight)),
    ).toMatch(/bad shape/);
  });

  it("unknown or unsupported dtype", () => {
    expect(
      refusal(rawFile({ a: { dtype: "Q7", shape: [2], data_offsets: [0, 8] } }, eight)),
    ).toMatch(/unknown dtype "Q7" for tensor "a"/);
    expect(
      refusal(rawFile({ a: { dtype: "BF16", shape: [4], data_offsets: [0, 8] } }, eight)),
    ).toMatch(/unsupported dtype "BF16"/);
  });

  it("non-string metadata and unknown fields", () => {
    expect(refusal(rawFile({ __metadata__: { step: 3 }, ...good }, eight))).toMatch(
      /metadata "step" is not a string/,
    );
    expect(refusal(rawFile({ __metadata__: ["x"], ...good }, eight))).toMatch(
      /__metadata__ is not an object/,
    );
    expect(
      refusal(rawFile({ a: { dtype: "F32", shape: [2], data_offsets: [0, 8], extra: 1 } }, eight)),
    ).toMatch(/unknown field "extra"/);
  });

  it("names the path when reading a file", async () => {
    const path = join(dir, "bad.safetensors");
    await writeSafetensors(path, new Map());
    const { writeFileSync } = await import("node:fs");
    writeFileSync(path, rawFile({ a: { dtype: "Q7", shape: [2], data_offsets: [0, 8] } }, eight));
    await expect(readSafetensors(path)).rejects.toThrow(`safetensors: ${path}: unknown dtype`);
  });
});

describe("policy files", () => {
  const model = createPolicyModel({
    env: "somewhere",
    envVersion: "1.2.0",
    seed: 42,
    features: { dim: 512 },
    hidden: 8,
    valueHidden: 4,
  });
  model.provenance.step = 17;

  it("stores the weights as named F32 matrices with the documented metadata", () => {
    const { tensors, metadata } = decodeSafetensors(encodePolicy(model));
    expect([...tensors.keys()].sort()).toEqual([...PARAM_NAMES].sort());
    expect(tensors.get("policy.w1")?.shape).toEqual([512, 8]);
    expect(tensors.get("value.w1")?.shape).toEqual([512, 4]);
    expect(metadata.architecture).toBe(ARCHITECTURE);
    expect(JSON.parse(metadata.features as string)).toEqual(model.features);
    expect(JSON.parse(metadata.network as string)).toEqual({
      inputDim: 512,
      hidden: 8,
      valueHidden: 4,
    });
    expect(metadata).toMatchObject({
      env: "somewhere",
      env_version: "1.2.0",
      seed: "42",
      step: "17",
    });
  });

  it("round-trips through a file, bit for bit", async () => {
    const path = join(dir, "policy.safetensors");
    await savePolicy(path, model);
    const back = await loadPolicy(path);
    expect(back.provenance).toEqual(model.provenance);
    expect(back.features).toEqual(model.features);
    expect(back.network).toEqual(model.network);
    for (const name of PARAM_NAMES) {
      expect((back.params.get(name) as Tensor).data).toEqual(
        (model.params.get(name) as Tensor).data,
      );
    }
    expect(readFileSync(path)).toEqual(Buffer.from(encodePolicy(model)));
  });

  it("same seed → the same file", () => {
    const again = createPolicyModel({
      env: "somewhere",
      envVersion: "1.2.0",
      seed: 42,
      features: { dim: 512 },
      hidden: 8,
      valueHidden: 4,
    });
    again.provenance.step = 17;
    expect(encodePolicy(again)).toEqual(encodePolicy(model));
  });

  it("refuses files that are not usable policies", () => {
    const { tensors, metadata } = decodeSafetensors(encodePolicy(model));
    const bad = (t: Map<string, Tensor>, m: Record<string, string>) => () =>
      decodePolicy(encodeSafetensors(t, m));
    expect(bad(tensors, { ...metadata, architecture: "other" })).toThrow(/architecture "other"/);
    const { seed: _seed, ...noSeed } = metadata;
    expect(bad(tensors, noSeed)).toThrow(/metadata has no "seed"/);
    expect(bad(tensors, { ...metadata, features: "{" })).toThrow(/"features" is not JSON/);
    const missing = new Map(tensors);
    missing.delete("value.b2");
    expect(bad(missing, metadata)).toThrow(/missing tensor "value.b2"/);
    const reshaped = new Map(tensors);
    reshaped.set("policy.b1", { shape: [2, 4], data: new Float32Array(8) });
    expect(bad(reshaped, metadata)).toThrow(/"policy.b1" has shape \[2,4\], expected \[8\]/);
    const wrongDim = { ...metadata, features: JSON.stringify({ ...model.features, dim: 256 }) };
    expect(bad(tensors, wrongDim)).toThrow(/differs from the features' dim 256/);
  });
});
