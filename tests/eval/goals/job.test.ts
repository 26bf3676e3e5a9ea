/**
 * The judging job: every conversation judged by the whole ensemble, `concurrency` judge calls
 * (concurrency ÷ judges conversations) at a time, judgements and verdicts stored as they are
 * made; resumable after an abort or a kill (SIGKILL of a child process) with no (conversation,
 * judge) pair answered twice, an errored conversation asking only its failed judge again; a
 * budget that stops new conversations; and end to end against the fake model server: three
 * judges over two wires (OpenAI-compatible and Anthropic), scripted labels, bad JSON, a 429, a
 * judge that keeps failing, prices and the response cache.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { voteTurns } from "../../../src/eval/goals/agreement.js";
import {
  conversationsAtOnce,
  type GoalJobProgress,
  runGoalJob,
} from "../../../src/eval/goals/job.js";
import type { Judge, JudgeSettings } from "../../../src/eval/goals/judge.js";
import type { TurnLabel } from "../../../src/eval/goals/labels.js";
import { buildGoalReport } from "../../../src/eval/goals/report.js";
import { resolveRubric } from "../../../src/eval/goals/rubric.js";
import { builtinTaxonomy } from "../../../src/eval/goals/taxonomy.js";
import { createModelClient } from "../../../src/model/client.js";
import { parseConfig } from "../../../src/model/config.js";
import { type ResolvedModel, resolveModel } from "../../../src/model/resolve.js";
import type { Model } from "../../../src/model/types.js";
import { GoalStore } from "../../../src/store/goal-log.js";
import { createResponseCache } from "../../../src/store/response-cache.js";
import type { JsonValue } from "../../../src/store/search-log.js";
import {
  type FakeModelServer,
  type FakeReply,
  type FakeRequest,
  startFakeModelServer,
} from "../../../src/testing/fake-model-server.js";
import {
  answer,
  conversation,
  conversationIdIn,
  labels,
  syntheticLabels,
  TableModel,
  type TableModelOptions,
} from "../../fixtures/goals/judging.js";

const rcof = builtinTaxonomy("rcof");
const settings: JudgeSettings = { rubric: resolveRubric("generic"), taxonomy: rcof };

let dir: string;
const stores: GoalStore[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-goal-job-"));
});
afterEach(() => {
  for (const store of stores.splice(0)) if (store.db.open) store.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(name = "clade.db"): GoalStore {
  const store = GoalStore.open(join(dir, name));
  stores.push(store);
  return store;
}

const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `c${i + from}`);

/** Starts (or resumes) a job over two-turn conversations with these ids. */
function begin(store: GoalStore, runId: string, conversationIds: string[]): { resumed: boolean } {
  return store.beginRun(
    runId,
    { judges: ["j1", "j2", "j3"], taxonomy: rcof as unknown as JsonValue },
    conversationIds.map((id) => ({
      id,
      conversation: conversation(id, 2) as unknown as JsonValue,
    })),
  );
}

const asJudges = (models: Model[]): Judge[] =>
  models.map((client, i) => ({ label: `judge ${i + 1} (${client.id})`, model: client.id, client }));

/** Three judges answering syntheticLabels; options per judge index. */
function tableJudges(options: (judge: number) => TableModelOptions = () => ({})) {
  const models = [0, 1, 2].map(
    (j) => new TableModel(`j${j + 1}`, (id) => answer(syntheticLabels(id, j)), options(j)),
  );
  return { models, judges: asJudges(models) };
}

/** The vote an uninterrupted ensemble gives for a conversation. */
const expectedVote = (id: string) => voteTurns([0, 1, 2].map((j) => syntheticLabels(id, j)));

/** What the job left per conversation. */
const snapshot = (store: GoalStore, runId: string) =>
  store
    .conversations(runId)
    .map((c) => ({ id: c.conversationId, status: c.status, labels: c.labels, queue: c.queue }));

/** "position|judge" of every labelled judgement stored. */
const labelledPairs = (store: GoalStore, runId: string) =>
  new Set(
    store
      .judgements(runId)
      .filter((j) => j.status === "labelled")
      .map((j) => `${j.position}|${j.judge}`),
  );

