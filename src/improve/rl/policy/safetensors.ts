/**
 * The safetensors format (Hugging Face), read and written by hand for F32 and F64 tensors:
 *
 *   bytes 0..8       N, the header's length, an unsigned 64-bit little-endian integer
 *   bytes 8..8+N     the header: UTF-8 JSON, an object starting with "{", padded at the end with
 *                    spaces so that 8 + N is a multiple of 8
 *   bytes 8+N..      the data buffer: every tensor's elements, row-major, little-endian,
 *                    back to back with no holes
 *
 * The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
 * relative to the data buffer) and may hold "__metadata__", an object of string values only.
 * The writer emits compact JSON, "__metadata__" first, then the tensors in data order: larger
 * element types first, then by name (all-F32 files are in name order), as the reference writer
 * does. The reader refuses anything else with one line naming the problem.
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import type { FloatArray, Tensor } from "./tensor.js";

/** The reference implementation's limit on the header's size. */
export const MAX_HEADER_BYTES = 100 * 1024 * 1024;
const METADATA_KEY = "__metadata__";
/** Element types this reader and writer handle, with their sizes in bytes. */
const SUPPORTED: Readonly<Record<string, number>> = { F64: 8, F32: 4 };
/** The other element types of the format: valid, but not read here. */
const OTHER_DTYPES = new Set([
  "BOOL",
  "U8",
  "I8",
  "F8_E5M2",
  "F8_E4M3",
  "F8_E8M0",
  "F4",
  "F6_E2M3",
  "F6_E3M2",
  "I16",
  "U16",
  "F16",
  "BF16",
  "I32",
  "U32",
  "I64",
  "U64",
  "C64",
]);
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class SafetensorsError extends Error {
  override name = "SafetensorsError";
}

export interface SafetensorsContent {
  tensors: Map<string, Tensor>;
  metadata: Record<string, string>;
}

function dtypeOf(data: FloatArray): "F32" | "F64" {
  return data instanceof Float64Array ? "F64" : "F32";
}

