/** runEvaluation's short form: only the environment and the tasks are required. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UnknownAgentError } from "../../src/agent/registry.js";
import type { Agent, EpisodeContext } from "../../src/agent/types.js";
import { UnknownEnvError } from "../../src/env/registry.js";
import { type EnvDefinition, UnknownTaskError } from "../../src/env/types.js";
import { runEvaluation } from "../../src/eval/evaluation.js";
import { TaskRangeError } from "../../src/eval/task-range.js";
import { RunStore } from "../../src/store/run-store.js";
import { CounterEnv, counterInfo } from "../fixtures/counter-env.js";

const dbPath = () => join(mkdtempSync(join(tmpdir(), "clade-lib-")), "c.db");

/** The counter environment without an action sampler, as a user's own environment may be. */
const bareCounter: EnvDefinition = { info: counterInfo, create: () => new CounterEnv() };

const inc: Agent = { act: async () => ({ action: "inc" }) };

describe("runEvaluation, short form", () => {
  it("needs only env and tasks: the reference agent, in memory, with metrics and episodes", async () => {
    const run = await runEvaluation({ env: "maze", tasks: "0-4" });
    expect(run).toMatchObject({
      env: "maze",
      agent: "reference",
      resumed: false,
      skipped: 0,
      ran: 5,
      interrupted: false,
      notRun: 0,
    });
    expect(run.runId).toMatch(/^maze-reference-\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(run.metrics).toMatchObject({ episodes: 5, successes: 5, successRate: 1 });
    expect(run.episodes.map((e) => e.taskIndex)).toEqual([0, 1, 2, 3, 4]);
  });

  it("stores the same configuration the CLI would, with the documented defaults", async () => {
    const db = dbPath();
    const run = await runEvaluation({ env: "maze", tasks: [3, 1, 1, 2], store: db, runId: "r" });
    expect(run.ran).toBe(3);
    const store = RunStore.open(db);
    try {
      expect(store.getRun("r")).toMatchObject({
        env: "maze",
        agent: "reference",
        status: "complete",
        config: { tasks: "1-3", samples: 1, maxTurns: 50, timeoutMs: 300_000, seed: 0 },
      });
    } finally {
      store.close();
    }
    // The same call again resumes: nothing is left to run.
    const again = await runEvaluation({ env: "maze", tasks: "1-3", store: db, runId: "r" });
    expect(again).toMatchObject({ resumed: true, skipped: 3, ran: 0 });
  });

  it("leaves a store it was given open", async () => {
    const store = RunStore.open(dbPath());
    const run = await runEvaluation({ env: "wordle", tasks: "0", store, samples: 2 });
    expect(store.episodes(run.runId)).toHaveLength(2);
    store.close();
  });

  it("takes an agent object, a factory function, an AgentFactory or a name", async () => {
    const object = await runEvaluation({ env: bareCounter, tasks: "0-4", agent: inc });
    expect(object).toMatchObject({ agent: "custom", metrics: { successRate: 1 } });

    const named = await runEvaluation({
      env: bareCounter,
      tasks: "0-1",
      agent: { name: "incrementer", act: inc.act },
    });
    expect(named.agent).toBe("incrementer");

    const contexts: EpisodeContext[] = [];
    const perEpisode = (context: EpisodeContext): Agent => {
      contexts.push(context);
      return inc;
    };
    const fn = await runEvaluation({
      env: bareCounter,
      tasks: [0, 1],
      agent: perEpisode,
      samples: 2,
    });
    expect(fn.agent).toBe("perEpisode");
    expect(contexts.map((c) => `${c.taskIndex}/${c.sampleIndex}`).sort()).toEqual([
      "0/0",
      "0/1",
      "1/0",
      "1/1",
    ]);

    const factory = await runEvaluation({
      env: bareCounter,
      tasks: "0-2",
      agent: { name: "f", create: () => inc },
    });
    expect(factory).toMatchObject({ agent: "f", ran: 3 });

    const random = await runEvaluation({ env: "maze", tasks: "0", agent: "random", maxTurns: 3 });
    expect(random.episodes[0]).toMatchObject({ outcome: "failure", turns: 3 });
  });

  it("runs environments without sampleAction; only the random agent needs one", async () => {
    const run = await runEvaluation({
      env: bareCounter,
      tasks: "test",
      agent: inc,
      concurrency: 2,
    });
    expect(run.metrics).toMatchObject({ episodes: 10, successRate: 1 });
    await expect(runEvaluation({ env: bareCounter, tasks: "0", agent: "random" })).rejects.toThrow(
      /"counter" has no sampleAction/,
    );
  });

  it("says clearly what is wrong", async () => {
    await expect(runEvaluation({ env: "chess", tasks: "0" })).rejects.toBeInstanceOf(
      UnknownEnvError,
    );
    await expect(runEvaluation({ env: "maze", tasks: "0-1000" })).rejects.toBeInstanceOf(
      TaskRangeError,
    );
    await expect(runEvaluation({ env: "maze", tasks: [7000] })).rejects.toBeInstanceOf(
      UnknownTaskError,
    );
    await expect(runEvaluation({ env: "maze", tasks: [] })).rejects.toThrow(/no tasks/);
    await expect(runEvaluation({ env: "maze", tasks: "0", agent: "react" })).rejects.toThrow(
      /createLlmAgent/,
    );
    await expect(runEvaluation({ env: "maze", tasks: "0", agent: "nope" })).rejects.toBeInstanceOf(
      UnknownAgentError,
    );
    await expect(runEvaluation({ env: "maze", tasks: "0", samples: 0 })).rejects.toThrow(/samples/);
  });

  it("fails fast by default", async () => {
    const broken: Agent = {
      act: async () => {
        throw new Error("model unavailable");
      },
    };
    const run = await runEvaluation({
      env: bareCounter,
      tasks: "test",
      agent: broken,
      concurrency: 1,
    });
    expect(run).toMatchObject({ stopReason: "fail-fast", ran: 5, notRun: 5 });
    expect(run.failFast).toEqual({ episodes: 5, error: "Error: model unavailable" });
    const off = await runEvaluation({
      env: bareCounter,
      tasks: "test",
      agent: broken,
      failFast: false,
    });
    expect(off).toMatchObject({ ran: 10, notRun: 0, interrupted: false });
    expect(off.metrics.errors).toBe(10);
  });
});