describe("a judging job", () => {
  it("judges every conversation with the ensemble, storing judgements and verdicts", async () => {
    const store = open();
    begin(store, "r", ids(12));
    const { models, judges } = tableJudges(() => ({ delayMs: 2 }));
    const progress: GoalJobProgress[] = [];
    const result = await runGoalJob({
      store,
      runId: "r",
      judges,
      settings,
      concurrency: 9,
      onProgress: (p) => progress.push(p),
    });
    expect(result).toMatchObject({
      stopReason: null,
      counts: { conversations: 12, pending: 0, judged: 12, errored: 0 },
      spentUsd: 0,
      verdicts: 12,
    });
    for (const [position, id] of ids(12).entries()) {
      const row = store.conversation("r", position);
      const vote = expectedVote(id);
      expect(row).toMatchObject({ conversationId: id, status: "judged", labels: vote.labels });
      expect(row?.queue).toEqual(vote.queue);
    }
    const judgements = store.judgements("r");
    expect(judgements).toHaveLength(36);
    expect(judgements.every((j) => j.status === "labelled" && j.answers === 1)).toBe(true);
    expect(judgements[4]).toMatchObject({
      position: 1,
      judge: 1,
      model: "table:j2",
      labels: syntheticLabels("c2", 1),
      reasoning: "Turn by turn, I find:",
      // A plain Model has no price.
      unpriced: true,
      costUsd: 0,
    });
    // Three conversations in flight, each asking every judge: three requests per judge at once.
    expect(models.map((m) => m.maxInFlight)).toEqual([3, 3, 3]);
    expect(models.every((m) => m.totalAsked === 12)).toBe(true);
    expect(progress.map((p) => p.done)).toEqual(ids(12).map((_, i) => i + 1));
    const queued = ids(12).reduce((sum, id) => sum + expectedVote(id).queue.length, 0);
    expect(queued).toBeGreaterThan(0);
    expect(progress.at(-1)).toEqual({
      done: 12,
      total: 12,
      judged: 12,
      errored: 0,
      queued,
      spentUsd: 0,
    });
  });

  it("counts concurrency in judge calls: concurrency ÷ judges conversations, at least one", async () => {
    expect(conversationsAtOnce(9, 3)).toBe(3);
    expect(conversationsAtOnce(8, 3)).toBe(2);
    expect(conversationsAtOnce(2, 3)).toBe(1);
    expect(conversationsAtOnce(64, 1)).toBe(64);
    for (const [concurrency, expected] of [
      [8, 2],
      [1, 1],
    ] as const) {
      const store = open(`c${concurrency}.db`);
      begin(store, "r", ids(6));
      const { models, judges } = tableJudges(() => ({ delayMs: 2 }));
      await runGoalJob({ store, runId: "r", judges, settings, concurrency });
      expect(models.map((m) => m.maxInFlight)).toEqual([expected, expected, expected]);
    }
  });

  it("refuses no judges and a concurrency that is not a positive integer", async () => {
    const store = open();
    begin(store, "r", ids(1));
    const { judges } = tableJudges();
    const base = { store, runId: "r", settings };
    await expect(runGoalJob({ ...base, judges: [], concurrency: 1 })).rejects.toThrow(RangeError);
    for (const concurrency of [0, 1.5, Number.NaN]) {
      await expect(runGoalJob({ ...base, judges, concurrency })).rejects.toThrow(
        /concurrency must be a positive integer/,
      );
    }
    expect(store.judgements("r")).toEqual([]);
  });

  it("errors a conversation stored damaged, without asking any judge", async () => {
    const store = open();
    store.beginRun("r", {}, [
      { id: "c1", conversation: conversation("c1", 2) as unknown as JsonValue },
      { id: "bad", conversation: { id: "bad", turns: [] } },
    ]);
    const { models, judges } = tableJudges();
    const result = await runGoalJob({ store, runId: "r", judges, settings, concurrency: 6 });
    expect(result.counts).toMatchObject({ judged: 1, errored: 1 });
    expect(store.conversation("r", 1)?.error).toMatch(/^stored conversation bad does not parse: /);
    expect(models.every((m) => m.asked.get("bad") === undefined)).toBe(true);
    expect(store.judgements("r", 1)).toEqual([]);
  });
});

