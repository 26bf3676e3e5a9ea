/**
 * The goals API over a real judging job: three scripted judges (ScriptedModel) label four
 * support conversations through runGoalJob, disagreeing on a cause (c2) and on where a goal
 * starts (c3), and one judge's answer is unusable on c4 (errored). The API must give the
 * report `clade goals report` gives, each turn with every judge's label side by side, the
 * queue `clade review --json` gives, and take a reviewer's label: only with the token, checked
 * against the field and the taxonomy, stored with who and when, GSR recomputed.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TurnLabel } from "../../src/eval/goals/labels.js";
import { buildGoalReport } from "../../src/eval/goals/report.js";
import { GoalStore } from "../../src/store/goal-log.js";
import {
  type ConversationListResponse,
  type ConversationResponse,
  type GoalListResponse,
  type GoalRunResponse,
  goalsApi,
  type QueueResponse,
  type ReviewResponse,
} from "../../src/web/api/goals.js";
import { startViewServer, type ViewServer } from "../../src/web/server.js";
import {
  JUDGES,
  type JudgedTable,
  storeJudgingJob,
  THREE_CONVERSATIONS,
} from "./fixtures/judging-job.js";
import { api, scratchDir, startViewer } from "./support.js";

/** c1..c3, and c4, on which judge 3's answer cannot be read: it errors and is never scored. */
const JUDGED: JudgedTable = {
  ...THREE_CONVERSATIONS,
  c4: [["N s", ". s"], ["N s", ". s"], "garbage"],
};

const scratch = scratchDir("goals");
const db = join(scratch.dir, "clade.db");
let viewer: ViewServer;

beforeAll(async () => {
  await storeJudgingJob(db, JUDGED);
  viewer = await startViewer(db);
});
afterAll(async () => {
  await viewer.close();
  scratch.remove();
});