/** The file's bytes for these tensors and metadata. */
export function encodeSafetensors(
  tensors: ReadonlyMap<string, Tensor>,
  metadata: Readonly<Record<string, string>> = {},
): Uint8Array {
  const names = [...tensors.keys()].sort((a, b) => {
    const size = (n: string) => SUPPORTED[dtypeOf((tensors.get(n) as Tensor).data)] as number;
    return size(b) - size(a) || (a < b ? -1 : a > b ? 1 : 0);
  });
  const header: Record<string, unknown> = {};
  const metaKeys = Object.keys(metadata);
  if (metaKeys.length > 0) {
    const meta: Record<string, string> = {};
    for (const key of metaKeys.sort()) {
      const value = metadata[key];
      if (typeof value !== "string") {
        throw new SafetensorsError(`safetensors: metadata "${key}" is not a string`);
      }
      meta[key] = value;
    }
    header[METADATA_KEY] = meta;
  }
  let offset = 0;
  for (const name of names) {
    if (name === METADATA_KEY)
      throw new SafetensorsError(`safetensors: a tensor cannot be named ${METADATA_KEY}`);
    const t = tensors.get(name) as Tensor;
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) {
      throw new SafetensorsError(
        `safetensors: tensor "${name}" has shape [${t.shape}] but ${t.data.length} elements`,
      );
    }
    const dtype = dtypeOf(t.data);
    const end = offset + count * (SUPPORTED[dtype] as number);
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, end] };
    offset = end;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLength = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLength + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerLength), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLength);
  let at = 8 + headerLength;
  for (const name of names) {
    const data = (tensors.get(name) as Tensor).data;
    if (LITTLE_ENDIAN_HOST) {
      out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    } else if (data instanceof Float64Array) {
      for (let i = 0; i < data.length; i++) view.setFloat64(at + 8 * i, data[i] as number, true);
    } else {
      for (let i = 0; i < data.length; i++) view.setFloat32(at + 4 * i, data[i] as number, true);
    }
    at += data.byteLength;
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Tensors and metadata from a file's bytes; throws SafetensorsError naming the first problem. */
export function decodeSafetensors(bytes: Uint8Array): SafetensorsContent {
  const fail = (why: string): never => {
    throw new SafetensorsError(`safetensors: ${why}`);
  };
  if (bytes.length < 8)
    fail(`file is ${bytes.length} bytes, too short for the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const declared = view.getBigUint64(0, true);
  if (declared > BigInt(Math.min(MAX_HEADER_BYTES, bytes.length - 8))) {
    fail(
      `bad header length ${declared}: the file has ${bytes.length - 8} bytes after the length ` +
        `(at most ${MAX_HEADER_BYTES} allowed)`,
    );
  }
  const headerLength = Number(declared);
  let text = "";
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + headerLength));
  } catch {
    fail("header is not valid UTF-8");
  }
  if (!text.startsWith("{")) fail("header does not start with '{'");
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (error) {
    fail(`header is not valid JSON (${(error as Error).message})`);
  }
  if (!isPlainObject(header)) fail("header is not a JSON object");
  const entries = header as Record<string, unknown>;

  const metadata: Record<string, string> = {};
  const rawMeta = entries[METADATA_KEY];
  if (rawMeta !== undefined && rawMeta !== null) {
    if (!isPlainObject(rawMeta)) fail(`${METADATA_KEY} is not an object`);
    for (const [key, value] of Object.entries(rawMeta as Record<string, unknown>)) {
      if (typeof value !== "string")
        fail(`metadata "${key}" is not a string (${JSON.stringify(value)})`);
      metadata[key] = value as string;
    }
  }

  const dataStart = 8 + headerLength;
  const bufferLength = bytes.length - dataStart;
  const ranges: { name: string; begin: number; end: number }[] = [];
  const tensors = new Map<string, Tensor>();
  for (const [name, raw] of Object.entries(entries)) {
    if (name === METADATA_KEY) continue;
    if (!isPlainObject(raw)) fail(`tensor "${name}" is not an object`);
    const entry = raw as Record<string, unknown>;
    const extra = Object.keys(entry).filter((k) => !["dtype", "shape", "data_offsets"].includes(k));
    if (extra.length > 0) fail(`tensor "${name}" has unknown field "${extra[0]}"`);
    const { dtype, shape, data_offsets: offsets } = entry;
    if (typeof dtype !== "string") fail(`tensor "${name}" has no dtype`);
    const size = SUPPORTED[dtype as string];
    if (size === undefined) {
      const known = OTHER_DTYPES.has(dtype as string) ? "unsupported" : "unknown";
      fail(
        `${known} dtype ${JSON.stringify(dtype)} for tensor "${name}" (this reader handles F32 and F64)`,
      );
    }
    if (!Array.isArray(shape) || !shape.every(isCount)) {
      fail(`tensor "${name}" has a bad shape ${JSON.stringify(shape)}`);
    }
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) {
      fail(`tensor "${name}" has bad data_offsets ${JSON.stringify(offsets)}`);
    }
    const [begin, end] = offsets as [number, number];
    if (begin > end || end > bufferLength) {
      fail(
        `tensor "${name}" has data_offsets [${begin}, ${end}] outside the ${bufferLength}-byte data`,
      );
    }
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    if (!Number.isSafeInteger(count) || count * (size as number) !== end - begin) {
      fail(
        `tensor "${name}" has shape [${shape}] (${dtype}) but data_offsets [${begin}, ${end}] ` +
          `hold ${end - begin} bytes`,
      );
    }
    ranges.push({ name, begin, end });
    const data = size === 8 ? new Float64Array(count) : new Float32Array(count);
    const at = dataStart + begin;
    if (LITTLE_ENDIAN_HOST) {
      new Uint8Array(data.buffer).set(bytes.subarray(at, at + (end - begin)));
    } else if (data instanceof Float64Array) {
      for (let i = 0; i < count; i++) data[i] = view.getFloat64(at + 8 * i, true);
    } else {
      for (let i = 0; i < count; i++) data[i] = view.getFloat32(at + 4 * i, true);
    }
    tensors.set(name, { shape: (shape as number[]).slice(), data });
  }

  // The data buffer must be covered exactly: no overlaps, no holes, nothing after the end.
  ranges.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let covered = 0;
  for (const range of ranges) {
    if (range.begin < covered) fail(`tensor "${range.name}" overlaps another tensor's data`);
    if (range.begin > covered)
      fail(`bytes ${covered}..${range.begin} of the data belong to no tensor`);
    covered = range.end;
  }
  if (covered !== bufferLength)
    fail(`bytes ${covered}..${bufferLength} of the data belong to no tensor`);
  return { tensors, metadata };
}

/** Writes the file atomically (a temporary file renamed over the path). */
export async function writeSafetensors(
  path: string,
  tensors: ReadonlyMap<string, Tensor>,
  metadata: Readonly<Record<string, string>> = {},
): Promise<void> {
  const bytes = encodeSafetensors(tensors, metadata);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, path);
}

/** Reads a file; errors name the path. */
export async function readSafetensors(path: string): Promise<SafetensorsContent> {
  const bytes = await readFile(path);
  try {
    return decodeSafetensors(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    if (error instanceof SafetensorsError) {
      throw new SafetensorsError(error.message.replace(/^safetensors: /, `safetensors: ${path}: `));
    }
    throw error;
  }
}
