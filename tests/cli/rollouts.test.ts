/**
 * `clade rollouts` as a user runs it: a policy file plays groups of samples, and the file it
 * writes parses back (src/improve/rl/export) with one trajectory per sample and the estimator's
 * advantages on the assistant turns; the same seed writes the same file. Bad input is one line
 * and exit 2, the collection never starts and nothing is written (an existing file is left as it
 * was). The policy is a fresh random initialisation: no training is needed to play it.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findEnv } from "../../src/env/registry.js";
import { parseRolloutAgentTraj, parseRolloutChat } from "../../src/improve/rl/export/index.js";
import { createPolicyModel, savePolicy } from "../../src/improve/rl/policy/model.js";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/index.js";
import { runCli } from "../fixtures/cli.js";

let dir: string;
let mazePolicy: string;
let gridworldPolicy: string;

async function writePolicy(env: string): Promise<string> {
  const model = createPolicyModel({
    env,
    envVersion: findEnv(env).info.version,
    seed: 7,
    features: { dim: 1024 },
    hidden: 16,
    valueHidden: 4,
  });
  model.provenance.step = 3;
  const path = join(dir, `${env}.safetensors`);
  await savePolicy(path, model);
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-rollouts-"));
  mazePolicy = await writePolicy("maze");
  gridworldPolicy = await writePolicy("gridworld");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 4 tasks × 3 samples, 6 turns at most: quick. */
const SMALL = ["--env", "maze", "--tasks", "0-3", "--group", "3", "--horizon", "6"];