describe("one judge failing", () => {
  it("errors that conversation only; a resume asks the failed judge alone", async () => {
    const store = open();
    begin(store, "r", ids(5));
    const models = [0, 1, 2].map(
      (j) =>
        new TableModel(`j${j + 1}`, (id) =>
          j === 1 && id === "c3" ? new Error("provider down") : answer(syntheticLabels(id, j)),
        ),
    );
    const progress: GoalJobProgress[] = [];
    const first = await runGoalJob({
      store,
      runId: "r",
      judges: asJudges(models),
      settings,
      concurrency: 6,
      onProgress: (p) => progress.push(p),
    });
    expect(first.stopReason).toBeNull();
    expect(first.counts).toEqual({ conversations: 5, pending: 0, judged: 4, errored: 1 });
    expect(progress.at(-1)).toMatchObject({ done: 5, judged: 4, errored: 1 });
    const c3 = store.conversation("r", 2);
    expect(c3).toMatchObject({
      status: "errored",
      error: "judge 2 (table:j2): model call failed: provider down",
      labels: null,
      queue: null,
    });
    expect(store.judgements("r", 2).map((j) => [j.judge, j.status, j.error])).toEqual([
      [0, "labelled", null],
      [1, "errored", "judge 2 (table:j2): model call failed: provider down"],
      [2, "labelled", null],
    ]);
    // Never a silent label: the report scores it as an error, not from the two judges left.
    const report = buildGoalReport(store, "r", { resamples: 10 });
    expect(report.judged?.erroredSessions).toBe(1);
    expect(report.judged?.sessions).toBe(4);

    const { models: again, judges } = tableJudges();
    const second = await runGoalJob({ store, runId: "r", judges, settings, concurrency: 6 });
    expect(second).toMatchObject({ stopReason: null, verdicts: 1 });
    expect(second.counts).toEqual({ conversations: 5, pending: 0, judged: 5, errored: 0 });
    expect(again.map((m) => [...m.asked])).toEqual([[], [["c3", 1]], []]);
    expect(store.conversation("r", 2)).toMatchObject({
      status: "judged",
      error: null,
      labels: expectedVote("c3").labels,
    });
  });
});

