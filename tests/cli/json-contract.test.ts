/**
 * The `--json` contract (docs/cli-json.md): every JSON-emitting command prints one line holding one
 * object whose `schema` is documented, whose fields are the documented ones, and every schema the
 * document lists is emitted by a test here; with --json, errors are one clade.error/1 line on
 * stderr. Also: the CLI's light commands do not load heavy modules (the startup-time contract,
 * measured by bench/startup.ts).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { BUILTIN_ENV_INFOS } from "../../src/env/infos.js";
import { createPolicyModel, savePolicy } from "../../src/improve/rl/policy/index.js";
import { RunStore } from "../../src/store/run-store.js";
import { TrainingStore } from "../../src/store/training-log.js";
import { startFakeModelServer } from "../../src/testing/index.js";
import { type CliResult, runCli } from "../fixtures/cli.js";
import {
  disagreeing,
  JUDGES,
  judgeRule,
  writeJudgeConfig,
  writeTruth,
} from "../fixtures/goals/cli-judges.js";

// The demo over maze alone: its output has the same shape and the test stays quick. findEnv
// (used by eval) still sees every environment.
vi.mock(import("../../src/env/registry.js"), async (importOriginal) => {
  const actual = await importOriginal();
  return { ...actual, BUILTIN_ENVS: actual.BUILTIN_ENVS.filter((e) => e.info.name === "maze") };
});

const ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");
const cli = runCli;

interface Field {
  path: string;
  optional: boolean;
}

/** The schema sections of docs/cli-json.md: id → documented fields (the table's first column). */
function documentedSchemas(markdown: string): Map<string, Field[]> {
  const schemas = new Map<string, Field[]>();
  for (const chunk of markdown.split(/^## /m).slice(1)) {
    const id = /^`(clade\.[a-z-]+\/\d+)`/.exec(chunk)?.[1];
    if (!id) continue;
    const fields = [...chunk.matchAll(/^\| `([^`]+)` \| ([^|]+) \|/gm)].map((m) => ({
      path: m[1] as string,
      optional: /optional/.test(m[2] as string),
    }));
    schemas.set(id, fields);
  }
  return schemas;
}

const DOC = documentedSchemas(readFileSync(join(ROOT, "docs", "cli-json.md"), "utf8"));
const emitted = new Set<string>();

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Field paths of an object two levels deep: `a`, `a.b` (object), `a[].b` (array of objects). */
function paths(value: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    out.push(key);
    if (isObject(child)) for (const sub of Object.keys(child)) out.push(`${key}.${sub}`);
    if (Array.isArray(child)) {
      for (const item of child) {
        if (isObject(item)) for (const sub of Object.keys(item)) out.push(`${key}[].${sub}`);
      }
    }
  }
  return [...new Set(out)];
}

/**
 * Checks one JSON object against its section of the document: the schema is documented, every
 * field it has is documented (nested fields where the section lists any of that parent's), and
 * every field not marked optional is there.
 */
function checkAgainstDoc(value: unknown, schema: string): Record<string, unknown> {
  expect(isObject(value)).toBe(true);
  const object = value as Record<string, unknown>;
  expect(object.schema).toBe(schema);
  const fields = DOC.get(schema);
  expect(fields, `${schema} is not documented in docs/cli-json.md`).toBeDefined();
  const documented = new Set(fields?.map((f) => f.path));
  for (const path of paths(object)) {
    const parent = /^([^.[]+)(\[\])?\./.exec(path)?.[1];
    const detailed =
      parent === undefined ||
      [...documented].some((p) => p.startsWith(`${parent}.`) || p.startsWith(`${parent}[].`));
    if (detailed) expect(documented, `${schema}: field ${path} is not documented`).toContain(path);
  }
  for (const field of fields ?? []) {
    if (field.optional) continue;
    const [, parent, array, sub] = /^([^.[]+)(\[\])?(?:\.(.+))?$/.exec(field.path) ?? [];
    const where = `${schema}: documented field ${field.path} is missing`;
    if (sub === undefined) {
      expect(object, where).toHaveProperty([parent as string]);
    } else if (array) {
      for (const item of (object[parent as string] as unknown[]) ?? []) {
        expect(item, where).toHaveProperty([sub]);
      }
    } else if (isObject(object[parent as string])) {
      expect(object[parent as string], where).toHaveProperty([sub]);
    }
  }
  emitted.add(schema);
  return object;
}

/** A command's --json output: exit 0, one line, one object of the given schema. */
function expectJson(result: CliResult, schema: string): Record<string, unknown> {
  expect(result.stderr).not.toMatch(/clade\.error/);
  expect(result.code).toBe(0);
  expect(result.stdout.endsWith("\n")).toBe(true);
  expect(result.stdout.trimEnd().split("\n")).toHaveLength(1);
  return checkAgainstDoc(JSON.parse(result.stdout), schema);
}

/** An error under --json: nothing on stdout, one clade.error/1 line on stderr, the exit code. */
function expectJsonError(result: CliResult, name: RegExp, message: RegExp): void {
  expect(result.stdout).toBe("");
  expect(result.code).toBe(2);
  expect(result.stderr.endsWith("\n")).toBe(true);
  expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  const { error } = checkAgainstDoc(JSON.parse(result.stderr), "clade.error/1") as {
    error: { kind: string; name: string; message: string };
  };
  expect(error.kind).toBe("usage");
  expect(error.name).toMatch(name);
  expect(error.message).toMatch(message);
  expect(error.message).not.toMatch(/\n|^error: /);
}

let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-json-"));
  db = join(dir, "clade.db");
  for (const [id, agent, samples] of [
    ["ref", "reference", "1"],
    ["rnd", "random", "2"],
  ] as const) {
    const run = await cli(
      ...["eval", "--env", "maze", "--agent", agent, "--tasks", "0-2", "--samples", samples],
      ...["--max-turns", "5", "--run-id", id, "--db", db, "--json"],
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).schema).toMatch(/^clade\.eval\/1$/);
  }
});

describe("--json outputs follow docs/cli-json.md", () => {
  it("envs", async () => {
    const out = expectJson(await cli("envs", "--json"), "clade.envs/1");
    expect((out.envs as { name: string }[]).map((e) => e.name)).toEqual(
      BUILTIN_ENV_INFOS.map((info) => info.name),
    );
  });

  it("runs, also without a store", async () => {
    const out = expectJson(await cli("runs", "--db", db, "--json"), "clade.runs/1");
    expect((out.runs as { id: string }[]).map((r) => r.id)).toEqual(["ref", "rnd"]);
    const none = expectJson(
      await cli("runs", "--db", join(dir, "none.db"), "--json"),
      "clade.runs/1",
    );
    expect(none.runs).toEqual([]);
  });

  it("show RUN, with and without --episodes", async () => {
    const out = expectJson(await cli("show", "ref", "--db", db, "--json"), "clade.run/1");
    expect(out).not.toHaveProperty("episodes");
    const all = expectJson(
      await cli("show", "rnd", "--db", db, "--json", "--episodes"),
      "clade.run/1",
    );
    expect(all.episodes).toHaveLength(6);
  });

  it("show RUN --episode", async () => {
    const out = expectJson(
      await cli("show", "ref", "--episode", "1/0", "--db", db, "--json"),
      "clade.episode/1",
    );
    expect(out.episode).toMatchObject({ taskIndex: 1, sampleIndex: 0 });
  });

  it("compare", async () => {
    const out = expectJson(
      await cli("compare", "rnd", "ref", "--db", db, "--json"),
      "clade.compare/1",
    );
    expect(out.sharedTasks).toEqual([0, 1, 2]);
  });

  it("cost", async () => {
    const out = expectJson(await cli("cost", "ref", "--db", db, "--json"), "clade.cost/1");
    expect(out).toMatchObject({ run: "ref", usage: [] });
  });

  it("models, with a config and without one", async () => {
    const config = join(dir, "clade.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        models: {
          mini: { model: "openai:gpt-4o-mini" },
          local: { model: "openai-compatible:http://127.0.0.1:9/v1#m" },
        },
      }),
    );
    const out = expectJson(await cli("models", "--config", config, "--json"), "clade.models/1");
    expect(out.models).toHaveLength(2);
    expect(out.config).toBe(config);
  });

  it("view --bundle", async () => {
    const out = expectJson(
      await cli("view", "--db", db, "--bundle", join(dir, "bundle"), "--json"),
      "clade.bundle/1",
    );
    expect(out.index).toBe(join(dir, "bundle", "index.html"));
    expect((out.items as unknown[]).length).toBeGreaterThan(0);
  });

  it("demo (over maze alone here)", async () => {
    const out = expectJson(await cli("demo", "--json"), "clade.demo/1");
    expect(out.db).toBeNull();
    expect((out.runs as { agent: string }[]).map((r) => r.agent)).toEqual(["reference", "random"]);
  }, 120_000);

  it("evolve: a simulated comparison, and one stored search", async () => {
    const comparison = expectJson(
      await cli("evolve", "--simulate", "trap", "--seeds", "2", "--budget", "60", "--json"),
      "clade.evolve-simulation/1",
    );
    expect((comparison.methods as { method: string }[]).map((m) => m.method)).toEqual([
      "hgm",
      "dgm",
      "greedy",
      "random",
    ]);
    const stored = expectJson(
      await cli(
        ...["evolve", "--simulate", "trap", "--method", "dgm", "--budget", "60"],
        ...["--run-id", "ev", "--db", db, "--json"],
      ),
      "clade.evolve/1",
    );
    expect(stored).toMatchObject({ runId: "ev", method: "dgm", t: 60, resumed: false });
  });

  it("tree and best of a stored search", async () => {
    const tree = expectJson(await cli("tree", "ev", "--db", db, "--json"), "clade.tree/1");
    expect(tree).toMatchObject({ run: "ev", method: "dgm", t: 60 });
    const best = expectJson(await cli("best", "ev", "--db", db, "--json"), "clade.best/1");
    expect((best.best as { node: number }).node).toBe(tree.best);
  });

  it("train: a one-step run of the embedded policy", async () => {
    const out = expectJson(
      await cli(
        ...["train", "--env", "gridworld", "--steps", "1", "--group", "2", "--batch", "2"],
        ...["--schedule", "fixed:4", "--run-id", "tr1", "--db", db, "--json"],
      ),
      "clade.train/1",
    );
    expect(out).toMatchObject({ runId: "tr1", steps: 1, stopped: false });
  });

  it("qd and archive", async () => {
    const out = expectJson(
      await cli(
        ...["qd", "--tasks", "maze,gridworld", "--generations", "2", "--base-steps", "1"],
        ...["--expert-steps", "1", "--batch", "2", "--group", "2", "--search-tasks", "2"],
        ...["--test-tasks", "2", "--run-id", "q1", "--db", db, "--dir", join(dir, "q1"), "--json"],
      ),
      "clade.qd/1",
    );
    expect(out).toMatchObject({ runId: "q1", generations: 2, tasks: ["maze", "gridworld"] });
    const archive = expectJson(await cli("archive", "q1", "--db", db, "--json"), "clade.archive/1");
    expect(archive).toMatchObject({ runId: "q1", generation: 2, lastGeneration: 2 });
  }, 60_000);

  it("qd --agent-config: CycleQD over LLM agent configurations", async () => {
    const server = await startFakeModelServer({
      rule: () => ({ content: "Thought:\nLook around.\n\nAction:\nturn left" }),
    });
    try {
      const seed = join(dir, "seed-config.json");
      writeFileSync(seed, JSON.stringify({ parts: [{ name: "role", text: "Reach the goal." }] }));
      const model = `openai-compatible:${server.openaiBaseUrl}#m`;
      const out = expectJson(
        await cli(
          ...["qd", "--tasks", "maze,gridworld", "--agent-config", `gridworld=${seed}`],
          ...["--model", model, "--mutator-model", model, "--generations", "2"],
          ...["--search-tasks", "1", "--test-tasks", "1", "--max-turns", "2"],
          ...["--run-id", "qa", "--db", db, "--dir", join(dir, "qa"), "--json"],
        ),
        "clade.qd-agent/1",
      );
      expect(out).toMatchObject({ runId: "qa", generations: 2, tasks: ["maze", "gridworld"] });
      const archive = expectJson(
        await cli("archive", "qa", "--db", db, "--json"),
        "clade.archive/1",
      );
      expect(archive).toMatchObject({ runId: "qa", generation: 2 });
    } finally {
      await server.close();
    }
  }, 60_000);

  it("curves of a stored training run", async () => {
    const store = new TrainingStore(RunStore.open(db).db);
    store.beginRun("tr", { env: "maze", estimator: "grpo", seed: 0 });
    for (const step of [0, 1]) {
      store.appendStep("tr", {
        ...{ step, meanReward: step / 2, successRate: null, horizon: 5, entropy: 1.3, kl: 0 },
        ...{ clipFraction: 0, gradNorm: 0.5, envSteps: 40 * (step + 1), seconds: step + 1 },
        errors: 0,
      });
    }
    store.addCheckpoint("tr", {
      step: 1,
      path: join(dir, "tr.safetensors"),
      sha256: "a".repeat(64),
    });
    store.setStatus("tr", "complete");
    store.close();
    const out = expectJson(await cli("curves", "tr", "--db", db, "--json"), "clade.curves/1");
    expect(out).toMatchObject({ run: "tr", status: "complete", config: { estimator: "grpo" } });
    expect((out.steps as { step: number }[]).map((s) => s.step)).toEqual([0, 1]);
    expect(out.checkpoints).toHaveLength(1);
  });

  it("rollouts of an embedded policy", async () => {
    const info = BUILTIN_ENV_INFOS.find((i) => i.name === "maze");
    const model = createPolicyModel({
      ...{ env: "maze", envVersion: info?.version ?? "", seed: 7 },
      ...{ features: { dim: 1024 }, hidden: 16, valueHidden: 4 },
    });
    const policy = join(dir, "maze.safetensors");
    await savePolicy(policy, model);
    const out = expectJson(
      await cli(
        ...["rollouts", "--env", "maze", "--policy", policy, "--tasks", "0-1", "--group", "2"],
        ...["--horizon", "3", "--format", "chat", "--out", join(dir, "r.jsonl"), "--json"],
      ),
      "clade.rollouts/1",
    );
    expect(out).toMatchObject({ env: "maze" });
  });

  it("init-agent", async () => {
    const out = expectJson(
      await cli("init-agent", join(dir, "agent"), "--name", "a1", "--json"),
      "clade.init-agent/1",
    );
    expect(out).toMatchObject({ dir: join(dir, "agent"), name: "a1", entry: "src/agent.ts" });
  });

  it("evolve --agent: a search over an agent folder (budget 0: the root's evaluation only)", async () => {
    const server = await startFakeModelServer({
      rule: () => ({ content: "Thought:\nLook around.\n\nAction:\nturn left" }),
    });
    try {
      const model = `openai-compatible:${server.openaiBaseUrl}#m`;
      const out = expectJson(
        await cli(
          ...["evolve", "--agent", join(dir, "agent"), "--env", "gridworld", "--tasks", "0"],
          ...["--budget", "0", "--max-turns", "2", "--model", model, "--modify-model", model],
          ...["--run-id", "ea", "--db", db, "--json"],
        ),
        "clade.evolve-agent/1",
      );
      expect(out).toMatchObject({
        runId: "ea",
        t: 0,
        evaluations: { fails: 1 },
        chosen: { node: 0 },
      });
    } finally {
      await server.close();
    }
  });

  it("evolve --policy: a search over training branches (budget 1: one branch trained)", async () => {
    const info = BUILTIN_ENV_INFOS.find((i) => i.name === "maze");
    const model = createPolicyModel({
      ...{ env: "maze", envVersion: info?.version ?? "", seed: 0 },
      ...{ features: { dim: 1024 }, hidden: 16, valueHidden: 4 },
    });
    const policy = join(dir, "start.safetensors");
    await savePolicy(policy, model);
    const out = expectJson(
      await cli(
        ...["evolve", "--policy", policy, "--env", "maze", "--tasks", "0-1", "--budget", "1"],
        ...["--run-id", "ep", "--db", db, "--json"],
      ),
      "clade.evolve-policy/1",
    );
    expect(out).toMatchObject({ runId: "ep", env: "maze", t: 1, nodes: 1, resumed: false });
    // tree and best of it: the recipes and the policy files are documented fields too.
    const tree = expectJson(await cli("tree", "ep", "--db", db, "--json"), "clade.tree/1");
    expect((tree.nodes as { recipe: unknown }[])[0]?.recipe).toBeNull();
    const best = expectJson(await cli("best", "ep", "--db", db, "--json"), "clade.best/1");
    expect(best.best).toHaveProperty("file");
  });

  it("goals, goals report and review of runs judged on the fake model server", async () => {
    const server = await startFakeModelServer({ rule: judgeRule(disagreeing) });
    try {
      const config = writeJudgeConfig(join(dir, "judges.json"), server, { maxRetries: 1 });
      const file = writeTruth(join(dir, "labelled.json"));
      const judged = ["goals", file, "--judges", JUDGES, "--config", config, "--db", db];
      // Judged, with ground truth, disagreements queued.
      const out = expectJson(
        await cli(...judged, "--run-id", "gj", "--quiet", "--json"),
        "clade.goals-report/1",
      );
      expect(out).toMatchObject({ runId: "gj", status: "complete", human: null });
      expect(out.agreement).toHaveProperty("turns.ensemble");
      expect(out.review).toEqual({ queued: 2, open: 2, reviewed: 0 });
      const queue = expectJson(
        await cli("review", "gj", "--db", db, "--json"),
        "clade.review-queue/1",
      );
      expect(queue.items).toHaveLength(2);
      // One field reviewed: the report has the judges against the reviewer; --all has it.
      const { reviewCommand } = await import("../../src/cli/commands/review.js");
      const quiet = { stdout: () => {}, stderr: () => {}, interactive: false };
      expect(
        await reviewCommand("gj", { db, reviewer: "r" }, quiet, Readable.from(["E4\nq\n"])),
      ).toBe(0);
      const reviewed = expectJson(
        await cli("goals", "report", "gj", "--db", db, "--json"),
        "clade.goals-report/1",
      );
      expect(reviewed.human).toMatchObject({ reviews: 1 });
      const all = expectJson(
        await cli("review", "gj", "--db", db, "--json", "--all"),
        "clade.review-queue/1",
      );
      expect((all.items as { review: unknown }[])[0]?.review).toMatchObject({ value: "E4" });
      // A judge failing on one conversation (exit 4): its error is listed by goals report.
      server.setRule(
        judgeRule((c, judge, call) =>
          c === "g4" && judge === 2 ? { fault: "server_error" } : disagreeing(c, judge, call),
        ),
      );
      // (--cache off: the first run's answers are in the response cache.)
      const failed = await cli(...judged, "--run-id", "ge", "--cache", "off", "--quiet", "--json");
      expect(failed.code).toBe(4);
      const errored = expectJson(
        await cli("goals", "report", "ge", "--db", db, "--json"),
        "clade.goals-report/1",
      );
      expect((errored.errors as { conversation: string }[])[0]?.conversation).toBe("g4");
      // Ground truth only, outcome-level (τ-bench), not stored.
      const tau = join(ROOT, "tests", "fixtures", "goals", "tau.json");
      const truth = expectJson(
        await cli("goals", tau, "--db", db, "--json"),
        "clade.goals-report/1",
      );
      expect(truth).toMatchObject({ status: "not stored", groundTruth: { turnLevel: false } });
      // The stored evaluations, and none where there is no store.
      const list = expectJson(
        await cli("goals", "list", "--db", db, "--json"),
        "clade.goals-list/1",
      );
      expect(list.runs).toMatchObject([
        { id: "gj", status: "complete", judged: 6, errored: 0, taxonomy: "rcof" },
        { id: "ge", status: "complete", errored: 1 },
      ]);
      const none = expectJson(
        await cli("goals", "list", "--db", join(dir, "none.db"), "--json"),
        "clade.goals-list/1",
      );
      expect(none.runs).toEqual([]);
    } finally {
      await server.close();
    }
  }, 30_000);

  it("blade: report, score, hash and doctor", async () => {
    const evalRun = await cli(
      ...["eval", "--env", "blade", "--agent", "reference", "--tasks", "0-1", "--samples", "2"],
      ...["--run-id", "bl", "--db", db, "--json"],
    );
    expectJson(evalRun, "clade.eval/1");
    const report = expectJson(
      await cli("blade", "report", "bl", "--db", db, "--resamples", "50", "--json"),
      "clade.blade-report/1",
    );
    expect(report).toMatchObject({ run: "bl", analyses: 4, notSubmitted: 0, errored: 0 });
    expect(report.bootstrap).toBeDefined();
    const file = join(dir, "analyses.json");
    const analysis = {
      cvars: {
        ivs: [{ description: "Coffee", columns: ["cups_per_day"] }],
        dv: { description: "Blood pressure", columns: ["systolic_bp"] },
        controls: [],
      },
      transform_code: "",
      m_code: "ols(systolic_bp ~ cups_per_day)",
    };
    writeFileSync(file, JSON.stringify({ dataset_name: "coffee", analyses: [analysis] }));
    const scored = expectJson(await cli("blade", "score", file, "--json"), "clade.blade-report/1");
    expect(scored).toMatchObject({ file, dataset: "coffee", runtime: "sql", judge: null });
    expect(scored.bootstrap).toBeUndefined();
    const csv = join(ROOT, "data", "blade", "datasets", "coffee", "data.csv");
    const hashed = expectJson(await cli("blade", "hash", csv, "--json"), "clade.blade-hash/1");
    expect(hashed).toMatchObject({ reader: "clade" });
    const doctor = await cli("doctor", "--json");
    expect([0, 1]).toContain(doctor.code);
    checkAgainstDoc(JSON.parse(doctor.stdout), "clade.doctor/1");
    expectJsonError(
      await cli("blade", "score", join(dir, "missing.json"), "--json"),
      /UsageError/,
      /cannot read/,
    );
  }, 90_000);

  it("eval and eval sets", async () => {
    const single = await cli(
      ...["eval", "--env", "maze", "--tasks", "0-1", "--run-id", "e1", "--db", db, "--json"],
    );
    expectJson(single, "clade.eval/1");
    const config = join(dir, "evals.json");
    writeFileSync(config, JSON.stringify({ evals: { quick: { env: "maze", tasks: "0-1" } } }));
    const set = await cli("eval", "quick", "--config", config, "--db", db, "--json");
    const out = expectJson(set, "clade.eval-set/1");
    expect(out).toMatchObject({ evals: ["quick"], exitCode: 0 });
  });
});

