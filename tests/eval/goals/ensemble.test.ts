/**
 * The ensemble: every judge labels the conversation, at once; the vote accepts 2 of 3 and queues
 * a three-way split or any segmentation disagreement; one judge failing errors the conversation
 * (never a label from the others); judgements made earlier are not asked again; each new one is
 * handed over as soon as it is made, except one the signal cut short.
 */
import { describe, expect, it } from "vitest";
import { type JudgeOutcome, judgeWithEnsemble } from "../../../src/eval/goals/ensemble.js";
import type { Judge, JudgeSettings } from "../../../src/eval/goals/judge.js";
import type { TurnLabel } from "../../../src/eval/goals/labels.js";
import { resolveRubric } from "../../../src/eval/goals/rubric.js";
import { builtinTaxonomy } from "../../../src/eval/goals/taxonomy.js";
import type { Model, ModelRequest, ModelResponse } from "../../../src/model/types.js";
import { ScriptedModel } from "../../../src/testing/scripted-model.js";
import { answer, conversation, labels, TableModel } from "../../fixtures/goals/judging.js";

const settings: JudgeSettings = {
  rubric: resolveRubric("generic"),
  taxonomy: builtinTaxonomy("rcof"),
};
const two = conversation("c1", 2);

function judges(...models: Model[]): Judge[] {
  return models.map((client, i) => ({
    label: `judge ${i + 1} (${client.id})`,
    model: client.id,
    client,
  }));
}

/** Three scripted judges answering these labels, once each. */
const scripted = (...answers: TurnLabel[][]) =>
  answers.map((a, i) => new ScriptedModel([answer(a)], { name: `m${i + 1}` }));

const SPEND = {
  calls: 1,
  usage: { inputTokens: 1, outputTokens: 1 },
  costUsd: 0,
  unpriced: true,
  latencyMs: 1,
  cacheHits: 0,
  providerAttempts: 1,
};

function labelled(turns: TurnLabel[]): JudgeOutcome {
  return {
    status: "labelled",
    judgement: {
      labels: turns,
      normalised: [],
      reasoning: "stored",
      answers: 1,
      rejected: [],
      spend: SPEND,
    },
  };
}

describe("the ensemble's vote", () => {
  it("accepts 2 of 3, keeping the rationale of a judge that agrees", async () => {
    const models = scripted(labels("N s", ". s"), labels("N s", ". f E3"), labels("N s", ". f E3"));
    const made: number[] = [];
    const got = await judgeWithEnsemble(judges(...models), two, settings, {
      onJudgement: (index, outcome) => {
        expect(outcome.status).toBe("labelled");
        made.push(index);
      },
    });
    expect(got.status).toBe("judged");
    if (got.status !== "judged") throw new Error("unreachable");
    expect(got.labels).toEqual([
      { turn_number: 1, is_new_goal: true, quality: "success", rcof: null, rationale: "why N s" },
      {
        turn_number: 2,
        is_new_goal: false,
        quality: "failure",
        rcof: "E3",
        rationale: "why . f E3",
      },
    ]);
    expect(got.queue).toEqual([]);
    expect(got.outcomes.map((o) => o.status)).toEqual(["labelled", "labelled", "labelled"]);
    expect(made.sort()).toEqual([0, 1, 2]);
    // Each judge is asked as a draw of its own: the sample index is its position.
    expect(models.map((m) => m.requests[0]?.sampleIndex)).toEqual([0, 1, 2]);
    for (const m of models) m.assertDone();
  });

  it("queues a three-way split of the cause, with a provisional label", async () => {
    const models = scripted(labels("N s", ". f E3"), labels("N s", ". f E4"), labels("N s", ". s"));
    const got = await judgeWithEnsemble(judges(...models), two, settings);
    if (got.status !== "judged") throw new Error(`expected judged, got ${got.status}`);
    expect(got.queue).toEqual([
      {
        turn_number: 2,
        field: "rcof",
        reason: "three-way disagreement: rcof E3 (1), E4 (2), (success) (3)",
      },
    ]);
    // Quality had its 2 of 3; the cause stays provisional (the earliest judge's) until reviewed.
    expect(got.labels[1]).toMatchObject({ quality: "failure", rcof: "E3" });
  });

  it("queues a segmentation disagreement even when two judges agree", async () => {
    const models = scripted(labels("N s", "N s"), labels("N s", ". s"), labels("N s", "N s"));
    const got = await judgeWithEnsemble(judges(...models), two, settings);
    if (got.status !== "judged") throw new Error(`expected judged, got ${got.status}`);
    expect(got.labels.map((l) => l.is_new_goal)).toEqual([true, true]);
    expect(got.queue).toEqual([
      {
        turn_number: 2,
        field: "is_new_goal",
        reason: "segmentation disagreement: is_new_goal true (1, 3), false (2)",
      },
    ]);
  });

  it("refuses an ensemble without judges", async () => {
    await expect(judgeWithEnsemble([], two, settings)).rejects.toThrow(RangeError);
  });
});

