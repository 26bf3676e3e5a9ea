/**
 * Reading and comparing runs (issue 8) through the CLI as a user types it: `show --episode`,
 * `compare`, and the models and cost `runs` lists.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStore, type StoredEpisode } from "../../src/store/run-store.js";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/fake-model-server.js";
import { runCli } from "../fixtures/cli.js";

const cli = runCli;

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-reading-"));
  db = join(dir, "clade.db");
});

async function evalRun(run: string, env: string, agent: string, tasks: string, samples = 1) {
  const result = await cli(
    "eval",
    "--env",
    env,
    "--agent",
    agent,
    "--tasks",
    tasks,
    "--samples",
    String(samples),
    "--run-id",
    run,
    "--db",
    db,
    "--json",
  );
  expect(result.code).toBe(0);
}

function withStore<T>(read: (store: RunStore) => T): T {
  const store = RunStore.open(db, { readonly: true });
  try {
    return read(store);
  } finally {
    store.close();
  }
}

function expectOneErrorLine(stderr: string, pattern: RegExp) {
  expect(stderr.endsWith("\n")).toBe(true);
  expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(stderr).toMatch(/^clade: error: /);
  expect(stderr).toMatch(pattern);
}

describe("clade show RUN --episode", () => {
  it("prints a trajectory turn by turn, as stored, by task/sample or by id", async () => {
    await evalRun("ref", "maze", "reference", "0-2", 2);
    const { episode, steps } = withStore((store) => {
      const episode = store.episodes("ref").find((e) => e.taskIndex === 2 && e.sampleIndex === 1);
      if (!episode) throw new Error("episode 2/1 missing");
      return { episode, steps: store.steps(episode.id) };
    });
    expect(steps.length).toBeGreaterThan(1);

    const table = await cli("show", "ref", "--episode", "2/1", "--db", db);
    expect(table.code).toBe(0);
    expect(table.stderr).toBe("");
    const out = table.stdout;
    expect(out).toMatch(
      new RegExp(
        `^episode 2/1 \\(id ${episode.id}\\) of run ref: success, reward 1, ${steps.length} turns`,
      ),
    );
    expect(out).toContain("instruction:\n    You are in a maze");
    expect(out).toContain(`initial observation:\n    ${episode.initialObservation?.text}`);
    // Every turn, in order, with its action, observation, reward and done flag.
    let at = 0;
    for (const step of steps) {
      const turn = out.indexOf(
        `turn ${step.turn}: reward ${step.reward}, done ${step.done ? "yes" : "no"}`,
        at,
      );
      expect(turn).toBeGreaterThan(at);
      const action = out.indexOf(`  action: ${step.action}\n`, turn);
      const observation = out.indexOf(`observation:\n    ${step.observation.text}\n`, action);
      expect(action).toBeGreaterThan(turn);
      expect(observation).toBeGreaterThan(action);
      if (step.message !== step.action) {
        const firstLine = step.message.split("\n")[0] ?? "";
        expect(out.slice(turn, action)).toContain(`message:\n    ${firstLine}`);
      }
      at = observation;
    }
    expect(out).toContain("done yes");

    const json = await cli("show", "ref", "--episode", "2/1", "--db", db, "--json");
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout);
    expect(Object.keys(parsed)).toEqual(
      expect.arrayContaining(["schema", "run", "episode", "steps", "calls"]),
    );
    expect(parsed.schema).toBe("clade.episode/1");
    expect(parsed.run).toMatchObject({ id: "ref", env: "maze", agent: "reference" });
    expect(parsed.episode).toEqual(episode);
    expect(parsed.steps).toEqual(JSON.parse(JSON.stringify(steps)));
    expect(parsed.calls).toEqual([]);

    const byId = await cli("show", "ref", "--episode", String(episode.id), "--db", db, "--json");
    expect(JSON.parse(byId.stdout)).toEqual(parsed);
  });

  it("refuses an unknown or malformed episode in one line, exit 2", async () => {
    await evalRun("ref", "maze", "reference", "0-1");
    for (const spec of ["5/0", "0/3", "99999", "first", "1/x"]) {
      const result = await cli("show", "ref", "--episode", spec, "--db", db);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expectOneErrorLine(result.stderr, /episode/);
    }
    // An episode id of another run is not this run's.
    await evalRun("other", "maze", "reference", "7");
    const foreign = withStore((store) => store.episodes("other")[0]?.id);
    const result = await cli("show", "ref", "--episode", String(foreign), "--db", db);
    expect(result.code).toBe(2);
    expectOneErrorLine(result.stderr, /no episode with id/);
  });

  it("shows a damaged episode with one warning line and what can be read", async () => {
    await evalRun("d", "maze", "reference", "0-1");
    const conn = new Database(db);
    conn.exec(
      `UPDATE trajectories SET steps = '{"truncated":' WHERE episode_id =
         (SELECT id FROM episodes WHERE run_id = 'd' AND task_index = 1)`,
    );
    conn.close();
    const result = await cli("show", "d", "--episode", "1/0", "--db", db);
    expect(result.code).toBe(0);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/^warning: episode 1\/0 of run d is damaged/);
    expect(result.stdout).toMatch(/^episode 1\/0 \(id \d+\) of run d: damaged/);
    expect(result.stdout).toContain("no turns stored");
    const json = JSON.parse(
      (await cli("show", "d", "--episode", "1/0", "--db", db, "--json")).stdout,
    );
    expect(json).toMatchObject({ schema: "clade.episode/1", steps: [], calls: [] });
    expect(json.episode.outcome).toBe("damaged");
    // The sound episode next to it reads as before.
    const sound = await cli("show", "d", "--episode", "0/0", "--db", db);
    expect(sound.stderr).toBe("");
    expect(sound.stdout).toContain("done yes");
  });
});

describe("clade compare", () => {
  /** Per task successes/finished of a run, from the stored episodes. */
  function perTask(episodes: readonly StoredEpisode[]) {
    const tasks = new Map<number, { successes: number; finished: number }>();
    for (const e of episodes) {
      if (e.outcome !== "success" && e.outcome !== "failure") continue;
      const t = tasks.get(e.taskIndex) ?? { successes: 0, finished: 0 };
      t.finished++;
      if (e.outcome === "success") t.successes++;
      tasks.set(e.taskIndex, t);
    }
    return tasks;
  }

  it("puts two runs side by side, with B − A and the tasks that moved", async () => {
    await evalRun("rnd", "maze", "random", "0-19", 2);
    await evalRun("ref", "maze", "reference", "0-19", 2);

    const json = await cli("compare", "rnd", "ref", "--db", db, "--json");
    expect(json.code).toBe(0);
    expect(json.stderr).toBe("");
    const result = JSON.parse(json.stdout);
    expect(result.schema).toBe("clade.compare/1");
    expect(result.a).toMatchObject({ id: "rnd", env: "maze", agent: "random" });
    expect(result.b).toMatchObject({ id: "ref", env: "maze", agent: "reference" });
    expect(result.sharedTasks).toHaveLength(20);
    expect(result.metrics.map((m: { metric: string }) => m.metric)).toEqual([
      "success rate",
      "mean reward",
      "pass@1",
      "pass@2",
    ]);
    const show = async (run: string) =>
      JSON.parse((await cli("show", run, "--db", db, "--json")).stdout).metrics;
    const [metricsA, metricsB] = [await show("rnd"), await show("ref")];
    const rate = result.metrics[0];
    expect(rate).toMatchObject({
      a: metricsA.successRate,
      aInterval: metricsA.successRateInterval,
      b: metricsB.successRate,
      bInterval: metricsB.successRateInterval,
      tasks: 20,
    });
    expect(rate.difference).toBeCloseTo(metricsB.successRate - metricsA.successRate, 12);
    expect(rate.differenceInterval.low).toBeLessThanOrEqual(rate.difference);
    expect(rate.differenceInterval.high).toBeGreaterThanOrEqual(rate.difference);

    // The moved tasks are exactly those whose stored success counts differ.
    const [tasksA, tasksB] = withStore((store) => [
      perTask(store.episodes("rnd")),
      perTask(store.episodes("ref")),
    ]);
    const expected = [...tasksA.keys()]
      .sort((x, y) => x - y)
      .filter((t) => tasksA.get(t)?.successes !== tasksB.get(t)?.successes)
      .map((t) => ({ taskIndex: t, a: tasksA.get(t), b: tasksB.get(t) }));
    expect(expected.length).toBeGreaterThan(0);
    expect(
      result.flipped.map((f: { taskIndex: number; a: unknown; b: unknown }) => ({
        taskIndex: f.taskIndex,
        a: f.a,
        b: f.b,
      })),
    ).toEqual(expected);
    for (const f of result.flipped) {
      expect(f.change).toBe("gained"); // the reference solver solves every task
      expect(f.flipped).toBe(f.a.successes === 0);
    }

    const table = await cli("compare", "rnd", "ref", "--db", db);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^A: rnd \(maze v[\d.]+, agent random\)\nB: ref/);
    expect(table.stdout).toMatch(
      /metric\s+rnd\s+95% CI\s+ref\s+95% CI\s+B - A\s+95% CI \(paired\)/,
    );
    expect(table.stdout).toMatch(
      /success rate\s+\d\.\d{3}\s+\[.*\]\s+1\.000\s+\[1\.000, 1\.000\]\s+\+/,
    );
    expect(table.stdout).toMatch(/pass@2/);
    for (const f of expected) {
      expect(table.stdout).toMatch(
        new RegExp(`\\n${f.taskIndex}\\s+${f.a?.successes}/2\\s+2/2\\s+gained`),
      );
    }
  });

  it("warns about different environments, and refuses runs without a shared task", async () => {
    await evalRun("maze", "maze", "reference", "0-1");
    await evalRun("wordle", "wordle", "reference", "0-1");
    await evalRun("far", "maze", "reference", "50-51");

    const mixed = await cli("compare", "maze", "wordle", "--db", db);
    expect(mixed.code).toBe(0);
    expect(mixed.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(mixed.stderr).toMatch(/^warning: the runs are on different environments/);

    const disjoint = await cli("compare", "maze", "far", "--db", db);
    expect(disjoint.code).toBe(2);
    expect(disjoint.stdout).toBe("");
    expectOneErrorLine(disjoint.stderr, /share no task/);

    const unknown = await cli("compare", "maze", "nope", "--db", db);
    expect(unknown.code).toBe(2);
    expectOneErrorLine(unknown.stderr, /no run "nope"/);
  });
});