describe("clade rollouts", () => {
  it("chat: one line per sample, masks and GRPO advantages on the assistant turns", async () => {
    const out = join(dir, "grpo.jsonl");
    const args = [...SMALL, "--policy", mazePolicy, "--algo", "grpo", "--format", "chat"];
    const result = await runCli("rollouts", ...args, "--out", out, "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({
      schema: "clade.rollouts/1",
      env: "maze",
      policy: { kind: "embedded", path: mazePolicy, step: 3 },
      algo: "grpo",
      estimator: "grpo",
      tasks: "0-3",
      groups: 4,
      groupSize: 3,
      horizon: 6,
      samples: 12,
      errored: 0,
      excluded: 0,
      exported: 12,
      baselines: 0,
      format: "chat",
      out,
    });
    const lines = parseRolloutChat(readFileSync(out, "utf8"));
    expect(lines).toHaveLength(12);
    expect(lines.map((l) => [l.task, l.group, l.sample])).toEqual(
      [0, 1, 2, 3].flatMap((task) => [0, 1, 2].map((sample) => [task, task, sample])),
    );
    for (const line of lines) {
      expect(line).toMatchObject({ env: "maze", estimator: "grpo" });
      const assistants = line.messages.filter((m) => m.role === "assistant");
      expect(assistants.length).toBeGreaterThan(0);
      expect(assistants.length).toBeLessThanOrEqual(6);
      expect(assistants.every((m) => m.mask === 1 && typeof m.logprob === "number")).toBe(true);
      // GRPO: one advantage for the whole sample.
      expect(new Set(assistants.map((m) => m.advantage)).size).toBe(1);
    }
    // No temporary file is left beside it.
    expect(readdirSync(dir).filter((f) => f.includes(".partial-"))).toEqual([]);

    // The same seed plays the same samples.
    const again = join(dir, "grpo-again.jsonl");
    expect((await runCli("rollouts", ...args, "--out", again)).code).toBe(0);
    expect(readFileSync(again, "utf8")).toBe(readFileSync(out, "utf8"));
  }, 60_000);

  it("agenttraj: one item per sample, AgentGym's item ids; ppo uses the value head", async () => {
    const out = join(dir, "ppo.json");
    const result = await runCli(
      "rollouts",
      ...[...SMALL, "--policy", mazePolicy, "--algo", "ppo", "--format", "agenttraj"],
      ...["--out", out],
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^rollouts: maze v\S+, policy .*\(step 3\), ppo \(estimator gae\)/,
    );
    expect(result.stdout).toMatch(
      /groups\s+samples\s+errored\s+excluded\s+exported\s+mean reward\s+success rate/,
    );
    expect(result.stdout).toMatch(new RegExp(`wrote ${out} \\(agenttraj, 12 trajectories\\)`));
    const items = parseRolloutAgentTraj(readFileSync(out, "utf8"));
    expect(items).toHaveLength(12);
    expect(new Set(items.map((i) => i.item_id))).toEqual(
      new Set(["lmrlgym_maze_0", "lmrlgym_maze_1", "lmrlgym_maze_2", "lmrlgym_maze_3"]),
    );
    const perTurn = items.map((item) => {
      expect(item.estimator).toBe("gae");
      const trained = item.conversations.filter((c) => c.loss === true);
      expect(trained.every((c) => c.from === "gpt" && Number.isFinite(c.advantage))).toBe(true);
      return new Set(trained.map((c) => c.advantage)).size;
    });
    // GAE's advantages, from the value head's V(s), differ from turn to turn.
    expect(perTurn.some((distinct) => distinct > 1)).toBe(true);
  }, 60_000);

  it("remax: a greedy baseline per group, not exported", async () => {
    const out = join(dir, "remax.jsonl");
    const result = await runCli(
      "rollouts",
      ...[...SMALL, "--policy", mazePolicy, "--algo", "remax", "--format", "chat"],
      ...["--out", out, "--json"],
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ samples: 12, exported: 12, baselines: 4 });
    expect(parseRolloutChat(readFileSync(out, "utf8"))).toHaveLength(12);
  }, 60_000);

  it.each([
    [
      "a policy trained on another environment",
      ["--policy", "GRIDWORLD"],
      /^clade: error: policy file \S+ was trained on gridworld v\S+, but --env is maze v\S+/,
    ],
    ["no --policy", [], /^clade: error: give one of --policy FILE/],
    [
      "a missing policy file",
      ["--policy", "nope.safetensors"],
      /policy file nope\.safetensors not found/,
    ],
    [
      "an unknown format",
      ["--policy", "MAZE", "--format", "csv"],
      /--format must be "agenttraj" or "chat"/,
    ],
    [
      "an unknown algorithm",
      ["--policy", "MAZE", "--algo", "a2c"],
      /--algo must be one of grpo, ppo/,
    ],
    [
      "grpo with groups of one",
      ["--policy", "MAZE", "--algo", "grpo", "--group", "1"],
      /--group must be ≥ 2/,
    ],
    [
      "a task that does not exist",
      ["--policy", "MAZE", "--tasks", "0-900"],
      /task 500 does not exist in maze/,
    ],
    [
      "--item-ids with chat",
      ["--policy", "MAZE", "--item-ids", "clade"],
      /--item-ids applies to --format agenttraj/,
    ],
    ["a bad horizon", ["--policy", "MAZE", "--horizon", "0"], /--horizon must be at least 1/],
  ])("%s: one line, exit 2, the file untouched", async (_, extra, message) => {
    const out = join(dir, "kept.jsonl");
    writeFileSync(out, "before\n");
    const args = extra.map((a) =>
      a === "MAZE" ? mazePolicy : a === "GRIDWORLD" ? gridworldPolicy : a,
    );
    const withFormat = args.includes("--format") ? args : [...args, "--format", "chat"];
    const result = await runCli(
      "rollouts",
      ...["--env", "maze", "--tasks", "0-1", "--group", "2", "--horizon", "3"],
      ...withFormat,
      ...["--out", out],
    );
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(readFileSync(out, "utf8")).toBe("before\n");
  });

  it("an --out it cannot write: one line, exit 2, nothing left behind", async () => {
    const folder = join(dir, "a-folder");
    mkdirSync(folder);
    const common = [...SMALL, "--policy", mazePolicy, "--format", "chat"];
    const intoFolder = await runCli("rollouts", ...common, "--out", folder);
    expect(intoFolder.code).toBe(2);
    expect(intoFolder.stderr).toMatch(/--out \S+ is a directory; give a file path/);

    const missing = join(dir, "no-such-dir", "out.jsonl");
    const result = await runCli("rollouts", ...common, "--out", missing);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^clade: error: cannot write \S+: ENOENT/);
    expect(existsSync(join(dir, "no-such-dir"))).toBe(false);
  }, 60_000);

  it("--json errors are one clade.error/1 line", async () => {
    const result = await runCli(
      ...["rollouts", "--env", "maze", "--format", "chat", "--out", join(dir, "x.jsonl"), "--json"],
    );
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(JSON.parse(result.stderr)).toMatchObject({
      schema: "clade.error/1",
      error: { kind: "usage", name: "UsageError" },
    });
  });
});

