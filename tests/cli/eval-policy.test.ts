/**
 * `clade eval --agent policy:FILE`: a policy file (safetensors, src/improve/rl/policy) plays its
 * environment greedily, one agent per episode, and the run records the file's path, sha256 and
 * step, so a changed file cannot resume it. Refused in one line with exit code 2, writing
 * nothing: a policy trained on another environment or version (both named), a file that is not
 * a policy (the safetensors error), a missing file, and --model beside a policy. No training
 * here: the weights are a fresh random initialisation.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findEnv } from "../../src/env/registry.js";
import { createPolicyModel, savePolicy } from "../../src/improve/rl/policy/model.js";
import { RunStore } from "../../src/store/run-store.js";
import { runCli } from "../fixtures/cli.js";

const MAZE = findEnv("maze").info;
let dir: string;

async function writePolicy(name: string, env: string, envVersion: string, step = 0) {
  const model = createPolicyModel({
    env,
    envVersion,
    seed: 7,
    features: { dim: 1024 },
    hidden: 16,
    valueHidden: 4,
  });
  model.provenance.step = step;
  const path = join(dir, name);
  await savePolicy(path, model);
  return path;
}

const evalArgs = (agent: string, db: string, ...more: string[]) => [
  ...["eval", "--env", "maze", "--agent", agent, "--tasks", "0-3", "--max-turns", "8"],
  ...["--db", db, ...more],
];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-eval-policy-"));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("clade eval --agent policy:FILE", () => {
  it("plays every episode and records the file's path, sha256 and step", async () => {
    const path = await writePolicy("maze.safetensors", "maze", MAZE.version, 12);
    const db = join(dir, "runs.db");
    const result = await runCli(...evalArgs(`policy:${path}`, db, "--run-id", "p1", "--json"));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toMatchObject({ runId: "p1", agent: "policy", model: null, exitCode: 0 });
    expect(out.metrics).toMatchObject({ episodes: 4, finished: 4, errors: 0 });
    const store = RunStore.open(db, { readonly: true });
    const run = store.getRun("p1");
    const episodes = store.episodes("p1");
    store.close();
    const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
    expect(run?.config.policy).toEqual({ path, sha256, step: 12 });
    expect(episodes.every((e) => e.turns > 0 && e.error === null)).toBe(true);

    // Greedy: the same policy plays the same episodes. A text report names the agent.
    const again = await runCli(...evalArgs(`policy:${path}`, join(dir, "again.db"), "--json"));
    expect(JSON.parse(again.stdout).metrics).toEqual(out.metrics);
    const text = await runCli(...evalArgs(`policy:${path}`, join(dir, "text.db")));
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^run maze-policy-\S+: maze v1\.1\.0, agent policy\n/);

    // Another file under the same run id is another configuration.
    await writePolicy("maze.safetensors", "maze", MAZE.version, 13);
    const resumed = await runCli(...evalArgs(`policy:${path}`, db, "--run-id", "p1"));
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toMatch(/run "p1" already exists with a different configuration/);
  }, 60_000);

  it("in clade.config's evals, a relative policy path is taken from the config's folder", async () => {
    await writePolicy("evals.safetensors", "maze", MAZE.version);
    const config = join(dir, "clade.config.json");
    const agent = "policy:./evals.safetensors";
    writeFileSync(config, JSON.stringify({ evals: { p: { env: "maze", agent, tasks: "0-1" } } }));
    const db = join(dir, "evals.db");
    const result = await runCli("eval", "p", "--config", config, "--db", db, "--json");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).runs[0]).toMatchObject({
      runId: "p-maze-policy",
      agent: "policy",
      metrics: { finished: 2, errors: 0 },
    });
  });

  it("refuses a policy trained on another environment or version, naming both", async () => {
    const db = join(dir, "mismatch.db");
    const wordle = await writePolicy("wordle.safetensors", "wordle", "1.0.0");
    const other = await runCli(...evalArgs(`policy:${wordle}`, db));
    expect(other.code).toBe(2);
    expect(other.stdout).toBe("");
    expect(other.stderr).toBe(
      `clade: error: policy file ${wordle} was trained on wordle v1.0.0, but --env is maze ` +
        `v${MAZE.version}: evaluate a policy on the environment and version it was trained on\n`,
    );
    const old = await writePolicy("old.safetensors", "maze", "0.9.0");
    const version = await runCli(...evalArgs(`policy:${old}`, db, "--json"));
    expect(version.code).toBe(2);
    const { error } = JSON.parse(version.stderr);
    expect(error).toMatchObject({ kind: "usage", name: "UserModuleError" });
    expect(error.message).toMatch(/trained on maze v0\.9\.0, but --env is maze v1\.1\.0/);
    expect(existsSync(db)).toBe(false);
  });

  it("refuses a file that is not a policy with the safetensors error, in one line", async () => {
    const db = join(dir, "corrupt.db");
    const corrupt = join(dir, "corrupt.safetensors");
    writeFileSync(corrupt, Buffer.from("not a safetensors file at all"));
    const result = await runCli(...evalArgs(`policy:${corrupt}`, db));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^clade: error: safetensors: ${corrupt}: bad header length \\d+: .*\\n$`),
    );
    // A valid safetensors file whose metadata is not a policy's.
    const valid = readFileSync(await writePolicy("v.safetensors", "maze", MAZE.version));
    const headerLength = Number(valid.readBigUInt64LE(0));
    const header = valid.subarray(8, 8 + headerLength).toString("utf8");
    const renamed = header.replace('"architecture":"', '"architecturf":"');
    const foreign = join(dir, "foreign.safetensors");
    writeFileSync(
      foreign,
      Buffer.concat([valid.subarray(0, 8), Buffer.from(renamed), valid.subarray(8 + headerLength)]),
    );
    const noPolicy = await runCli(...evalArgs(`policy:${foreign}`, db));
    expect(noPolicy.code).toBe(2);
    expect(noPolicy.stderr).toBe(
      `clade: error: policy file ${foreign}: metadata has no "architecture"\n`,
    );
    const missing = await runCli(...evalArgs(`policy:${join(dir, "none.safetensors")}`, db));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^clade: error: policy file .*none\.safetensors not found/);
    const empty = await runCli(...evalArgs("policy:", db));
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/give the policy file, as policy:PATH/);
    expect(existsSync(db)).toBe(false);
  });

  it("refuses --model beside a policy", async () => {
    const path = await writePolicy("m.safetensors", "maze", MAZE.version);
    const db = join(dir, "model.db");
    const result = await runCli(
      ...evalArgs(`policy:${path}`, db, "--model", "openai-compatible:http://127.0.0.1:9/v1#m"),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^clade: error: --model does not apply to a policy/);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(existsSync(db)).toBe(false);
  });
});