describe("--json errors are one clade.error/1 line on stderr", () => {
  it("an unknown environment", async () => {
    const result = await cli("eval", "--env", "nope", "--db", db, "--json");
    expectJsonError(result, /^UnknownEnvError$/, /unknown environment "nope"/);
  });

  it("an unknown run", async () => {
    const result = await cli("show", "nope", "--db", db, "--json");
    expectJsonError(result, /^UsageError$/, /no run "nope"/);
  });

  it("an unknown training run", async () => {
    const result = await cli("curves", "nope", "--db", db, "--json");
    expectJsonError(result, /^UsageError$/, /no training run "nope"/);
  });

  it("an unknown search", async () => {
    const result = await cli("tree", "nope", "--db", db, "--json");
    expectJsonError(result, /^UsageError$/, /no search "nope"/);
  });

  it("a bad option value", async () => {
    const result = await cli("eval", "--env", "maze", "--samples", "0", "--db", db, "--json");
    expectJsonError(result, /Error$/, /--samples must be at least 1/);
  });

  it("an unknown option (commander's own error)", async () => {
    expectJsonError(
      await cli("envs", "--bogus", "--json"),
      /^commander\.unknownOption$/,
      /--bogus/,
    );
    expectJsonError(await cli("runs", "--json", "--nope"), /^commander\.unknownOption$/, /--nope/);
  });

  it("a missing required option (commander's own error)", async () => {
    const result = await cli("serve-env", "--json");
    expectJsonError(result, /^commander\.missingMandatoryOptionValue$/, /--env <name>/);
  });

  it("an unknown command", async () => {
    const result = await cli("nope", "--json");
    expectJsonError(result, /^commander\./, /nope/);
  });

  it("a bug in clade: kind internal, exit code 1", async () => {
    const spy = vi.spyOn(RunStore.prototype, "listRuns").mockImplementation(() => {
      throw new TypeError("boom\nsecond line");
    });
    try {
      const json = await cli("runs", "--db", db, "--json");
      expect(json.code).toBe(1);
      expect(json.stdout).toBe("");
      expect(json.stderr.trimEnd().split("\n")).toHaveLength(1);
      const { error } = checkAgainstDoc(JSON.parse(json.stderr), "clade.error/1");
      expect(error).toEqual({ kind: "internal", name: "TypeError", message: "boom" });
      const text = await cli("runs", "--db", db);
      expect(text.code).toBe(1);
      expect(text.stderr).toMatch(
        /^clade: internal error: boom \(CLADE_DEBUG=1 shows the stack\)\n$/,
      );
    } finally {
      spy.mockRestore();
    }
  });

  it("without --json the error stays one plain line", async () => {
    const commander = await cli("envs", "--bogus");
    expect(commander.code).toBe(2);
    expect(commander.stderr).toMatch(/^clade: error: unknown option '--bogus'/);
    const ours = await cli("show", "nope", "--db", db);
    expect(ours.code).toBe(2);
    expect(ours.stderr).toBe(`clade: error: no run "nope" in ${db} (see: clade runs)\n`);
  });

  it("help and version are no errors", async () => {
    const help = await cli("envs", "--help", "--json");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: clade envs/);
    expect((await cli("--version")).code).toBe(0);
  });
});