describe("resuming an aborted job", () => {
  it("answers every (conversation, judge) pair exactly once over both sessions", async () => {
    const path = "abort.db";
    let store = open(path);
    begin(store, "r", ids(60));
    // Judges 1 and 2 answer at once, judge 3 later and unevenly: an abort finds conversations
    // with some judgements stored and others in flight.
    const k = (id: string) => Number(id.slice(1));
    const first = tableJudges((j) => ({ delayMs: (id) => (j < 2 ? 1 : 5 + (k(id) % 7) * 3) }));
    const controller = new AbortController();
    const aborted = await runGoalJob({
      store,
      runId: "r",
      judges: first.judges,
      settings,
      concurrency: 18,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done >= 20) controller.abort(new Error("interrupted"));
      },
    });
    expect(aborted.stopReason).toBe("signal");
    const mid = store.counts("r");
    expect(mid.judged).toBeGreaterThanOrEqual(20);
    expect(mid.pending).toBeGreaterThan(30);
    expect(aborted.verdicts).toBe(mid.judged);
    const stored = labelledPairs(store, "r");
    // Some pending conversations keep the judgements made before the abort.
    const partial = store
      .conversations("r", ["pending"])
      .filter((c) => store.judgements("r", c.position).length > 0);
    expect(partial.length).toBeGreaterThan(0);
    // What the signal cut short is stored as an error (its calls counted), asked again later.
    const cut = store.judgements("r").filter((j) => j.status !== "labelled");
    expect(cut.every((j) => /interrupted/.test(j.error ?? ""))).toBe(true);
    store.close();

    store = open(path);
    expect(begin(store, "r", ids(60))).toEqual({ resumed: true });
    const second = tableJudges();
    const resumed = await runGoalJob({
      store,
      runId: "r",
      judges: second.judges,
      settings,
      concurrency: 18,
    });
    expect(resumed.stopReason).toBeNull();
    expect(resumed.verdicts).toBe(60 - mid.judged);
    expect(resumed.counts).toEqual({ conversations: 60, pending: 0, judged: 60, errored: 0 });
    for (const [position, id] of ids(60).entries()) {
      for (const j of [0, 1, 2]) {
        const before = first.models[j]?.delivered.get(id) ?? 0;
        const after = second.models[j]?.delivered.get(id) ?? 0;
        expect(before + after, `${id} judge ${j + 1}`).toBe(1);
        // A stored judgement is never asked again; a missing one is asked once.
        const asked = second.models[j]?.asked.get(id) ?? 0;
        expect(asked).toBe(stored.has(`${position}|${j}`) ? 0 : 1);
      }
    }

    // The same verdicts as a job that was never interrupted.
    const straight = open("straight.db");
    begin(straight, "r", ids(60));
    await runGoalJob({
      store: straight,
      runId: "r",
      judges: tableJudges().judges,
      settings,
      concurrency: 18,
    });
    expect(snapshot(store, "r")).toEqual(snapshot(straight, "r"));
  });

  it("a 10,000-conversation job resumed after an abort judges none twice", async () => {
    const store = open();
    const all = ids(10_000);
    begin(store, "big", all);
    const first = tableJudges();
    const controller = new AbortController();
    const aborted = await runGoalJob({
      store,
      runId: "big",
      judges: first.judges,
      settings,
      concurrency: 192,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done >= 4000) controller.abort();
      },
    });
    expect(aborted.stopReason).toBe("signal");
    expect(aborted.counts.judged).toBeGreaterThanOrEqual(4000);
    expect(aborted.counts.pending).toBeGreaterThan(5000);
    const second = tableJudges();
    const resumed = await runGoalJob({
      store,
      runId: "big",
      judges: second.judges,
      settings,
      concurrency: 192,
    });
    expect(resumed.counts).toEqual({
      conversations: 10_000,
      pending: 0,
      judged: 10_000,
      errored: 0,
    });
    expect(aborted.verdicts + resumed.verdicts).toBe(10_000);
    for (const j of [0, 1, 2]) {
      const a = first.models[j] as TableModel;
      const b = second.models[j] as TableModel;
      const twice = all.filter(
        (id) => (a.delivered.get(id) ?? 0) + (b.delivered.get(id) ?? 0) !== 1,
      );
      expect(twice, `judge ${j + 1}`).toEqual([]);
    }
    expect(store.judgements("big")).toHaveLength(30_000);
  });
});

