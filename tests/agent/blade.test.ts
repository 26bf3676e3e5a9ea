/**
 * The blade environment's scripted agents through the agent registry and the real episode
 * runner: the reference solver (one expert's analysis, explored first, then submitted) succeeds
 * on every one of clade's datasets with every hit rate at 1; the naive analyst (outcome on cause,
 * no controls or transforms) plays one-step episodes and scores lower; both refuse other
 * environments. And questionSides, which reads cause and effect off a research question.
 */
import { describe, expect, it } from "vitest";
import { expertAnalysis, solveBlade } from "../../src/agent/reference/blade.js";
import { naiveBladeAnalyst, questionSides } from "../../src/agent/reference/blade-naive.js";
import { resolveAgent, UnknownAgentError } from "../../src/agent/registry.js";
import { bladeSourceOf, builtinBladeEnv, taskDataset } from "../../src/env/blade/index.js";
import type { BladeRecord } from "../../src/env/blade/score.js";
import { runHitRates } from "../../src/env/blade/scores.js";
import { mazeEnv } from "../../src/env/maze/index.js";
import { type EpisodeRecord, runEpisode } from "../../src/rollout/episode.js";

const def = builtinBladeEnv();
const source = bladeSourceOf(def.info);
if (!source) throw new Error("the built-in blade env has no task source");
const TASKS = source.datasets.map((name, task) => [name, task] as const);

/** One full episode of `task` with the named agent from the registry. */
async function play(agentName: string, task: number): Promise<EpisodeRecord> {
  const factory = resolveAgent(agentName, def);
  const env = def.create();
  const context = { env: def.info, taskIndex: task, seed: 0, sampleIndex: 0 };
  try {
    return await runEpisode({
      env,
      agent: factory.create(context),
      context,
      limits: { maxTurns: def.info.maxSteps, timeoutMs: 60_000 },
    });
  } finally {
    await env.close?.();
  }
}

const recordOf = (episode: EpisodeRecord) => episode.steps.at(-1)?.info.blade as BladeRecord;

/** The promise, with its failure reported by the test that awaits it, not as unhandled. */
function started<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

// Every episode once, all at the same time (each one's sessions are its own).
const references = new Map(TASKS.map(([name, task]) => [name, started(play("reference", task))]));
// The experts' transform states are cached per process: the naive episodes reuse them.
const naives = new Map(
  TASKS.map(([name, task]) => [
    name,
    started((references.get(name) as Promise<EpisodeRecord>).then(() => play("naive", task))),
  ]),
);

describe("the registry", () => {
  it("gives the reference solver and the naive analyst for blade, and not elsewhere", () => {
    expect(resolveAgent("reference", def).name).toBe("reference");
    expect(resolveAgent("reference", def).create).toBe(solveBlade);
    expect(resolveAgent("naive", def).create).toBe(naiveBladeAnalyst);
    expect(() => resolveAgent("naive", mazeEnv)).toThrow(UnknownAgentError);
    expect(() => resolveAgent("naive", mazeEnv)).toThrow(/plays only the blade environment/);
    const context = { env: mazeEnv.info, taskIndex: 0, seed: 0, sampleIndex: 0 };
    expect(() => solveBlade(context)).toThrow(/blade environment only/);
    expect(() => naiveBladeAnalyst(context)).toThrow(/blade environment only/);
  });
});