describe("the document", () => {
  it("lists every schema a test above emitted, and each is emitted by one", () => {
    expect([...DOC.keys()].sort()).toEqual([...emitted].sort());
  });
});

describe("light commands load light modules", () => {
  it("the environments' metadata equals the registry's", async () => {
    const registry = await vi.importActual<typeof import("../../src/env/registry.js")>(
      "../../src/env/registry.js",
    );
    expect(BUILTIN_ENV_INFOS).toEqual(registry.BUILTIN_ENVS.map((e) => e.info));
  });

  /** The modules a source file loads, following its static value imports (not `import type`). */
  function staticGraph(entry: string): Set<string> {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      if (!file.startsWith("/")) return; // a package
      const text = readFileSync(file, "utf8");
      const pattern = /^(?:import|export)\s+(type\s+)?(?:([^;]*?)\s+from\s+)?"([^"]+)";/gms;
      for (const [, typeOnly, clause, specifier] of text.matchAll(pattern)) {
        if (typeOnly || !specifier) continue;
        // `import { type A, type B } from` loads nothing once compiled.
        const names = /^\{([^}]*)\}$/.exec(clause?.trim() ?? "")?.[1];
        if (names?.split(",").every((n) => !n.trim() || n.trim().startsWith("type "))) continue;
        if (specifier.startsWith(".")) {
          const target = resolve(dirname(file), specifier.replace(/\.js$/, ".ts"));
          visit(existsSync(target) ? target : target.replace(/\.ts$/, "/index.ts"));
        } else {
          visit(specifier.replace(/^node:.*/, "node"));
        }
      }
    };
    visit(join(ROOT, entry));
    return seen;
  }

  const HEAVY = ["zod", "better-sqlite3", "openai", "@anthropic-ai/sdk", "tsx", "cli-progress"];
  const relative = (graph: Set<string>) =>
    [...graph].map((f) => (f.startsWith(ROOT) ? f.slice(ROOT.length + 1) : f));

  it("main.ts imports no command and no heavy package", () => {
    const graph = relative(staticGraph("src/cli/main.ts"));
    expect(graph.filter((f) => f.includes("/commands/"))).toEqual([]);
    expect(graph.filter((f) => HEAVY.includes(f) || f === "cli-table3")).toEqual([]);
  });

  it("envs loads only the environments' metadata", () => {
    const graph = relative(staticGraph("src/cli/commands/envs.ts"));
    expect(graph.filter((f) => HEAVY.includes(f))).toEqual([]);
    expect(graph).not.toContain("src/env/registry.ts");
    expect(graph.filter((f) => f.startsWith("src/env/sql/query"))).toEqual([]);
  });

  it("runs, show, cost and curves load SQLite but not the environments or zod", () => {
    for (const entry of [
      "src/cli/commands/runs.ts",
      "src/cli/commands/cost.ts",
      "src/cli/commands/curves.ts",
    ]) {
      const graph = relative(staticGraph(entry));
      expect(graph.filter((f) => HEAVY.includes(f) && f !== "better-sqlite3")).toEqual([]);
      expect(graph).not.toContain("src/env/registry.ts");
      expect(graph).not.toContain("src/env/infos.ts");
    }
  });
});