describe("resuming a killed job", () => {
  it("asks only the pairs with no stored judgement after a SIGKILL", async () => {
    const db = join(dir, "killed.db");
    const root = fileURLToPath(new URL("../../..", import.meta.url));
    const url = (path: string) => pathToFileURL(join(root, path)).href;
    // .mts: an ES module wherever it lies, so top-level await works.
    const script = join(dir, "job.mts");
    writeFileSync(
      script,
      `
import { runGoalJob } from ${JSON.stringify(url("src/eval/goals/job.ts"))};
import { resolveRubric } from ${JSON.stringify(url("src/eval/goals/rubric.ts"))};
import { builtinTaxonomy } from ${JSON.stringify(url("src/eval/goals/taxonomy.ts"))};
import { GoalStore } from ${JSON.stringify(url("src/store/goal-log.ts"))};
import { answer, conversation, syntheticLabels, TableModel } from ${JSON.stringify(url("tests/fixtures/goals/judging.ts"))};

const rcof = builtinTaxonomy("rcof");
const store = GoalStore.open(process.argv[2]);
const ids = Array.from({ length: 400 }, (_, i) => "c" + (i + 1));
store.beginRun("k", { judges: ["j1", "j2", "j3"], taxonomy: rcof }, ids.map((id) => ({ id, conversation: conversation(id, 2) })));
const judges = [0, 1, 2].map((j) => {
  const client = new TableModel("j" + (j + 1), (id) => answer(syntheticLabels(id, j)), {
    delayMs: (id) => 2 + ((Number(id.slice(1)) + j * 3) % 7),
  });
  return { label: "judge " + (j + 1), model: client.id, client };
});
await runGoalJob({
  store, runId: "k", judges, settings: { rubric: resolveRubric("generic"), taxonomy: rcof }, concurrency: 24,
  onProgress: (p) => process.stdout.write(p.done + "\\n"),
});
process.stdout.write("finished\\n");
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", script, db], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    const killedAt = await new Promise<string>((done, fail) => {
      let out = "";
      child.stdout.on("data", (chunk) => {
        out += String(chunk);
        const lines = out.trim().split("\n");
        const last = lines.at(-1) ?? "";
        if (last === "finished" || Number(last) >= 80) {
          child.kill("SIGKILL");
          done(last);
        }
      });
      child.on("exit", (code) => fail(new Error(`the job exited (${code}) first: ${stderr}`)));
    });
    await new Promise((done) => child.once("close", done));
    expect(killedAt).not.toBe("finished");

    const store = open("killed.db");
    const killed = store.counts("k");
    expect(killed.judged).toBeGreaterThanOrEqual(80);
    expect(killed.pending).toBeGreaterThan(0);
    expect(store.getRun("k")?.status).toBe("running");
    const stored = labelledPairs(store, "k");
    const all = ids(400);
    expect(
      store.beginRun(
        "k",
        { judges: ["j1", "j2", "j3"], taxonomy: rcof as unknown as JsonValue },
        all.map((id) => ({ id, conversation: conversation(id, 2) as unknown as JsonValue })),
      ),
    ).toEqual({ resumed: true });
    const second = tableJudges();
    const resumed = await runGoalJob({
      store,
      runId: "k",
      judges: second.judges,
      settings,
      concurrency: 24,
    });
    expect(resumed.counts).toEqual({ conversations: 400, pending: 0, judged: 400, errored: 0 });
    for (const [position, id] of all.entries()) {
      for (const j of [0, 1, 2]) {
        const asked = second.models[j]?.asked.get(id) ?? 0;
        expect(asked, `${id} judge ${j + 1}`).toBe(stored.has(`${position}|${j}`) ? 0 : 1);
      }
      const row = store.conversation("k", position);
      expect(row?.labels, id).toEqual(expectedVote(id).labels);
    }
  });
});

describe("a budget", () => {
  /** $1 and $10 per million tokens: 1000 in and 100 out make $0.002 a call, $0.006 a conversation. */
  const PRICED: ResolvedModel = {
    name: "priced",
    spec: { provider: "openai", model: "judge" },
    params: {},
    price: { inputPerMTok: 1, outputPerMTok: 10 },
    stream: false,
  };

  function pricedJudges(answerFor?: (id: string, j: number) => string | Error) {
    const models = [0, 1, 2].map(
      (j) =>
        new TableModel(`j${j + 1}`, (id) =>
          answerFor ? answerFor(id, j) : answer(syntheticLabels(id, j)),
        ),
    );
    const clients = models.map((m) => createModelClient(PRICED, { retry: { maxRetries: 0 } }, m));
    return { models, judges: asJudges(clients) };
  }

  it("stops starting conversations once the spend reaches it, and is resumable", async () => {
    const store = open();
    begin(store, "r", ids(10));
    const first = pricedJudges();
    const stopped = await runGoalJob({
      store,
      runId: "r",
      judges: first.judges,
      settings,
      concurrency: 1,
      budgetUsd: 0.019,
    });
    // $0.018 after three conversations; the fourth's first judgement reaches $0.02.
    expect(stopped.stopReason).toBe("budget");
    expect(stopped.counts).toEqual({ conversations: 10, pending: 6, judged: 4, errored: 0 });
    expect(stopped.spentUsd).toBeCloseTo(0.024, 12);
    expect(store.spentUsd("r")).toBeCloseTo(0.024, 12);
    expect(store.judgements("r").every((j) => j.costUsd > 0 && !j.unpriced)).toBe(true);

    // Still over the budget: nothing starts.
    const none = pricedJudges();
    const idle = await runGoalJob({
      store,
      runId: "r",
      judges: none.judges,
      settings,
      concurrency: 1,
      budgetUsd: 0.019,
    });
    expect(idle).toMatchObject({ stopReason: "budget", verdicts: 0 });
    expect(none.models.every((m) => m.totalAsked === 0)).toBe(true);

    // A larger budget finishes it, each pair asked once over the sessions.
    const rest = pricedJudges();
    const done = await runGoalJob({
      store,
      runId: "r",
      judges: rest.judges,
      settings,
      concurrency: 6,
      budgetUsd: 1,
    });
    expect(done.stopReason).toBeNull();
    expect(done.counts.judged).toBe(10);
    expect(done.spentUsd).toBeCloseTo(0.06, 12);
    for (const id of ids(10)) {
      for (const j of [0, 1, 2]) {
        const asked = (first.models[j]?.asked.get(id) ?? 0) + (rest.models[j]?.asked.get(id) ?? 0);
        expect(asked, `${id} judge ${j + 1}`).toBe(1);
      }
    }
  });

  it("lets the conversations in flight finish and store everything", async () => {
    const store = open();
    begin(store, "r", ids(10));
    const { judges } = pricedJudges();
    const result = await runGoalJob({
      store,
      runId: "r",
      judges,
      settings,
      concurrency: 9,
      budgetUsd: 0.001,
    });
    expect(result.stopReason).toBe("budget");
    expect(result.counts).toMatchObject({ judged: 3, pending: 7 });
    // Every judged conversation has its three judgements; no pending one has any.
    for (const row of store.conversations("r")) {
      expect(store.judgements("r", row.position)).toHaveLength(row.status === "judged" ? 3 : 0);
    }
  });

  it("stops before retrying errored conversations too, and says so", async () => {
    const store = open();
    begin(store, "r", ids(3));
    const failing = pricedJudges((id, j) =>
      id === "c3" && j === 0 ? new Error("provider down") : answer(syntheticLabels(id, j)),
    );
    const first = await runGoalJob({
      store,
      runId: "r",
      judges: failing.judges,
      settings,
      concurrency: 1,
    });
    expect(first.counts).toEqual({ conversations: 3, pending: 0, judged: 2, errored: 1 });
    expect(store.spentUsd("r")).toBeCloseTo(0.016, 12);
    const retry = pricedJudges();
    const result = await runGoalJob({
      store,
      runId: "r",
      judges: retry.judges,
      settings,
      concurrency: 1,
      budgetUsd: 0.01,
    });
    // The errored conversation was not taken up again: the job stopped for the budget.
    expect(result).toMatchObject({ stopReason: "budget", verdicts: 0 });
    expect(retry.models.every((m) => m.totalAsked === 0)).toBe(true);
  });
});

describe("judges end to end against the fake model server", () => {
  let server: FakeModelServer;
  afterEach(async () => {
    await server.close();
  });

  const USAGE = { inputTokens: 1000, outputTokens: 100 };
  /** USD per million tokens: input, output. */
  const PRICES = { a: [2, 10], b: [3, 15], c: [1, 5] } as const;
  type JudgeName = keyof typeof PRICES;
  const NAMES: JudgeName[] = ["a", "b", "c"];
  const callCost = (j: JudgeName) =>
    (USAGE.inputTokens * PRICES[j][0] + USAGE.outputTokens * PRICES[j][1]) / 1e6;

  /** What each judge answers for each conversation. */
  const SCRIPT: Record<string, Record<JudgeName, TurnLabel[]>> = {
    c1: { a: labels("N s", ". s"), b: labels("N s", ". s"), c: labels("N s", ". s") },
    // 2 of 3 see a retrieval failure: accepted.
    c2: { a: labels("N s", ". f E3"), b: labels("N s", ". f E3"), c: labels("N s", ". s") },
    // Three causes: queued.
    c3: { a: labels("N s", ". f E3"), b: labels("N s", ". f E4"), c: labels("N s", ". s") },
    // Judge a answers bad JSON first.
    c4: { a: labels("N s", "N s"), b: labels("N s", "N s"), c: labels("N s", "N s") },
    // Judge c (Anthropic) is rate limited first.
    c5: { a: labels("N s", ". s"), b: labels("N s", ". s"), c: labels("N s", ". s") },
    // Judge b keeps failing with 503.
    c6: { a: labels("N s", ". s"), b: labels("N s", ". s"), c: labels("N s", ". s") },
  };

  /** Requests per "conversation|judge", and completed (200) replies per judge. */
  const asked = new Map<string, number>();
  const completions: Record<JudgeName, number> = { a: 0, b: 0, c: 0 };

  const judgeOf = (request: FakeRequest): JudgeName =>
    request.api === "anthropic"
      ? "c"
      : (request.body as { model: string }).model === "judge-a"
        ? "a"
        : "b";

  function rule(request: FakeRequest): FakeReply {
    const judge = judgeOf(request);
    const id = conversationIdIn(JSON.stringify(request.body)) as string;
    const key = `${id}|${judge}`;
    const n = (asked.get(key) ?? 0) + 1;
    asked.set(key, n);
    if (id === "c6" && judge === "b") return { fault: "server_error", status: 503 };
    if (id === "c5" && judge === "c" && n === 1)
      return { fault: "rate_limit", retryAfterSeconds: 0 };
    completions[judge]++;
    if (id === "c4" && judge === "a" && n === 1) {
      return {
        content: 'Both turns succeed.\n```json\n{"turns": [{"turn_number": 1,}]}\n```',
        usage: USAGE,
      };
    }
    const turns = SCRIPT[id]?.[judge];
    if (!turns) throw new Error(`no script for ${key}`);
    return { content: answer(turns, `Judge ${judge} on ${id}.`), usage: USAGE };
  }

  beforeEach(async () => {
    asked.clear();
    for (const j of NAMES) completions[j] = 0;
    server = await startFakeModelServer({ rule });
  });

  function clients(cache: ReturnType<typeof createResponseCache>): Judge[] {
    const config = parseConfig({
      models: {
        "local-a": {
          model: `openai-compatible:${server.openaiBaseUrl}#judge-a`,
          price: { inputPerMTok: PRICES.a[0], outputPerMTok: PRICES.a[1] },
        },
        "local-b": {
          model: `openai-compatible:${server.openaiBaseUrl}#judge-b`,
          price: { inputPerMTok: PRICES.b[0], outputPerMTok: PRICES.b[1] },
          maxRetries: 1,
        },
        claude: {
          model: "anthropic:claude-judge",
          apiKey: "test-key",
          price: { inputPerMTok: PRICES.c[0], outputPerMTok: PRICES.c[1] },
        },
      },
    });
    return ["local-a", "local-b", "claude"].map((name, i) => {
      const resolved = resolveModel(name, config, {});
      // The Anthropic SDK is pointed at the fake server's /v1/messages.
      const model =
        resolved.spec.provider === "anthropic"
          ? { ...resolved, spec: { ...resolved.spec, baseUrl: server.anthropicBaseUrl } }
          : resolved;
      const client = createModelClient(model, {
        cache,
        retry: { baseDelayMs: 1, maxDelayMs: 2 },
      });
      return { label: `judge ${i + 1} (${name})`, model: client.id, client };
    });
  }

  const CONVERSATIONS = Object.keys(SCRIPT);
  function start(store: GoalStore, runId: string): void {
    store.beginRun(
      runId,
      { judges: ["local-a", "local-b", "claude"], taxonomy: rcof as unknown as JsonValue },
      CONVERSATIONS.map((id) => ({
        id,
        conversation: conversation(id, 2) as unknown as JsonValue,
      })),
    );
  }

  it("votes, retries bad JSON and 429s, errors a failing judge's conversation, and accounts", async () => {
    const store = open();
    const cache = createResponseCache(store.db);
    const judges = clients(cache);
    start(store, "e2e");
    const result = await runGoalJob({ store, runId: "e2e", judges, settings, concurrency: 9 });
    expect(result.stopReason).toBeNull();
    expect(result.counts).toEqual({ conversations: 6, pending: 0, judged: 5, errored: 1 });
    expect(server.unexpectedRequests).toEqual([]);
    // Any mix of providers: both wires were spoken.
    expect(new Set(server.requests.map((r) => r.api))).toEqual(new Set(["openai", "anthropic"]));

    // Each pair reached the server once, but for the bad JSON (sent back once), the 429
    // (retried by the model layer) and the 503s (one retry, then given up).
    const extra: Record<string, number> = { "c4|a": 2, "c5|c": 2, "c6|b": 2 };
    for (const id of CONVERSATIONS) {
      for (const j of NAMES)
        expect(asked.get(`${id}|${j}`), `${id}|${j}`).toBe(extra[`${id}|${j}`] ?? 1);
    }

    const row = (id: string) => store.conversation("e2e", CONVERSATIONS.indexOf(id));
    expect(row("c1")).toMatchObject({ status: "judged", labels: labels("N s", ". s"), queue: [] });
    expect(row("c2")).toMatchObject({ status: "judged", queue: [] });
    expect(row("c2")?.labels).toMatchObject([{}, { quality: "failure", rcof: "E3" }]);
    expect(row("c3")?.queue).toEqual([
      {
        turn_number: 2,
        field: "rcof",
        reason: "three-way disagreement: rcof E3 (1), E4 (2), (success) (3)",
      },
    ]);
    expect((row("c4")?.labels as TurnLabel[] | null)?.map((l) => l.is_new_goal)).toEqual([
      true,
      true,
    ]);

    // The failing judge made its conversation an error, naming it; no label for it.
    const c6 = row("c6");
    expect(c6?.status).toBe("errored");
    expect(c6?.error).toMatch(/^judge 2 \(local-b\): model call failed: HTTP 503/);
    expect(c6?.labels).toBeNull();
    const c6Judgements = store.judgements("e2e", CONVERSATIONS.indexOf("c6"));
    expect(c6Judgements.map((j) => j.status)).toEqual(["labelled", "errored", "labelled"]);
    expect(c6Judgements[1]).toMatchObject({ labels: null, costUsd: 0, calls: 1 });

    const judgement = (id: string, judge: number) =>
      store.judgements("e2e", CONVERSATIONS.indexOf(id))[judge];
    // Bad JSON: sent back with the reason, the second answer taken, both calls paid.
    expect(judgement("c4", 0)).toMatchObject({ answers: 2, calls: 2 });
    expect(judgement("c4", 0)?.rejected).toEqual([
      expect.stringMatching(/^the JSON object does not parse/),
    ]);
    expect(judgement("c4", 0)?.costUsd).toBeCloseTo(2 * callCost("a"), 12);
    // 429: retried inside one call of the model layer; one answer, one (priced) call.
    // The retry shows as a second request to the provider.
    expect(judgement("c5", 2)).toMatchObject({
      answers: 1,
      calls: 1,
      providerAttempts: 2,
      rejected: [],
    });
    expect(judgement("c5", 2)?.costUsd).toBeCloseTo(callCost("c"), 12);
    expect(judgement("c1", 2)?.reasoning).toBe("Judge c on c1.");
    expect(judgement("c1", 1)?.model).toBe("openai-compatible:judge-b");

    // Cost: each completed reply at its judge's price, failures free.
    const expected = NAMES.reduce((sum, j) => sum + completions[j] * callCost(j), 0);
    expect(completions).toEqual({ a: 7, b: 5, c: 6 });
    expect(store.spentUsd("e2e")).toBeCloseTo(expected, 12);
    expect(result.spentUsd).toBeCloseTo(expected, 12);
    const report = buildGoalReport(store, "e2e", { resamples: 10 });
    expect(report.spend.costUsd).toBeCloseTo(expected, 12);
    expect(report.spend).toMatchObject({
      unpriced: false,
      calls: 7 + 5 + 1 + 6,
      inputTokens: 18 * 1000,
      outputTokens: 18 * 100,
      cacheHits: 0,
    });
    expect(report.errors).toEqual([{ conversation: "c6", error: c6?.error }]);
    expect(report.review).toEqual({ queued: 1, open: 1, reviewed: 0 });

    // A second job over the same conversations: every identical request is a cache hit, at no
    // cost; only the judge that failed reaches the server again.
    const before = server.requests.length;
    start(store, "again");
    const again = await runGoalJob({ store, runId: "again", judges, settings, concurrency: 9 });
    expect(again.counts).toEqual(result.counts);
    expect(
      server.requests
        .slice(before)
        .map((r) => `${conversationIdIn(JSON.stringify(r.body))}|${judgeOf(r)}`),
    ).toEqual(["c6|b", "c6|b"]);
    expect(store.spentUsd("again")).toBe(0);
    const hits = store.judgements("again").reduce((sum, j) => sum + j.cacheHits, 0);
    // 6 × 3 judgements, less c6's failed one, plus c4's second answer.
    expect(hits).toBe(17 + 1);
    expect(snapshot(store, "again").map(({ id: _, ...rest }) => rest)).toEqual(
      snapshot(store, "e2e").map(({ id: _, ...rest }) => rest),
    );
  });
});