describe("the reference solver", () => {
  it.each(TASKS)(
    "%s: explores, submits one expert's analysis and succeeds with every hit rate 1",
    async (name) => {
      const episode = await (references.get(name) as Promise<EpisodeRecord>);
      expect(episode.error).toBeUndefined();
      expect(episode.endReason).toBe("done");
      expect(episode.outcome).toBe("success");
      expect(episode.reward).toBeGreaterThanOrEqual(def.info.successThreshold);
      expect(episode.steps.map((s) => s.action.split(":")[0])).toEqual(["run", "submit"]);
      expect(episode.steps[0]?.info).toEqual({ ok: true });
      expect(episode.steps[0]?.message).toMatch(/^Thought: .*\n\nAction: run: /s);
      const record = recordOf(episode);
      expect(record.dataset).toBe(name);
      expect(record.score).toBe(episode.reward);
      expect(record.transforms.status).toBe("matched");
      expect(runHitRates(record.run)).toEqual({
        cvar: 1,
        model: 1,
        modelCvar: 1,
        transformGraph: 1,
        transformValue: 1,
      });
      expect(record.conclusion?.direction).toBe("right");
    },
  );

  it("submits only derived-column transforms of its own expert on tutoring", () => {
    const analysis = expertAnalysis(
      taskDataset(source, source.datasets.indexOf("tutoring")),
      "sql",
    );
    // Expert 1 drops students without a prior score and logs income; the other experts'
    // imputations of prior_score are no part of that analysis.
    expect(
      (analysis.transform_units as { verb: string; mapping: unknown }[]).map((u) => [
        u.verb,
        u.mapping,
      ]),
    ).toEqual([
      ["filter", [[["prior_score"], "ALL"]]],
      ["derive", [[["household_income"], "log_income"]]],
    ]);
    expect(analysis.m_code).toMatch(/^ols\(final_score ~ tutoring \+ /);
  });
});

describe("the naive analyst", () => {
  it.each(TASKS)("%s: submits at once and scores below the reference", async (name) => {
    const episode = await (naives.get(name) as Promise<EpisodeRecord>);
    const reference = await (references.get(name) as Promise<EpisodeRecord>);
    expect(episode.error).toBeUndefined();
    expect(episode.endReason).toBe("done");
    expect(episode.steps).toHaveLength(1);
    expect(episode.steps[0]?.action).toMatch(/^submit: \{/);
    const record = recordOf(episode);
    expect(record.dataset).toBe(name);
    expect(record.transforms.status).toBe("LM_SUBMISSION_TRANSFORM_CODE_EMPTY");
    expect(episode.reward).toBe(record.score);
    expect(episode.reward).toBeLessThan(reference.reward);
    expect(episode.outcome).toBe("failure");
    const submitted = JSON.parse(episode.steps[0]?.action.slice("submit: ".length) ?? "{}");
    const columns = taskDataset(source, source.datasets.indexOf(name)).fieldNames;
    expect(columns).toContain(submitted.cvars.ivs[0].columns[0]);
    expect(columns).toContain(submitted.cvars.dv.columns[0]);
    expect(submitted.cvars.controls).toEqual([]);
  });
});

describe("questionSides", () => {
  it('splits "Does X affect Y?" at the linking verb', () => {
    const sides = questionSides("Does smoking affect lung function in adults?");
    expect(sides.cause.trim()).toBe("does smoking");
    expect(sides.effect.trim()).toBe("lung function in adults?");
    expect(questionSides("Is income associated with happiness?")).toEqual({
      cause: "is income ",
      effect: " happiness?",
    });
    const coffee = questionSides("Does drinking more coffee raise systolic blood pressure?");
    expect(coffee.cause).toContain("coffee");
    expect(coffee.effect).toContain("blood pressure");
    expect(coffee.effect).not.toContain("coffee");
  });

  it('splits "the effect of X on Y"', () => {
    expect(questionSides("What is the effect of class size on test scores?")).toEqual({
      cause: "class size",
      effect: "test scores?",
    });
    expect(questionSides("Estimate the Effect of tutoring on final scores")).toEqual({
      cause: "tutoring",
      effect: "final scores",
    });
  });

  it("takes the whole question on both sides when nothing links them", () => {
    expect(questionSides("How tall are people?")).toEqual({
      cause: "how tall are people?",
      effect: "how tall are people?",
    });
  });
});

describe("an LLM agent (ReAct, scripted model) on blade", () => {
  it("explores with multi-line SQL, is told its error, and submits an analysis that is scored", async () => {
    const { createReactAgent } = await import("../../src/agent/react.js");
    const { ScriptedModel } = await import("../../src/testing/scripted-model.js");
    const task = source.datasets.indexOf("tutoring");
    const analysis = {
      cvars: {
        ivs: [{ description: "Tutoring", columns: ["tutoring"] }],
        dv: { description: "Final score", columns: ["final_score"] },
        controls: [
          {
            description: "Prior score",
            columns: ["prior_score"],
            is_moderator: false,
            moderator_on: "",
          },
        ],
      },
      transform_code: "SELECT * FROM df WHERE prior_score IS NOT NULL",
      m_code: "ols(final_score ~ tutoring + prior_score)",
    };
    const model = new ScriptedModel([
      "Thought: how big are the groups?\nAction: run:\n```sql\nSELECT tutoring,\n  count(*) AS n\nFROM df GROUP BY tutoring ORDER BY tutoring\n```",
      "Thought: a typo\nAction: run: SELECT nonexistent FROM df",
      `Thought: adjust for prior achievement\nAction: submit: ${JSON.stringify(analysis)}`,
    ]);
    const env = def.create();
    const context = { env: def.info, taskIndex: task, seed: 0, sampleIndex: 0 };
    try {
      const episode = await runEpisode({
        env,
        agent: createReactAgent(model)(context),
        context,
        limits: { maxTurns: def.info.maxSteps, timeoutMs: 60_000 },
      });
      expect(episode.steps).toHaveLength(3);
      const [look, typo] = episode.steps;
      expect(look?.observation.text).toMatch(/tutoring\s+.*n/);
      expect(typo?.observation.text).toMatch(/^.*Error: .*nonexistent/s);
      const record = recordOf(episode);
      expect(record.transforms.status).toBe("matched");
      expect(record.model.decisions.some((d) => d.matched)).toBe(true);
      expect(record.conclusion?.direction).toBe("right");
      expect(episode.reward).toBe(record.score);
      expect(record.score).toBeGreaterThan(0);
    } finally {
      await env.close?.();
    }
  });
});