describe("a judge failing", () => {
  it("errors the conversation, naming the judge; the others' labels are handed over", async () => {
    const failing = new ScriptedModel([new Error("HTTP 503 server error")], { name: "down" });
    const [a, c] = scripted(labels("N s", ". s"), labels("N s", ". s"));
    const made: [number, string][] = [];
    const got = await judgeWithEnsemble(judges(a as Model, failing, c as Model), two, settings, {
      onJudgement: (index, outcome) => made.push([index, outcome.status]),
    });
    expect(got).toMatchObject({
      status: "errored",
      error: "judge 2 (scripted:down): model call failed: HTTP 503 server error",
    });
    expect("labels" in got).toBe(false);
    expect(got.outcomes.map((o) => o.status)).toEqual(["labelled", "errored", "labelled"]);
    expect(made.sort()).toEqual([
      [0, "labelled"],
      [1, "errored"],
      [2, "labelled"],
    ]);
  });

  it("errors it as well when a judge's answers stay unusable, every failure named", async () => {
    const bad = new ScriptedModel(["no", "no", "no"], { name: "bad" });
    const down = new ScriptedModel([new Error("timeout")], { name: "down" });
    const [a] = scripted(labels("N s", ". s"));
    const got = await judgeWithEnsemble(judges(a as Model, bad, down), two, settings);
    expect(got.status).toBe("errored");
    if (got.status !== "errored") throw new Error("unreachable");
    expect(got.error).toBe(
      "judge 2 (scripted:bad): no usable answer in 3 attempts (last: the reply has no JSON object); judge 3 (scripted:down): model call failed: timeout",
    );
    const errored = got.outcomes[1];
    expect(errored?.status === "errored" && errored.rejected).toHaveLength(3);
    expect(errored?.status === "errored" && errored.spend.calls).toBe(3);
  });
});

describe("judgements made earlier", () => {
  it("are not asked again; errored ones are, and only they are handed over", async () => {
    const stored = labelled(labels("N s", ". f E3"));
    const unused = new ScriptedModel([], { name: "unused" });
    const [again, third] = scripted(labels("N s", ". f E3"), labels("N s", ". s"));
    const made: number[] = [];
    const earlier: (JudgeOutcome | undefined)[] = [
      stored,
      { status: "errored", error: "x", spend: SPEND, rejected: [] },
    ];
    const got = await judgeWithEnsemble(
      judges(unused, again as Model, third as Model),
      two,
      settings,
      { earlier, onJudgement: (index) => made.push(index) },
    );
    expect(unused.requests).toHaveLength(0);
    expect(made.sort()).toEqual([1, 2]);
    expect(got.status).toBe("judged");
    expect(got.outcomes[0]).toBe(stored);
    if (got.status === "judged") expect(got.labels[1]).toMatchObject({ rcof: "E3" });
  });
});

describe("judges in parallel", () => {
  it("asks every judge at once", async () => {
    // A barrier: each judge answers only once all three have been asked, so judging them one
    // after another would never finish.
    let arrived = 0;
    let release: () => void = () => {};
    const all = new Promise<void>((resolve) => {
      release = resolve;
    });
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("the judges were not asked at once")), 2000).unref(),
    );
    const barrierModel = (name: string): Model => ({
      id: `barrier:${name}`,
      async complete(_request: ModelRequest): Promise<ModelResponse> {
        arrived++;
        if (arrived === 3) release();
        await Promise.race([all, timeout]);
        return {
          content: answer(labels("N s", ". s")),
          toolCalls: [],
          usage: { inputTokens: 1, outputTokens: 1 },
          finishReason: "stop",
          model: name,
        };
      },
    });
    const got = await judgeWithEnsemble(
      judges(barrierModel("a"), barrierModel("b"), barrierModel("c")),
      two,
      settings,
    );
    expect(got.status).toBe("judged");
    expect(arrived).toBe(3);
  });
});

describe("a signal", () => {
  it("hands over judgements that were made as labels, and those it cut short as errors", async () => {
    const controller = new AbortController();
    const quick = new TableModel("quick", () => answer(labels("N s", ". s")));
    // Answers, but the signal fires as its reply comes in (a kill between reply and storage).
    const last = new TableModel("last", () => answer(labels("N s", ". s")), {
      delayMs: 20,
      onDeliver: () => controller.abort(new Error("stop")),
    });
    const slow = new TableModel("slow", () => answer(labels("N s", ". s")), { delayMs: 5000 });
    const made: [number, string][] = [];
    const started = Date.now();
    const got = await judgeWithEnsemble(judges(quick, last, slow), two, settings, {
      signal: controller.signal,
      onJudgement: (index, outcome) => made.push([index, outcome.status]),
    });
    expect(Date.now() - started).toBeLessThan(2000);
    // The slow judge was cut short: handed over as an error (what its call cost is counted),
    // so a resume asks it again.
    expect(slow.delivered.size).toBe(0);
    expect(got.status).toBe("errored");
    // Both answers that arrived are kept: asking them again would judge the conversation twice.
    expect(made.sort()).toEqual([
      [0, "labelled"],
      [1, "labelled"],
      [2, "errored"],
    ]);
  });
});
