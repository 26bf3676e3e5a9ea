/**
 * Goal-evaluation jobs in the store (migration 10): a job keeps its configuration and its
 * conversations (a resume with either changed is refused), judgements are stored per judge and
 * a labelled one is never replaced, an errored one is (its spend kept), verdicts and counts,
 * reviews kept in order with the latest in force, spend summed, and a store from before the
 * migration upgraded with its runs intact.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/database.js";
import { GoalRunConflictError, GoalStore, type JudgementInput } from "../../src/store/goal-log.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { RunStore } from "../../src/store/run-store.js";
import { SearchStore } from "../../src/store/search-log.js";

let dir: string;
let store: GoalStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-goal-log-"));
  store = GoalStore.open(join(dir, "clade.db"));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const CONFIG = { judges: ["openai:a", "openai:b", "anthropic:c"], rubric: "generic", attempts: 3 };
const conversations = (...ids: string[]) =>
  ids.map((id) => ({ id, conversation: { id, turns: [{ turn_number: 1, user: id }] } }));

function judgement(
  position: number,
  judge: number,
  more: Partial<JudgementInput> = {},
): JudgementInput {
  return {
    position,
    judge,
    model: CONFIG.judges[judge] ?? "m",
    status: "labelled",
    labels: [
      { turn_number: 1, is_new_goal: true, quality: "success", rcof: null, rationale: "ok" },
    ],
    reasoning: "fine",
    error: null,
    rejected: [],
    answers: 1,
    calls: 1,
    inputTokens: 100,
    outputTokens: 10,
    costUsd: 0.25,
    unpriced: false,
    latencyMs: 12.5,
    cacheHits: 0,
    providerAttempts: 1,
    ...more,
  };
}

const withoutAt = <T extends { at: string }>(rows: T[]) => rows.map(({ at: _, ...row }) => row);

describe("GoalStore jobs", () => {
  it("creates a job with its conversations, in order, and resumes it unchanged", () => {
    expect(store.beginRun("g1", CONFIG, conversations("a", "b", "c"))).toEqual({ resumed: false });
    expect(store.getRun("g1")).toMatchObject({ id: "g1", config: CONFIG, status: "running" });
    const stored = store.conversations("g1");
    expect(stored.map((c) => [c.position, c.conversationId, c.status])).toEqual([
      [0, "a", "pending"],
      [1, "b", "pending"],
      [2, "c", "pending"],
    ]);
    expect(stored[1]).toEqual({
      position: 1,
      conversationId: "b",
      conversation: { id: "b", turns: [{ turn_number: 1, user: "b" }] },
      status: "pending",
      labels: null,
      queue: null,
      error: null,
      judgedAt: null,
    });
    expect(store.counts("g1")).toEqual({ conversations: 3, pending: 3, judged: 0, errored: 0 });

    store.setStatus("g1", "stopped", "signal");
    expect(store.getRun("g1")).toMatchObject({ status: "stopped", stopReason: "signal" });
    expect(store.beginRun("g1", { ...CONFIG }, conversations("a", "b", "c"))).toEqual({
      resumed: true,
    });
    expect(store.getRun("g1")).toMatchObject({ status: "running", stopReason: null });
    expect(store.conversations("g1")).toHaveLength(3);
  });

  it("refuses a resume with another configuration, naming the key", () => {
    store.beginRun("g1", CONFIG, conversations("a"));
    const other = { ...CONFIG, judges: ["openai:a", "openai:b", "openai:x"] };
    expect(() => store.beginRun("g1", other, conversations("a"))).toThrow(GoalRunConflictError);
    expect(() => store.beginRun("g1", other, conversations("a"))).toThrow(
      'goal evaluation "g1" already exists with a different configuration (judges); choose another --run-id',
    );
    expect(store.getRun("g1")?.config).toEqual(CONFIG);
  });

  it.each([
    ["one more", ["a", "b", "c"]],
    ["one fewer", ["a"]],
    ["another id", ["a", "x"]],
    ["another order", ["b", "a"]],
  ])("refuses a resume with other conversations (%s), the stored ones kept", (_, ids) => {
    store.beginRun("g1", CONFIG, conversations("a", "b"));
    store.setStatus("g1", "stopped", "signal");
    const error = (() => {
      try {
        store.beginRun("g1", CONFIG, conversations(...ids));
      } catch (e) {
        return e as Error;
      }
      throw new Error("expected a conflict");
    })();
    expect(error).toBeInstanceOf(GoalRunConflictError);
    expect(error.message).toBe(
      `goal evaluation "g1" already exists with other conversations (2 stored, ${ids.length} given); choose another --run-id`,
    );
    expect(store.conversations("g1").map((c) => c.conversationId)).toEqual(["a", "b"]);
    // The refused resume changed nothing: the transaction rolled back the status too.
    expect(store.getRun("g1")).toMatchObject({ status: "stopped", stopReason: "signal" });
  });

  it("refuses two conversations with one id, writing nothing", () => {
    expect(() => store.beginRun("g1", CONFIG, conversations("a", "a"))).toThrow();
    expect(store.getRun("g1")).toBeUndefined();
    expect(store.conversations("g1")).toEqual([]);
  });

  it("lists jobs oldest first, and refuses a status for an unknown job", () => {
    store.beginRun("g1", CONFIG, conversations("a"));
    store.beginRun("g2", {}, conversations("a"));
    store.setStatus("g2", "complete");
    expect(store.listRuns().map((r) => [r.id, r.status])).toEqual([
      ["g1", "running"],
      ["g2", "complete"],
    ]);
    expect(() => store.setStatus("nope", "complete")).toThrow(StoreError);
    expect(store.getRun("nope")).toBeUndefined();
  });
});

describe("GoalStore judgements", () => {
  beforeEach(() => {
    store.beginRun("g1", CONFIG, conversations("a", "b"));
  });

  it("round-trips a judgement of each kind", () => {
    store.saveJudgement("g1", judgement(0, 0));
    store.saveJudgement(
      "g1",
      judgement(0, 2, {
        status: "errored",
        labels: null,
        reasoning: null,
        error: "judge 3 (c): model call failed: HTTP 503",
        rejected: ["the reply has no JSON object"],
        answers: 1,
        calls: 2,
        costUsd: 0.5,
        unpriced: true,
        latencyMs: null,
        cacheHits: 1,
      }),
    );
    store.saveJudgement("g1", judgement(1, 1));
    const rows = store.judgements("g1", 0);
    expect(withoutAt(rows)).toEqual([
      judgement(0, 0),
      judgement(0, 2, {
        status: "errored",
        labels: null,
        reasoning: null,
        error: "judge 3 (c): model call failed: HTTP 503",
        rejected: ["the reply has no JSON object"],
        answers: 1,
        calls: 2,
        costUsd: 0.5,
        unpriced: true,
        latencyMs: null,
        cacheHits: 1,
      }),
    ]);
    expect(rows.every((r) => !Number.isNaN(Date.parse(r.at)))).toBe(true);
    expect(store.judgements("g1").map((j) => [j.position, j.judge])).toEqual([
      [0, 0],
      [0, 2],
      [1, 1],
    ]);
    expect(store.spentUsd("g1")).toBeCloseTo(1, 12);
  });

  it("never replaces a labelled judgement", () => {
    store.saveJudgement("g1", judgement(0, 1, { reasoning: "first" }));
    expect(() => store.saveJudgement("g1", judgement(0, 1, { reasoning: "second" }))).toThrow(
      'goal evaluation "g1": conversation 0 already has judge 2\'s labels',
    );
    expect(() =>
      store.saveJudgement("g1", judgement(0, 1, { status: "errored", labels: null, error: "x" })),
    ).toThrow(StoreError);
    expect(store.judgements("g1", 0)).toEqual([
      expect.objectContaining({ status: "labelled", reasoning: "first" }),
    ]);
    expect(store.spentUsd("g1")).toBe(0.25);
  });

  it("replaces an errored judgement, keeping what the failed attempts spent", () => {
    const failed = judgement(1, 0, {
      status: "errored",
      labels: null,
      reasoning: null,
      error: "no usable answer",
      rejected: ["a", "b", "c"],
      answers: 3,
      calls: 3,
      inputTokens: 300,
      outputTokens: 30,
      costUsd: 0.75,
      latencyMs: 30,
      cacheHits: 1,
    });
    store.saveJudgement("g1", failed);
    store.saveJudgement("g1", {
      ...failed,
      error: "again",
      calls: 1,
      costUsd: 0.25,
      latencyMs: null,
    });
    store.saveJudgement("g1", judgement(1, 0, { costUsd: 0.5, unpriced: true }));
    const [row] = store.judgements("g1", 1);
    // The labelled judgement is the one in force; its usage covers every call made for it.
    expect(row).toMatchObject({
      status: "labelled",
      error: null,
      rejected: [],
      calls: 3 + 1 + 1,
      inputTokens: 300 + 300 + 100,
      outputTokens: 30 + 30 + 10,
      unpriced: true,
      latencyMs: 30 + 12.5,
      cacheHits: 1 + 1 + 0,
    });
    expect(row?.costUsd).toBeCloseTo(0.75 + 0.25 + 0.5, 12);
    expect(store.spentUsd("g1")).toBeCloseTo(1.5, 12);
  });

  it("refuses a judgement of a conversation the job does not have", () => {
    expect(() => store.saveJudgement("g1", judgement(5, 0))).toThrow();
    expect(() => store.saveJudgement("other", judgement(0, 0))).toThrow();
    expect(store.judgements("g1")).toEqual([]);
    expect(store.spentUsd("g1")).toBe(0);
    expect(store.spentUsd("other")).toBe(0);
  });
});

describe("GoalStore verdicts and reviews", () => {
  beforeEach(() => {
    store.beginRun("g1", CONFIG, conversations("a", "b", "c"));
  });

  it("records verdicts, filters by status and counts them", () => {
    const labels = [{ turn_number: 1, is_new_goal: true, quality: "failure", rcof: "E3" }];
    const queue = [{ turn_number: 1, field: "rcof", reason: "three-way disagreement" }];
    store.setVerdict("g1", 0, { status: "errored", error: "judge 2 failed" });
    store.setVerdict("g1", 2, { status: "judged", labels, queue });
    expect(store.counts("g1")).toEqual({ conversations: 3, pending: 1, judged: 1, errored: 1 });
    expect(store.conversations("g1", ["pending", "errored"]).map((c) => c.conversationId)).toEqual([
      "a",
      "b",
    ]);
    expect(store.conversation("g1", 0)).toMatchObject({
      status: "errored",
      error: "judge 2 failed",
      labels: null,
      queue: null,
    });
    // An errored conversation judged on resume loses its error.
    store.setVerdict("g1", 0, { status: "judged", labels, queue: [] });
    const a = store.conversation("g1", 0);
    expect(a).toMatchObject({ status: "judged", error: null, labels, queue: [] });
    expect(Number.isNaN(Date.parse(a?.judgedAt ?? ""))).toBe(false);
    expect(store.conversation("g1", 2)).toMatchObject({ labels, queue });
    expect(store.counts("g1")).toEqual({ conversations: 3, pending: 1, judged: 2, errored: 0 });
    // Queued fields over the judged conversations: c's one, a's none.
    expect(store.queuedFields("g1")).toBe(1);
    expect(store.conversation("g1", 9)).toBeUndefined();
    expect(() => store.setVerdict("g1", 9, { status: "errored", error: "x" })).toThrow(
      'goal evaluation "g1" has no conversation at position 9',
    );
    expect(store.counts("none")).toEqual({ conversations: 0, pending: 0, judged: 0, errored: 0 });
  });

  it("keeps every review in order, with who, when and the note", () => {
    const first = store.addReview("g1", {
      position: 1,
      turnNumber: 2,
      field: "rcof",
      value: "E3",
      reviewer: "ana",
    });
    const second = store.addReview("g1", {
      position: 1,
      turnNumber: 2,
      field: "rcof",
      value: null,
      reviewer: "ben",
      note: "not a retrieval problem",
    });
    store.addReview("g1", {
      position: 0,
      turnNumber: 1,
      field: "quality",
      value: "failure",
      reviewer: "ana",
    });
    expect(second).toBeGreaterThan(first);
    const reviews = store.reviews("g1");
    expect(reviews.map(({ at: _, ...r }) => r)).toEqual([
      { id: first, position: 1, turnNumber: 2, field: "rcof", value: "E3", reviewer: "ana" },
      {
        id: second,
        position: 1,
        turnNumber: 2,
        field: "rcof",
        value: null,
        reviewer: "ben",
        note: "not a retrieval problem",
      },
      expect.objectContaining({ position: 0, field: "quality", value: "failure" }),
    ]);
    // The latest per field is the one in force: the last one in the list.
    const inForce = new Map(reviews.map((r) => [`${r.position}:${r.turnNumber}:${r.field}`, r]));
    expect(inForce.get("1:2:rcof")?.value).toBeNull();
    expect(store.reviews("other")).toEqual([]);
  });

  it("refuses a review of a conversation the job does not have, or of an unknown field", () => {
    expect(() =>
      store.addReview("g1", {
        position: 3,
        turnNumber: 1,
        field: "quality",
        value: "success",
        reviewer: "x",
      }),
    ).toThrow('goal evaluation "g1" has no conversation at position 3');
    expect(() =>
      store.addReview("g1", {
        position: 0,
        turnNumber: 1,
        field: "rationale" as never,
        value: "x",
        reviewer: "x",
      }),
    ).toThrow();
    expect(store.reviews("g1")).toEqual([]);
  });
});

describe("the goal tables in a store", () => {
  it("share a file with runs and searches, at the latest schema", () => {
    store.close();
    const path = join(dir, "shared.db");
    const runs = RunStore.open(path);
    expect(runs.db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    runs.startRun({ id: "r1", env: "helpdesk", envVersion: "1", agent: "assistant", config: {} });
    const goals = new GoalStore(runs.db);
    goals.beginRun("g1", CONFIG, conversations("a"));
    expect(runs.listRuns().map((r) => r.id)).toEqual(["r1"]);
    expect(goals.listRuns().map((r) => r.id)).toEqual(["g1"]);
    runs.close();
    store = GoalStore.open(path, { readonly: true });
    expect(store.counts("g1").pending).toBe(1);
  });

  it("upgrades a store from before goal evaluation (schema 9), its runs and searches intact", () => {
    store.close();
    const path = join(dir, "old.db");
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    for (const migration of MIGRATIONS.slice(0, 9)) raw.exec(migration);
    raw.pragma("user_version = 9");
    raw
      .prepare(
        `INSERT INTO runs (id, env, env_version, agent, config, status, created_at, updated_at)
         VALUES ('r1', 'maze', '1.1.0', 'random', '{}', 'complete', 'x', 'x')`,
      )
      .run();
    raw
      .prepare(
        `INSERT INTO searches (id, config, status, created_at, updated_at)
         VALUES ('s1', '{"method":"hgm"}', 'complete', 'x', 'x')`,
      )
      .run();
    raw.close();

    // A reader sees an upgraded copy: no jobs yet.
    const reader = GoalStore.open(path, { readonly: true });
    expect(reader.listRuns()).toEqual([]);
    reader.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(9);
    check.close();

    store = GoalStore.open(path);
    expect(store.db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    store.beginRun("g1", CONFIG, conversations("a"));
    expect(new SearchStore(store.db).getSearch("s1")?.status).toBe("complete");
    const runs = RunStore.open(path, { readonly: true });
    expect(runs.listRuns().map((r) => r.id)).toEqual(["r1"]);
    runs.close();
  });

  it("are required: a database without them is refused", () => {
    const raw = new Database(join(dir, "bare.db"));
    expect(() => new GoalStore(raw)).toThrow(/no goal-evaluation tables/);
    raw.close();
  });
});