describe("clade rollouts --model", () => {
  let server: FakeModelServer;
  beforeAll(async () => {
    // Always moves right, with the fake server's log-probabilities.
    server = await startFakeModelServer({
      rule: () => ({ content: "Thought:\nGo right.\n\nAction:\nmove right" }),
    });
  });
  afterAll(() => server.close());

  it("an LLM plays the samples: the reply and its token log-probabilities reach the file", async () => {
    const out = join(dir, "llm.jsonl");
    const model = `openai-compatible:${server.openaiBaseUrl}#m`;
    const result = await runCli(
      ...["rollouts", "--env", "maze", "--tasks", "0-1", "--group", "2", "--horizon", "3"],
      ...["--model", model, "--algo", "grpo", "--format", "chat", "--out", out, "--json"],
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.policy).toMatchObject({ kind: "model", temperature: 1 });
    expect(summary.exported).toBe(4);
    const lines = parseRolloutChat(readFileSync(out, "utf8"));
    expect(lines).toHaveLength(4);
    const assistant = lines[0]?.messages.filter((m) => m.role === "assistant") ?? [];
    expect(assistant.length).toBeGreaterThan(0);
    expect(assistant[0]?.content).toContain("Thought:");
    expect((assistant[0] as { token_logprobs?: number[] }).token_logprobs?.length).toBeGreaterThan(
      0,
    );
    // Every request asked for log-probabilities.
    expect(server.requests.every((r) => (r.body as { logprobs?: boolean }).logprobs === true)).toBe(
      true,
    );
  });

  it("a server that gives no log-probabilities errors every sample, which are not written", async () => {
    server.setRule(() => ({ content: "Action:\nmove up", logprobs: null }));
    const out = join(dir, "nolp.jsonl");
    const model = `openai-compatible:${server.openaiBaseUrl}#m`;
    const result = await runCli(
      ...["rollouts", "--env", "maze", "--tasks", "0", "--group", "2", "--horizon", "2"],
      ...["--model", model, "--algo", "grpo", "--format", "chat", "--out", out, "--json"],
    );
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ errored: 2, exported: 0 });
    expect(summary.errorMessages.join(" ")).toMatch(/logprob/i);
  });

  it("refuses --policy with --model, and --temperature without --model", async () => {
    const both = await runCli(
      ...["rollouts", "--env", "maze", "--policy", mazePolicy, "--model", "openai:x"],
      ...["--format", "chat", "--out", join(dir, "x.jsonl")],
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/one of --policy FILE .* or --model SPEC/);
    const temp = await runCli(
      ...["rollouts", "--env", "maze", "--policy", mazePolicy, "--temperature", "0.5"],
      ...["--format", "chat", "--out", join(dir, "x.jsonl")],
    );
    expect(temp.code).toBe(2);
    expect(temp.stderr).toMatch(/--temperature and --token-ids apply to --model/);
  });
});