describe("an LLM run: runs lists model and cost, show --episode its calls", () => {
  let server: FakeModelServer;
  let savedKey: string | undefined;
  beforeEach(async () => {
    savedKey = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    server = await startFakeModelServer();
  });
  afterEach(async () => {
    await server.close();
    if (savedKey !== undefined) process.env.OPENAI_API_KEY = savedKey;
  });

  it("shows the models and cost per run and each turn's calls with retries", async () => {
    const spec = `openai-compatible:${server.openaiBaseUrl}#fake-model`;
    const config = join(dir, "clade.config.json");
    writeFileSync(
      config,
      JSON.stringify({
        models: { fake: { model: spec, maxRetries: 2 } },
        prices: { "openai-compatible:fake-model": { inputPerMTok: 3, outputPerMTok: 15 } },
      }),
    );
    // The second request fails once (a 500), so turn 1's call is retried into success.
    let requests = 0;
    server.setRule(() => {
      requests++;
      return requests === 2
        ? { fault: "server_error" }
        : { content: "Thought:\nNorth looks open.\n\nAction:\nmove up" };
    });
    const evaluated = await cli(
      "eval",
      "--env",
      "maze",
      "--agent",
      "react",
      "--model",
      "fake",
      "--config",
      config,
      "--tasks",
      "0",
      "--max-turns",
      "3",
      "--cache",
      "off",
      "--run-id",
      "llm",
      "--db",
      db,
      "--json",
    );
    expect(evaluated.code).toBe(0);
    await evalRun("ref", "maze", "reference", "0");

    const { runs } = JSON.parse((await cli("runs", "--db", db, "--json")).stdout);
    const cost = withStore((store) => store.runCostUsd("llm"));
    expect(cost).toBeGreaterThan(0);
    const llm = runs.find((r: { id: string }) => r.id === "llm");
    expect(llm).toMatchObject({ agent: "react", models: ["openai-compatible:fake-model"] });
    expect(llm.costUsd).toBeCloseTo(cost, 12);
    expect(runs.find((r: { id: string }) => r.id === "ref")).toMatchObject({
      models: [],
      costUsd: null,
      episodes: 1,
    });
    const table = await cli("runs", "--db", db);
    expect(table.stdout).toMatch(/run\s+env\s+agent\s+status\s+.*\bmodel\s+cost\s+created/);
    expect(table.stdout).toMatch(
      new RegExp(
        `\\nllm\\s+maze v[\\d.]+\\s+react\\s+.*openai-compatible:fake-model\\s+\\$${cost.toFixed(4)}\\s`,
      ),
    );
    expect(table.stdout).toMatch(
      /\nref\s+maze v[\d.]+\s+reference\s+complete\s+.*\s-\s+-\s+\d{4}-/,
    );

    const { calls, steps } = withStore((store) => {
      const id = store.episodes("llm")[0]?.id ?? -1;
      return { calls: store.calls(id), steps: store.steps(id) };
    });
    expect(calls.map((c) => [c.turn, c.attempts])).toEqual([
      [0, 1],
      [1, 2],
      [2, 1],
    ]);
    const json = JSON.parse(
      (await cli("show", "llm", "--episode", "0/0", "--db", db, "--json")).stdout,
    );
    expect(json.calls).toEqual(JSON.parse(JSON.stringify(calls)));
    expect(json.steps).toEqual(JSON.parse(JSON.stringify(steps)));

    const shown = await cli("show", "llm", "--episode", "0/0", "--db", db);
    expect(shown.code).toBe(0);
    const out = shown.stdout;
    expect(out).toMatch(/model calls: 3, tokens in\/out \d+\/\d+, cost \$\d\.\d{4}/);
    expect(out).toContain("message:\n    Thought:\n    North looks open.");
    const turn1 = out.slice(out.indexOf("turn 1:"), out.indexOf("turn 2:"));
    const retried = calls[1];
    expect(turn1).toContain(
      `call 1: openai-compatible:fake-model, tokens ${retried?.usage.inputTokens}/${retried?.usage.outputTokens}`,
    );
    expect(turn1).toMatch(/\d+ ms, cache miss, 2 attempts \(1 retry\)/);
    expect(turn1).toMatch(/attempt 1 failed: .*500|attempt 1 failed: .*server/i);
  });
});