/** A POST of a review with the viewer's token (or the headers given). */
function post(body: unknown, headers: Record<string, string> = {}) {
  return api<ReviewResponse & { error?: string }>(viewer, "/goals/support/reviews", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${viewer.token}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

describe("reading goal evaluations", () => {
  it("lists the evaluation with its counts and the judges' GSR", async () => {
    const { status, body } = await api<GoalListResponse>(viewer, "/goals");
    expect(status).toBe(200);
    expect(body.nextCursor).toBeNull();
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({
      id: "support",
      status: "complete",
      judges: JUDGES,
      taxonomy: "rcof",
      counts: { conversations: 4, judged: 3, errored: 1, pending: 0 },
      basis: "judges",
      // c1: 2 of 2 goals, c2: 0 of 1, c3: 0 of 1 (the vote keeps turns 1-3 one goal).
      gsr: { count: 2, total: 4, percent: 50 },
      openReview: 2,
    });
    const interval = body.items[0]?.gsr?.interval;
    expect(interval?.low).toBeLessThanOrEqual(50);
    expect(interval?.high).toBeGreaterThanOrEqual(50);
  });

  it("gives the report clade goals report gives, with the queue's size", async () => {
    const { status, body } = await api<GoalRunResponse>(viewer, "/goals/support");
    expect(status).toBe(200);
    const store = GoalStore.open(db, { readonly: true });
    const expected = JSON.parse(JSON.stringify(buildGoalReport(store, "support")));
    store.close();
    expect(body.report).toEqual(expected);
    expect(body.report.review).toEqual({ queued: 2, open: 2, reviewed: 0 });
    expect(body.report.judged?.causes.find((c) => c.code === "E1")).toMatchObject({ count: 1 });
    expect(body.codes.map((c) => c.code)).toEqual(["E1", "E2", "E3", "E4", "E5", "E6", "E7"]);
    expect(body.config.answerAttempts).toBe(1);
  });

  it("lists conversations by position, filtered by status or queued review", async () => {
    const all = await api<ConversationListResponse>(viewer, "/goals/support/conversations");
    expect(
      all.body.items.map((c) => [c.conversationId, c.status, c.goals, c.succeeded, c.open]),
    ).toEqual([
      ["c1", "judged", 2, 2, 0],
      ["c2", "judged", 1, 0, 1],
      ["c3", "judged", 1, 0, 1],
      ["c4", "errored", null, null, 0],
    ]);
    expect(all.body.items[3]?.error).toMatch(/judge 3/);
    const paged = await api<ConversationListResponse>(
      viewer,
      "/goals/support/conversations?limit=3",
    );
    expect(paged.body.items).toHaveLength(3);
    const rest = await api<ConversationListResponse>(
      viewer,
      `/goals/support/conversations?cursor=${paged.body.nextCursor}&limit=3`,
    );
    expect(rest.body.items.map((c) => c.position)).toEqual([3]);
    expect(rest.body.nextCursor).toBeNull();
    const queued = await api<ConversationListResponse>(
      viewer,
      "/goals/support/conversations?status=queued",
    );
    expect(queued.body.items.map((c) => c.conversationId)).toEqual(["c2", "c3"]);
    const errored = await api<ConversationListResponse>(
      viewer,
      "/goals/support/conversations?status=errored",
    );
    expect(errored.body.items.map((c) => c.conversationId)).toEqual(["c4"]);
  });

  it("segments a conversation by goals, every judge's label and rationale side by side", async () => {
    const { status, body } = await api<ConversationResponse>(
      viewer,
      "/goals/support/conversations/0",
    );
    expect(status).toBe(200);
    expect(body.segmentedBy).toBe("judges");
    expect(body.judges.map((j) => [j.model, j.status])).toEqual(JUDGES.map((m) => [m, "labelled"]));
    expect(body.goals.map((g) => [g.firstTurn, g.lastTurn, g.success])).toEqual([
      [1, 2, true],
      [3, 3, true],
    ]);
    expect(body.next).toBe(1);
    expect(body.previous).toBeNull();

    const c3 = (await api<ConversationResponse>(viewer, "/goals/support/conversations/2")).body;
    expect(c3.goals).toHaveLength(1);
    expect(c3.goals[0]).toMatchObject({ success: false, firstFailedTurn: 3, rootCause: "E1" });
    const turn2 = c3.goals[0]?.turns[1];
    expect(turn2?.judges.map((l) => (l as TurnLabel).is_new_goal)).toEqual([true, false, false]);
    expect(turn2?.judges.map((l) => (l as TurnLabel).rationale)).toEqual([
      "why N s",
      "why . s",
      "why . s",
    ]);
    expect(turn2?.disagreements).toEqual(["is_new_goal"]);
    expect(turn2?.queued).toEqual([expect.objectContaining({ field: "is_new_goal", open: true })]);
    expect(turn2?.turn.user).toBe("question 2 of c3");

    const c2 = (await api<ConversationResponse>(viewer, "/goals/support/conversations/1")).body;
    expect(c2.goals[0]?.turns[1]?.disagreements).toEqual(["quality", "rcof"]);
    // The errored conversation shows what each judge did, in one unlabelled group.
    const c4 = (await api<ConversationResponse>(viewer, "/goals/support/conversations/3")).body;
    expect(c4.segmentedBy).toBeNull();
    expect(c4.judges.map((j) => j.status)).toEqual(["labelled", "labelled", "errored"]);
    expect(c4.goals[0]?.turns[0]?.judges[2]).toBeNull();
  });

  it("gives the queue clade review --json gives: the open fields with the judges' labels", async () => {
    const { body } = await api<QueueResponse>(viewer, "/goals/support/queue");
    expect(body.schema).toBe("clade.review-queue/1");
    expect(body.items.map((i) => [i.conversation, i.turn_number, i.field])).toEqual([
      ["c2", 2, "rcof"],
      ["c3", 2, "is_new_goal"],
    ]);
    expect(body.items[0]?.reason).toMatch(/three-way disagreement: rcof E3 \(1\), E4 \(2\)/);
    expect(body.items[0]?.judges.map((j) => j.label?.rcof)).toEqual(["E3", "E4", null]);
    expect(body.items[0]?.vote.rcof).toBe("E3");
    const first = await api<QueueResponse>(viewer, "/goals/support/queue?limit=1");
    expect(first.body.items).toHaveLength(1);
    const second = await api<QueueResponse>(
      viewer,
      `/goals/support/queue?limit=1&cursor=${first.body.nextCursor}`,
    );
    expect(second.body.items.map((i) => i.conversation)).toEqual(["c3"]);
    expect(second.body.nextCursor).toBeNull();
  });

  it("answers 404 and 400 with one line", async () => {
    expect(await api(viewer, "/goals/nope")).toEqual({
      status: 404,
      body: { error: 'no goal evaluation "nope"' },
    });
    expect((await api(viewer, "/goals/support/conversations/9")).status).toBe(404);
    const bad = await api<{ error: string }>(viewer, "/goals/support/conversations?status=odd");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^query\.status: expected one of/);
    expect((await api(viewer, "/goals?cursor=zzz")).status).toBe(400);
    expect((await api(viewer, "/goals/support/conversations/x")).status).toBe(400);
  });
});

describe("a reviewer's label", () => {
  const flip = {
    position: 2,
    turnNumber: 2,
    field: "is_new_goal",
    value: true,
    reviewer: "alice",
    note: "turn 2 asks about something else",
  };

  it("needs the viewer's token, even on loopback", async () => {
    const without = await api<{ error: string }>(viewer, "/goals/support/reviews", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(flip),
    });
    expect(without.status).toBe(401);
    const wrong = await post(flip, { authorization: "Bearer not-the-token" });
    expect(wrong.status).toBe(401);
    const otherSite = await post(flip, { origin: "http://evil.example" });
    expect(otherSite.status).toBe(403);
    const { body } = await api<QueueResponse>(viewer, "/goals/support/queue");
    expect(body.items).toHaveLength(2);
  });

  it("checks the value against the field and the run's taxonomy", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...flip, value: "yes" }, /^json\.value: is_new_goal takes true or false$/],
      [
        { ...flip, field: "quality", value: "meh" },
        /^json\.value: quality takes "success" or "failure"$/,
      ],
      [{ ...flip, value: 3 }, /^json\.value: expected true, false, a string or null$/],
      [{ ...flip, field: "rcof", value: "E9" }, /^json\.value: rcof takes a code of taxonomy rcof/],
      [{ ...flip, turnNumber: 1, value: false }, /turn 1 always starts a goal/],
      [{ ...flip, turnNumber: 4 }, /has 3 turns/],
      [{ ...flip, position: 3 }, /conversation 3 is errored/],
      [{ ...flip, reviewer: " " }, /^json\.reviewer: must not be empty/],
      [{ ...flip, field: "other" }, /^json\.field: expected one of is_new_goal, quality, rcof$/],
      [{ ...flip, extra: 1 }, /^json/],
    ];
    for (const [body, error] of cases) {
      const answer = await post(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error, JSON.stringify(body)).toMatch(error);
    }
    expect((await post({ ...flip, position: 9 })).status).toBe(404);
    const malformed = await api<{ error: string }>(viewer, "/goals/support/reviews", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${viewer.token}` },
      body: "{not json",
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/JSON/);
    const { body } = await api<GoalRunResponse>(viewer, "/goals/support");
    expect(body.report.review).toEqual({ queued: 2, open: 2, reviewed: 0 });
  });

  it("is stored with who and when, and GSR is recomputed", async () => {
    const started = new Date().toISOString();
    const saved = await post(flip);
    expect(saved.status).toBe(200);
    expect(saved.body.review).toMatchObject({
      position: 2,
      turnNumber: 2,
      field: "is_new_goal",
      value: true,
      reviewer: "alice",
      note: "turn 2 asks about something else",
    });
    expect(saved.body.review.at >= started).toBe(true);
    // c3 is now two goals, turn 1 a success: 3 of 5.
    expect(saved.body.gsr.before).toMatchObject({ count: 2, total: 4, percent: 50 });
    expect(saved.body.gsr.after).toMatchObject({ count: 3, total: 5, percent: 60 });
    expect(saved.body.queue).toEqual({ queued: 2, open: 1, reviewed: 1 });

    const run = await api<GoalRunResponse>(viewer, "/goals/support");
    expect(run.body.report.judged?.gsr).toMatchObject({ count: 3, total: 5, percent: 60 });
    expect(run.body.run.gsr?.percent).toBe(60);
    expect(run.body.report.human?.reviews).toBe(1);

    const open = await api<ConversationListResponse>(
      viewer,
      "/goals/support/conversations?status=open",
    );
    expect(open.body.items.map((c) => [c.conversationId, c.open, c.queued])).toEqual([
      ["c2", 1, 1],
    ]);
    const queue = await api<QueueResponse>(viewer, "/goals/support/queue");
    expect(queue.body.items.map((i) => i.conversation)).toEqual(["c2"]);
    const all = await api<QueueResponse>(viewer, "/goals/support/queue?all=true");
    expect(all.body.items.map((i) => [i.conversation, i.review?.reviewer ?? null])).toEqual([
      ["c2", null],
      ["c3", "alice"],
    ]);

    const c3 = (await api<ConversationResponse>(viewer, "/goals/support/conversations/2")).body;
    expect(c3.goals.map((g) => [g.firstTurn, g.lastTurn, g.success])).toEqual([
      [1, 1, true],
      [2, 3, false],
    ]);
    const turn2 = c3.goals[1]?.turns[0];
    expect(turn2?.reviews).toEqual([
      expect.objectContaining({ reviewer: "alice", value: true, field: "is_new_goal" }),
    ]);
    expect(turn2?.queued[0]?.open).toBe(false);

    // The store holds it as clade review would have stored it.
    const store = GoalStore.open(db, { readonly: true });
    expect(store.reviews("support")).toEqual([saved.body.review]);
    store.close();
  });

  it("takes a cause or none for a three-way split, and a later label replaces an earlier one", async () => {
    const cause = await post({
      position: 1,
      turnNumber: 2,
      field: "rcof",
      value: null,
      reviewer: "bob",
    });
    expect(cause.status).toBe(200);
    expect(cause.body.queue).toEqual({ queued: 2, open: 0, reviewed: 2 });
    const back = await post({ ...flip, value: false, reviewer: "carol", note: undefined });
    expect(back.body.gsr.after).toMatchObject({ count: 2, total: 4 });
    const c2 = (await api<ConversationResponse>(viewer, "/goals/support/conversations/1")).body;
    expect(c2.goals[0]).toMatchObject({ success: false, rootCause: null });
    expect((await api<QueueResponse>(viewer, "/goals/support/queue")).body.items).toEqual([]);
  });
});

describe("a static bundle", () => {
  it("names every address the goal pages ask for, each of which answers", async () => {
    const store = GoalStore.open(db, { readonly: true });
    const addresses = goalsApi.bundle?.(store.db, new Set(["support"])) ?? [];
    expect(goalsApi.bundle?.(store.db, new Set(["another-run"]))).toEqual([]);
    store.close();
    expect(addresses).toEqual(
      expect.arrayContaining([
        "/goals",
        "/goals/support",
        "/goals/support/conversations",
        "/goals/support/conversations?status=queued",
        "/goals/support/conversations/0",
        "/goals/support/conversations/3",
        "/goals/support/queue",
        "/goals/support/queue?all=true",
      ]),
    );
    for (const address of addresses) {
      expect((await api(viewer, address)).status, address).toBe(200);
    }
  });
});

describe("off loopback", () => {
  it("needs the token for reads and writes alike", async () => {
    // A viewer that demands the token everywhere: what one bound to another host does.
    const guarded = await startViewServer({ db, port: 0, requireToken: true, token: "t0k" });
    try {
      expect((await api(guarded, "/goals/support")).status).toBe(401);
      const ok = await api<GoalListResponse>(guarded, "/goals?token=t0k");
      expect(ok.status).toBe(200);
      expect(ok.body.items[0]?.id).toBe("support");
      const write = { position: 0, turnNumber: 1, field: "quality", value: "failure" };
      const refused = await api(guarded, "/goals/support/reviews", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...write, reviewer: "mallory" }),
      });
      expect(refused.status).toBe(401);
      expect(
        (await api<QueueResponse>(guarded, "/goals/support/queue?all=true&token=t0k")).body.items,
      ).toHaveLength(2);
    } finally {
      await guarded.close();
    }
  });
});
