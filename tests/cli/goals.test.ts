/**
 * `clade goals` and `clade goals report` as a user runs them: GSR from the labels that came with
 * the data (the fixture formats, a helpdesk run) equal to the figures counted by hand or from the
 * stored ground truth; three teacher judges on the fake model server (real HTTP, the real model
 * layer: answers sent back when unusable, a 429 retried, a 5xx beyond retries an error, priced
 * calls), their report (agreement with the ground truth, Fleiss' κ, the queue, spend) and exit
 * codes; the built CLI killed mid-job and resumed without judging anything twice; conflicts; the
 * budget; bad input as one line that stores nothing.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStore } from "../../src/store/run-store.js";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/fake-model-server.js";
import { runCli } from "../fixtures/cli.js";
import {
  disagreeing,
  JUDGES,
  judgeRequests,
  judgeRule,
  servedCost,
  TRUTH,
  writeDialogues,
  writeJudgeConfig,
  writeTruth,
} from "../fixtures/goals/cli-judges.js";

const cli = runCli;
const FIXTURES = join(import.meta.dirname, "..", "fixtures", "goals");
const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "clade.js");
const PRICE = { inputPerMTok: 1000, outputPerMTok: 2000 };

let dir: string;
let db: string;
let server: FakeModelServer;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-goals-"));
  db = join(dir, "clade.db");
  server = await startFakeModelServer();
});

afterEach(async () => {
  await server.close();
});

interface Label {
  is_new_goal: boolean;
  quality: string;
  rcof: string | null;
}

interface Rate {
  count: number;
  total: number;
  percent: number | null;
}

interface Metrics {
  sessions: number;
  erroredSessions: number;
  gsr: Rate;
  multiTurnGsr: Rate;
  turnSuccessRate: Rate;
  failedGoals: number;
  causes: { code: string; count: number }[];
  unattributed: { count: number };
  turnLevel?: boolean;
}

interface FieldAgreement {
  items: number;
  agreed: number;
  accuracy: number | null;
  kappa: number | null;
}

interface Report {
  schema: string;
  runId: string;
  status: string;
  stopReason: string | null;
  judges: string[];
  counts: { conversations: number; pending: number; judged: number; errored: number };
  judged: Metrics | null;
  groundTruth: Metrics | null;
  agreement: {
    turns: {
      judges: { fields: Record<string, FieldAgreement> }[];
      ensemble: { fields: Record<string, FieldAgreement> };
    } | null;
    outcome: unknown;
  } | null;
  among: {
    labellers: number;
    fields: Record<string, { items: number; unanimous: number; kappa: number | null }>;
  } | null;
  review: { queued: number; open: number; reviewed: number };
  spend: {
    costUsd: number;
    unpriced: boolean;
    calls: number;
    inputTokens: number;
    outputTokens: number;
    cacheHits: number;
    providerAttempts: number;
  };
  errors: { conversation: string; error: string }[];
}

/** GSR and friends counted by hand from per-turn labels: goals start at is_new_goal. */
function handCount(sessions: readonly (readonly Label[])[]) {
  let goals = 0;
  let succeeded = 0;
  let multi = 0;
  let multiSucceeded = 0;
  let turns = 0;
  let goodTurns = 0;
  const causes = new Map<string, number>();
  let unattributed = 0;
  for (const session of sessions) {
    const split: Label[][] = [];
    session.forEach((turn, i) => {
      if (i === 0 || turn.is_new_goal) split.push([]);
      split.at(-1)?.push(turn);
    });
    for (const goal of split) {
      goals++;
      turns += goal.length;
      goodTurns += goal.filter((t) => t.quality === "success").length;
      const ok = goal.every((t) => t.quality === "success");
      if (goal.length > 1) multi++;
      if (ok) {
        succeeded++;
        if (goal.length > 1) multiSucceeded++;
        continue;
      }
      const cause = goal.find((t) => t.quality === "failure")?.rcof ?? null;
      if (cause === null) unattributed++;
      else causes.set(cause, (causes.get(cause) ?? 0) + 1);
    }
  }
  return { goals, succeeded, multi, multiSucceeded, turns, goodTurns, causes, unattributed };
}

function oneLineError(result: { code: number; stdout: string; stderr: string }): string {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^clade: error: /);
  return lines[0] as string;
}

function query<T>(sql: string, ...params: unknown[]): T[] {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare(sql).all(...params) as T[];
  } finally {
    conn.close();
  }
}

/** The goal tables, whole, for "nothing changed" checks. */
function goalTables(): unknown {
  if (!existsSync(db)) return null;
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const has = conn
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'goal_runs'")
      .get();
    if (!has) return null;
    return ["goal_runs", "goal_conversations", "goal_judgements", "goal_reviews"].map((t) =>
      conn.prepare(`SELECT * FROM ${t}`).all(),
    );
  } finally {
    conn.close();
  }
}

function goalRunCount(): number {
  const tables = goalTables() as unknown[][] | null;
  return tables ? (tables[0] as unknown[]).length : 0;
}

function json(result: { code: number; stdout: string; stderr: string }, code = 0): Report {
  expect(result.stderr).not.toMatch(/clade: error/);
  expect(result.code).toBe(code);
  expect(result.stdout.trimEnd().split("\n")).toHaveLength(1);
  const report = JSON.parse(result.stdout) as Report;
  expect(report.schema).toBe("clade.goals-report/1");
  return report;
}

/** The ground-truth row of the GSR table. */
function truthRow(stdout: string): string {
  const row = stdout.split("\n").find((line) => line.startsWith("ground truth  "));
  expect(row).toBeDefined();
  return row as string;
}

const pct = (count: number, total: number) => `${((count / total) * 100).toFixed(1)}%`;

describe("ground truth only", () => {
  it("τ-bench results: one goal per conversation, succeeded iff reward 1 (counted by hand)", async () => {
    const file = join(FIXTURES, "tau.json");
    // 12#0 (1 turn, reward 1), 3#0 (2 turns, reward 0), 12#1 (1 turn, reward 0); task 5 raised
    // (traj []) and is left out: 3 goals, 1 succeeded; 1 multi-turn goal, failed, unattributed.
    const report = json(await cli("goals", file, "--db", db, "--json"));
    expect(report).toMatchObject({ status: "not stored", judges: [], judged: null });
    expect(report.counts.conversations).toBe(3);
    expect(report.groundTruth).toMatchObject({
      sessions: 3,
      turnLevel: false,
      gsr: { count: 1, total: 3 },
      multiTurnGsr: { count: 0, total: 1, percent: 0 },
      failedGoals: 2,
      unattributed: { count: 2 },
    });
    expect(report.groundTruth?.gsr.percent).toBeCloseTo(100 / 3, 10);
    expect(report.groundTruth?.causes.every((c) => c.count === 0)).toBe(true);
    const table = await cli("goals", file, "--db", db);
    expect(table.code).toBe(0);
    expect(truthRow(table.stdout)).toMatch(
      /^ground truth\s+3\s+3\s+33\.3% .*\s1\s+0\.0% .*n\/a \(outcome only\)/,
    );
    expect(table.stdout).toMatch(/unattributed\s+2 \(100\.0%\)/);
    expect(existsSync(db)).toBe(false);
  });

  it("labelled dialogues: goals, multi-turn goals, turns and causes (counted by hand)", async () => {
    const file = join(FIXTURES, "dialogues.json");
    // d1: [1 new s, 2 . f E2] [3 new s] [4 new f (no cause)]; dialogue 7 is unlabelled.
    const report = json(await cli("goals", file, "--db", db, "--json"));
    expect(report.counts.conversations).toBe(2);
    expect(report.groundTruth).toMatchObject({
      sessions: 1,
      turnLevel: true,
      gsr: { count: 1, total: 3 },
      multiTurnGsr: { count: 0, total: 1 },
      turnSuccessRate: { count: 2, total: 4, percent: 50 },
      failedGoals: 2,
      unattributed: { count: 1 },
    });
    const causes = Object.fromEntries(
      report.groundTruth?.causes.map((c) => [c.code, c.count]) ?? [],
    );
    expect(causes).toEqual({ E1: 0, E2: 1, E3: 0, E4: 0, E5: 0, E6: 0, E7: 0 });
    const table = await cli("goals", file, "--db", db);
    expect(table.code).toBe(0);
    expect(truthRow(table.stdout)).toMatch(
      /^ground truth\s+1\s+3\s+33\.3% .*\s1\s+0\.0% .*\s50\.0% /,
    );
    expect(table.stdout).toMatch(/E2\s+Refusal to answer\s+1 \(50\.0%\)/);
    expect(table.stdout).toMatch(/\(1 conversation without labels left out\)/);
    // Stored under --run-id, the same figures; `goals report` prints what the command printed.
    const stored = json(await cli("goals", file, "--run-id", "dlg", "--db", db, "--json"));
    expect(stored).toMatchObject({ runId: "dlg", status: "complete", stopReason: null });
    expect(stored.groundTruth).toEqual(report.groundTruth);
    const again = json(await cli("goals", "report", "dlg", "--db", db, "--json"));
    expect(again).toEqual(stored);
    const text = await cli("goals", "report", "dlg", "--db", db);
    expect(text.code).toBe(0);
    expect(truthRow(text.stdout)).toBe(truthRow(table.stdout));
    // `goals list` finds it: 2 conversations, nothing pending, scored from ground truth.
    const list = await cli("goals", "list", "--db", db);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^dlg\s+complete\s+2\s+0\s+0\s+0\s+none \(ground truth\)\s+rcof\s/m,
    );
  });

  it("chat JSONL without labels: nothing to score without judges (one line, nothing stored)", async () => {
    const result = await cli(
      ...["goals", join(FIXTURES, "chat.jsonl"), "--run-id", "c", "--db", db],
    );
    expect(oneLineError(result)).toMatch(/no conversation carries labels/);
    expect(existsSync(db)).toBe(false);
  });

  it("a taxonomy of your own, by name in clade.config or as a file, counts the data's codes", async () => {
    const support = {
      name: "support",
      codes: [
        { code: "S1", name: "Wrong answer", definition: "The reply is wrong." },
        { code: "S2", name: "No answer", definition: "The reply is missing." },
      ],
    };
    const config = join(dir, "tax.config.json");
    writeFileSync(config, JSON.stringify({ taxonomies: { support } }));
    const file = writeDialogues(join(dir, "support.json"), [
      { id: "s1", truth: ["N f S1", ". s", "N f S2"] },
      { id: "s2", truth: ["N s", ". f S1"] },
    ]);
    // Goals: s1 [f S1, s] [f S2], s2 [s, f S1]: 3 goals, none succeeded; causes S1 2, S2 1.
    const byName = json(
      await cli("goals", file, "--taxonomy", "support", "--config", config, "--db", db, "--json"),
    );
    expect(byName.groundTruth).toMatchObject({
      taxonomy: "support",
      gsr: { count: 0, total: 3, percent: 0 },
      multiTurnGsr: { count: 0, total: 2 },
      causes: [
        { code: "S1", count: 2 },
        { code: "S2", count: 1 },
      ],
      unattributed: { count: 0 },
    });
    const taxonomyFile = join(dir, "support.taxonomy.json");
    writeFileSync(taxonomyFile, JSON.stringify(support));
    const byFile = json(await cli("goals", file, "--taxonomy", taxonomyFile, "--db", db, "--json"));
    expect(byFile.groundTruth).toEqual(byName.groundTruth);
    // Under the default taxonomy (RCOF) those codes do not fit.
    expect(oneLineError(await cli("goals", file, "--db", db))).toMatch(
      /conversation s1 .*ground truth: .*S1.*--taxonomy/,
    );
    // A format the file is not in.
    expect(oneLineError(await cli("goals", file, "--format", "tau", "--db", db))).toContain(file);
    expect(existsSync(db)).toBe(false);
  });

  it("a helpdesk run: GSR equals the one counted from the episodes' stored ground truth", async () => {
    const evaluated = await cli(
      ...["eval", "--env", "helpdesk", "--agent", "assistant", "--tasks", "0-19"],
      ...["--run-id", "hd", "--db", db],
    );
    expect(evaluated.code).toBe(0);
    // The ground truth as the environment stored it: the last step's info.groundTruth.turns.
    const store = RunStore.open(db, { readonly: true });
    const sessions = store.episodes("hd").map((episode) => {
      const steps = store.steps(episode.id);
      const truth = steps.at(-1)?.info.groundTruth as { turns: Label[] } | undefined;
      expect(truth).toBeDefined();
      return (truth as { turns: Label[] }).turns;
    });
    store.close();
    expect(sessions).toHaveLength(20);
    const hand = handCount(sessions);
    expect(hand.goals).toBeGreaterThan(20);
    expect(hand.succeeded).toBeLessThan(hand.goals);

    const result = await cli("goals", "hd", "--format", "run", "--db", db, "--json");
    const report = json(result);
    const truth = report.groundTruth as Metrics;
    expect(truth).toMatchObject({
      sessions: 20,
      turnLevel: true,
      gsr: { count: hand.succeeded, total: hand.goals },
      multiTurnGsr: { count: hand.multiSucceeded, total: hand.multi },
      turnSuccessRate: { count: hand.goodTurns, total: hand.turns },
      failedGoals: hand.goals - hand.succeeded,
      unattributed: { count: hand.unattributed },
    });
    for (const cause of truth.causes) expect(cause.count).toBe(hand.causes.get(cause.code) ?? 0);
    expect(truth.gsr.percent).toBeCloseTo((hand.succeeded / hand.goals) * 100, 10);

    const table = await cli("goals", "hd", "--format", "run", "--db", db);
    expect(table.code).toBe(0);
    const row = truthRow(table.stdout);
    expect(row).toMatch(
      new RegExp(
        `^ground truth\\s+20\\s+${hand.goals}\\s+${pct(hand.succeeded, hand.goals).replace(".", "\\.")} .*\\s${hand.multi}\\s+${pct(hand.multiSucceeded, hand.multi).replace(".", "\\.")} `,
      ),
    );

    // Stored (no judges): the same figures, and `goals report` repeats them.
    const stored = json(
      await cli("goals", "hd", "--format", "run", "--run-id", "hd-truth", "--db", db, "--json"),
    );
    expect(stored).toMatchObject({ runId: "hd-truth", status: "complete" });
    expect(stored.groundTruth).toEqual(truth);
    expect(stored.counts.conversations).toBe(20);
    expect(json(await cli("goals", "report", "hd-truth", "--db", db, "--json"))).toEqual(stored);
    const reportText = await cli("goals", "report", "hd-truth", "--db", db);
    expect(truthRow(reportText.stdout)).toBe(row);
    // RCOF codes under MAST do not fit: one line, nothing more stored.
    const before = goalTables();
    const mast = await cli(
      ...["goals", "hd", "--format", "run", "--taxonomy", "mast", "--run-id", "hd-mast"],
      ...["--db", db],
    );
    expect(oneLineError(mast)).toMatch(/ground truth: .*--taxonomy/);
    expect(goalTables()).toEqual(before);
  }, 30_000);
});

function truthFile(): string {
  return writeTruth(join(dir, "labelled.json"));
}

function judgeArgs(runId: string, config: string, ...extra: string[]): string[] {
  return [
    ...["goals", truthFile(), "--judges", JUDGES, "--run-id", runId, "--config", config],
    ...["--db", db, "--quiet", ...extra],
  ];
}

interface JudgementRow {
  position: number;
  judge: number;
  status: string;
  answers: number;
  calls: number;
  rejected: string;
  provider_attempts: number;
  error: string | null;
}

describe("three teacher judges on the fake model server", () => {
  it("judged GSR, agreement with the ground truth, Fleiss' κ, the queue and the priced spend", async () => {
    server.setRule(judgeRule(disagreeing));
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server, { price: PRICE });
    const report = json(await cli(...judgeArgs("j", config, "--json")));
    expect(server.unexpectedRequests).toEqual([]);
    expect(report).toMatchObject({ runId: "j", status: "complete", stopReason: null });
    expect(report.judges).toHaveLength(3);
    expect(report.judges[1]).toMatch(/#judge-b$/);
    expect(report.counts).toEqual({ conversations: 6, pending: 0, judged: 6, errored: 0 });
    // The vote equals the ground truth: 8 goals, 6 succeeded; 4 multi-turn, 3 succeeded.
    const hand = handCount(Object.values(TRUTH).map((specs) => specLabels(specs)));
    expect(hand).toMatchObject({ goals: 8, succeeded: 6, multi: 4, multiSucceeded: 3 });
    for (const metrics of [report.judged, report.groundTruth]) {
      expect(metrics).toMatchObject({
        sessions: 6,
        erroredSessions: 0,
        gsr: { count: 6, total: 8, percent: 75 },
        multiTurnGsr: { count: 3, total: 4, percent: 75 },
        turnSuccessRate: { count: 10, total: 12 },
        failedGoals: 2,
      });
      const causes = metrics?.causes.filter((c) => c.count > 0).map((c) => [c.code, c.count]);
      expect(causes).toEqual([
        ["E2", 1],
        ["E3", 1],
      ]);
    }
    // Agreement with the ground truth, per judge and for the vote: (items, agreed) per field.
    const fields = (a: { fields: Record<string, FieldAgreement> }) =>
      Object.fromEntries(
        Object.entries(a.fields).map(([f, v]) => [f, [v.items, v.agreed]] as const),
      );
    const turns = report.agreement?.turns;
    expect(turns?.judges.map(fields)).toEqual([
      { is_new_goal: [6, 6], quality: [12, 12], rcof: [2, 2] },
      { is_new_goal: [6, 5], quality: [12, 11], rcof: [1, 1] },
      { is_new_goal: [6, 6], quality: [12, 11], rcof: [2, 1] },
    ]);
    expect(turns && fields(turns.ensemble)).toEqual({
      is_new_goal: [6, 6],
      quality: [12, 12],
      rcof: [2, 2],
    });
    // Cohen's κ by hand: judge 2's segmentation (5 F / 1 T against 4 F / 2 T, 5 of 6 agreed):
    // (30/36 − 22/36) / (1 − 22/36) = 4/7; judge 3's quality (3 f / 9 s against 2 f / 10 s,
    // 11 of 12): (132/144 − 96/144) / (48/144) = 0.75; judge 1 agrees everywhere: κ 1.
    expect(turns?.judges[1]?.fields.is_new_goal?.kappa).toBeCloseTo(4 / 7, 10);
    expect(turns?.judges[2]?.fields.quality?.kappa).toBeCloseTo(0.75, 10);
    expect(turns?.judges[0]?.fields.quality?.kappa).toBeCloseTo(1, 10);
    expect(report.agreement?.outcome).toBeNull();
    // Fleiss' κ among the judges, by hand: segmentation over 6 turns (one split T F T):
    // P̄ = 16/18, P̄e = (5/18)² + (13/18)², κ = 94/130; quality over 12 turns (two splits):
    // P̄ = 32/36, P̄e = (1/6)² + (5/6)², κ = 0.6; rcof: one turn all failed, all E2 (κ undefined).
    expect(report.among).toMatchObject({
      labellers: 3,
      fields: {
        is_new_goal: { items: 6, unanimous: 5 },
        quality: { items: 12, unanimous: 10 },
        rcof: { items: 1, unanimous: 1, kappa: null },
      },
    });
    expect(report.among?.fields.is_new_goal?.kappa).toBeCloseTo(94 / 130, 10);
    expect(report.among?.fields.quality?.kappa).toBeCloseTo(0.6, 10);
    expect(report.review).toEqual({ queued: 2, open: 2, reviewed: 0 });
    expect(report.errors).toEqual([]);
    // Spend: 18 judgements, one answer sent back (19 calls), one 429 retried (20 requests), priced
    // from the usage the server reported.
    const requests = judgeRequests(server);
    expect(requests).toHaveLength(20);
    const served = servedCost(server.requests, PRICE);
    expect(report.spend).toMatchObject({
      unpriced: false,
      calls: 19,
      providerAttempts: 20,
      cacheHits: 0,
      inputTokens: served.inputTokens,
      outputTokens: served.outputTokens,
    });
    expect(report.spend.costUsd).toBeGreaterThan(0);
    expect(report.spend.costUsd).toBeCloseTo(served.costUsd, 10);
    // The store: judge 2's answer on g6 came second, with the first's reason kept; judge 3's
    // judgement of g1 took two requests for one call.
    const rows = query<JudgementRow>(
      "SELECT * FROM goal_judgements WHERE run_id = 'j' ORDER BY position, judge",
    );
    expect(rows).toHaveLength(18);
    expect(rows.every((r) => r.status === "labelled")).toBe(true);
    const g6 = rows.find((r) => r.position === 5 && r.judge === 1) as JudgementRow;
    expect(g6).toMatchObject({ answers: 2, calls: 2 });
    expect(JSON.parse(g6.rejected)).toHaveLength(1);
    const g1 = rows.find((r) => r.position === 0 && r.judge === 2) as JudgementRow;
    expect(g1).toMatchObject({ answers: 1, calls: 1, provider_attempts: 2 });
    // The queue: g2's cause and g3's segmentation.
    const queued = query<{ conversation_id: string; queue: string }>(
      "SELECT conversation_id, queue FROM goal_conversations WHERE run_id = 'j' AND queue != '[]'",
    ).map((r) => [r.conversation_id, JSON.parse(r.queue).map((i: { field: string }) => i.field)]);
    expect(queued).toEqual([
      ["g2", ["rcof"]],
      ["g3", ["is_new_goal"]],
    ]);

    // `goals report` gives the same object; its table shows the figures.
    expect(json(await cli("goals", "report", "j", "--db", db, "--json"))).toEqual(report);
    const text = await cli("goals", "report", "j", "--db", db);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^judges \(vote, reviews applied\)\s+6\s+8\s+75\.0% /m);
    expect(text.stdout).toMatch(
      /review queue: 2 fields queued, 2 open, 0 reviewed \(clade review j\)/,
    );
    expect(text.stdout).toMatch(
      new RegExp(
        `judges' spend: \\$${report.spend.costUsd.toFixed(4).replace(".", "\\.")}, 19 calls \\(20 requests`,
      ),
    );
    expect(text.stdout).toMatch(
      /agreement among the 3 judges \(Fleiss' κ; unanimous items\): is_new_goal 0\.723 \(5\/6\), quality 0\.600 \(10\/12\), rcof n\/a \(1\/1\)/,
    );

    // The same command again: nothing left to judge, no request made.
    const before = server.requests.length;
    const again = json(await cli(...judgeArgs("j", config, "--json")));
    expect(server.requests.length).toBe(before);
    expect(again.counts).toEqual(report.counts);
    expect(again.spend).toEqual(report.spend);
  }, 30_000);

  it("a judge failing with 5xx beyond its retries: exit 4, the conversation listed and not scored; the same command heals it", async () => {
    server.setRule(
      judgeRule((conversation, judge, call) =>
        judge === 2 && conversation === "g4"
          ? { fault: "server_error", status: 503 }
          : disagreeing(conversation, judge, call),
      ),
    );
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server, { maxRetries: 1 });
    const report = json(await cli(...judgeArgs("e", config, "--json")), 4);
    expect(report.counts).toEqual({ conversations: 6, pending: 0, judged: 5, errored: 1 });
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]?.conversation).toBe("g4");
    expect(report.errors[0]?.error).toMatch(/^judge 3 \(.*#judge-c\): model call failed: /);
    // g4 (two goals, one failed) is left out of the judges' figures, not counted a failure.
    expect(report.judged).toMatchObject({
      sessions: 5,
      erroredSessions: 1,
      gsr: { count: 5, total: 6 },
    });
    expect(report.spend.unpriced).toBe(true);
    // Two requests for judge 3's one call (maxRetries 1); the other judges' labels are kept.
    expect(judgeRequests(server).filter((r) => r.conversation === "g4")).toHaveLength(4);
    const rows = query<JudgementRow>(
      "SELECT * FROM goal_judgements WHERE run_id = 'e' AND position = 3 ORDER BY judge",
    );
    expect(rows.map((r) => r.status)).toEqual(["labelled", "labelled", "errored"]);
    expect(rows[2]).toMatchObject({ provider_attempts: 2 });
    const text = await cli("goals", "report", "e", "--db", db);
    expect(text.stdout).toMatch(/6 conversations, 5 judged, 1 errored, 0 pending/);
    expect(text.stdout).toMatch(/errored conversations \(never scored[^\n]*\n {2}g4: judge 3 /);

    // The provider recovers: the same command asks judge 3 again about g4, and no one else.
    server.setRule(judgeRule(disagreeing));
    const from = server.requests.length;
    const healed = json(await cli(...judgeArgs("e", config, "--json")));
    expect(judgeRequests(server, from).map((r) => [r.conversation, r.judge])).toEqual([["g4", 2]]);
    expect(healed.counts).toEqual({ conversations: 6, pending: 0, judged: 6, errored: 0 });
    expect(healed.judged?.gsr).toMatchObject({ count: 6, total: 8 });
    expect(healed.errors).toEqual([]);
    // Spend counts every call of both sessions, the failed ones included.
    expect(healed.spend.providerAttempts).toBe(report.spend.providerAttempts + 1);
  }, 30_000);

  it("answers that stay unusable after --answer-attempts: an error naming the judge and the reason", async () => {
    server.setRule(
      judgeRule((conversation, judge, call) =>
        judge === 1 && conversation === "g3"
          ? { content: "I cannot decide." }
          : disagreeing(conversation, judge, call),
      ),
    );
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server);
    const report = json(
      await cli(...judgeArgs("aa", config, "--answer-attempts", "2", "--json")),
      4,
    );
    expect(report.errors).toEqual([
      {
        conversation: "g3",
        error: expect.stringMatching(
          /^judge 2 \(.*#judge-b\): no usable answer in 2 attempts \(last: the reply has no JSON object\)$/,
        ),
      },
    ]);
    // Two answers asked of judge 2 about g3, the second with the reason the first failed.
    const asked = judgeRequests(server).filter((r) => r.conversation === "g3" && r.judge === 1);
    expect(asked).toHaveLength(2);
    const second = asked[1]?.request.body as { messages: { role: string; content: string }[] };
    const messages = second.messages;
    expect(messages.at(-1)?.content).toMatch(
      /^Your answer could not be used: the reply has no JSON object/,
    );
    const rows = query<JudgementRow>(
      "SELECT * FROM goal_judgements WHERE run_id = 'aa' AND position = 2 AND judge = 1",
    );
    expect(rows[0]).toMatchObject({ status: "errored", calls: 2 });
    expect(JSON.parse(rows[0]?.rejected as string)).toHaveLength(2);
  }, 30_000);

  it("every conversation errored: exit 5, nothing scored", async () => {
    server.setRule(
      judgeRule((conversation, judge, call) =>
        judge === 2
          ? { fault: "server_error", status: 500 }
          : disagreeing(conversation, judge, call),
      ),
    );
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server, { maxRetries: 0 });
    const report = json(await cli(...judgeArgs("all", config, "--json")), 5);
    expect(report.counts).toEqual({ conversations: 6, pending: 0, judged: 0, errored: 6 });
    expect(report.judged).toMatchObject({ sessions: 0, erroredSessions: 6 });
    expect(report.judged?.gsr).toMatchObject({ count: 0, total: 0, percent: null });
    expect(report.errors.map((e) => e.conversation)).toEqual(Object.keys(TRUTH));
    expect(report.agreement).toBeNull();
    expect(report.among).toBeNull();
    const text = await cli(...judgeArgs("all", config));
    expect(text.code).toBe(5);
    expect(text.stdout).toMatch(/^judges \(vote, reviews applied\)\s+0\s+0\s+n\/a /m);
  }, 30_000);

  it("--budget-usd: exit 3, stopReason budget; a larger budget finishes the job", async () => {
    server.setRule(judgeRule(disagreeing));
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server, { price: PRICE });
    // One conversation at a time (3 judge calls in flight): the first one's spend passes the budget.
    const args = judgeArgs("b", config, "--concurrency", "3", "--json");
    const result = await cli(...args, "--budget-usd", "0.01");
    const stopped = json(result, 3);
    expect(stopped).toMatchObject({ status: "stopped", stopReason: "budget" });
    expect(stopped.counts).toEqual({ conversations: 6, pending: 5, judged: 1, errored: 0 });
    expect(stopped.spend.costUsd).toBeGreaterThanOrEqual(0.01);
    expect(judgeRequests(server).every((r) => r.conversation === "g1")).toBe(true);
    const finished = json(await cli(...args, "--budget-usd", "100"));
    expect(finished).toMatchObject({ status: "complete", stopReason: null });
    expect(finished.counts).toEqual({ conversations: 6, pending: 0, judged: 6, errored: 0 });
    expect(finished.judged?.gsr).toMatchObject({ count: 6, total: 8 });
    expect(finished.spend.costUsd).toBeCloseTo(servedCost(server.requests, PRICE).costUsd, 10);
    // g1 was judged once, in the first session.
    expect(judgeRequests(server).filter((r) => r.conversation === "g1")).toHaveLength(4);
  }, 30_000);

  it("--budget-usd needs priced judges (one line, nothing stored)", async () => {
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server);
    const result = await cli(...judgeArgs("np", config, "--budget-usd", "1"));
    expect(oneLineError(result)).toMatch(/--budget-usd needs a price/);
    expect(goalRunCount()).toBe(0);
    expect(server.requests).toHaveLength(0);
  });
});

function specLabels(specs: readonly string[]): Label[] {
  return specs.map((spec) => {
    const [goal, quality, cause] = spec.split(" ");
    return {
      is_new_goal: goal === "N",
      quality: quality === "f" ? "failure" : "success",
      rcof: cause ?? null,
    };
  });
}

describe("bad input is one line and stores nothing", () => {
  let config: string;
  beforeEach(() => {
    config = writeJudgeConfig(join(dir, "clade.config.json"), server);
  });

  const judged = (source: string, ...extra: string[]) => [
    ...["goals", source, "--judges", JUDGES, "--run-id", "bad", "--config", config],
    ...["--db", db, ...extra],
  ];

  it.each([
    [
      "a taxonomy file that does not exist",
      () => ["--taxonomy", join(dir, "none.json")],
      /none\.json: cannot read/,
    ],
    ["an unknown taxonomy name", () => ["--taxonomy", "nope"], /nope/],
    [
      "a rubric file that does not exist",
      () => ["--rubric", join(dir, "none.json")],
      /none\.json: cannot read/,
    ],
  ])("%s", async (_name, extra, message) => {
    const line = oneLineError(await cli(...judged(truthFile(), ...extra())));
    expect(line).toMatch(message);
    expect(existsSync(db)).toBe(false);
  });

  it("a taxonomy file with a bad entry names the file and the field", async () => {
    const file = join(dir, "tax.json");
    writeFileSync(file, JSON.stringify({ name: "t", codes: [{ code: "A1", name: "a" }] }));
    const line = oneLineError(await cli(...judged(truthFile(), "--taxonomy", file)));
    expect(line).toContain(file);
    expect(line).toMatch(/codes\.0\.definition/);
    expect(existsSync(db)).toBe(false);
  });

  it("a rubric whose JSON is bad, or whose field is missing: one line naming file and field", async () => {
    const broken = join(dir, "broken.json");
    writeFileSync(broken, '{"name": "r", "goals": [');
    const notJson = oneLineError(await cli(...judged(truthFile(), "--rubric", broken)));
    expect(notJson).toContain(broken);
    expect(notJson).toMatch(/not JSON/);
    const missing = join(dir, "missing.json");
    writeFileSync(
      missing,
      JSON.stringify({ name: "r", goals: [{ name: "leave" }], quality_standards: ["be right"] }),
    );
    const field = oneLineError(await cli(...judged(truthFile(), "--rubric", missing)));
    expect(field).toContain(missing);
    expect(field).toMatch(/goals\.0\.definition/);
    expect(existsSync(db)).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it("--judges without --run-id; judge-only options without --judges; an empty judge", async () => {
    const file = truthFile();
    expect(
      oneLineError(await cli("goals", file, "--judges", JUDGES, "--config", config, "--db", db)),
    ).toMatch(/--judges needs --run-id/);
    expect(oneLineError(await cli("goals", file, "--rubric", "helpdesk", "--db", db))).toMatch(
      /--rubric needs --judges/,
    );
    expect(
      oneLineError(await cli("goals", file, "--concurrency", "2", "--budget-usd", "1", "--db", db)),
    ).toMatch(/--concurrency, --budget-usd need --judges/);
    expect(
      oneLineError(await cli(...judged(file).map((a) => (a === JUDGES ? "judge-a,,judge-c" : a)))),
    ).toMatch(/--judges has an empty entry/);
    expect(existsSync(db)).toBe(false);
  });

  it("a malformed conversation file, a missing file, an unknown run", async () => {
    const broken = oneLineError(await cli(...judged(join(FIXTURES, "chat-broken.jsonl"))));
    expect(broken).toMatch(/chat-broken\.jsonl: line 2/);
    const missing = oneLineError(await cli(...judged(join(dir, "nowhere.jsonl"))));
    expect(missing).toMatch(/nowhere\.jsonl: no such file/);
    expect(existsSync(db)).toBe(false);
    const run = oneLineError(await cli("goals", "nope", "--format", "run", "--db", db));
    expect(run).toMatch(/no store at/);
    expect(oneLineError(await cli("goals", "report", "nope", "--db", db))).toMatch(
      /no goal evaluation "nope"/,
    );
    expect(existsSync(db)).toBe(false);
  });

  it("ground truth whose causes the taxonomy lacks (RCOF codes under MAST)", async () => {
    const line = oneLineError(
      await cli(...judged(join(FIXTURES, "dialogues.json"), "--taxonomy", "mast")),
    );
    expect(line).toMatch(/conversation d1 .*ground truth: .*E2.*--taxonomy/);
    expect(existsSync(db)).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
}

describe("the built CLI killed mid-job", () => {
  it("SIGKILL, then the same command: every conversation judged, none asked of a judge twice", async () => {
    if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
      throw new Error("dist/ is missing: run `npm run build` (npm test does it for you)");
    }
    await server.close();
    server = await startFakeModelServer({ latencyMs: 100, rule: judgeRule(() => ["N s", ". s"]) });
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server);
    const file = writeDialogues(
      join(dir, "many.json"),
      Array.from({ length: 40 }, (_, i) => ({ id: `k${i + 1}`, turns: 2 })),
    );
    const args = [
      ...[BIN, "goals", file, "--judges", JUDGES, "--run-id", "kill", "--config", config],
      ...["--concurrency", "2", "--db", db, "--json"],
    ];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    const exited = exitOf(child);
    let finished = false;
    void exited.then(() => {
      finished = true;
    });
    const judgedCount = () => {
      if (!existsSync(db)) return 0;
      try {
        return query<{ n: number }>(
          "SELECT COUNT(*) AS n FROM goal_conversations WHERE status = 'judged'",
        )[0]?.n as number;
      } catch {
        return 0; // the tables are not there yet
      }
    };
    const deadline = Date.now() + 20_000;
    while (!finished && judgedCount() < 5 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(finished, "the job ended before it could be killed").toBe(false);
    child.kill("SIGKILL");
    expect((await exited).signal).toBe("SIGKILL");

    // What the store holds at the kill.
    const judgedAtKill = new Set(
      query<{ conversation_id: string }>(
        "SELECT conversation_id FROM goal_conversations WHERE status = 'judged'",
      ).map((r) => r.conversation_id),
    );
    const labelledAtKill = new Set(
      query<{ conversation_id: string; judge: number }>(
        `SELECT c.conversation_id, j.judge FROM goal_judgements j JOIN goal_conversations c
           USING (run_id, position) WHERE j.status = 'labelled'`,
      ).map((r) => `${r.conversation_id}/${r.judge}`),
    );
    expect(judgedAtKill.size).toBeGreaterThanOrEqual(5);
    expect(judgedAtKill.size).toBeLessThan(40);
    expect(query("SELECT status FROM goal_runs WHERE id = 'kill'")).toEqual([
      { status: "running" },
    ]);

    const from = server.requests.length;
    const rerun = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    rerun.stdout?.on("data", (d) => {
      out += d;
    });
    rerun.stderr?.on("data", (d) => {
      err += d;
    });
    const { code } = await exitOf(rerun);
    expect(err).toMatch(
      new RegExp(`goals kill: resuming: ${judgedAtKill.size} of 40 conversations judged`),
    );
    expect(code).toBe(0);
    const report = JSON.parse(out) as Report;
    expect(report.counts).toEqual({ conversations: 40, pending: 0, judged: 40, errored: 0 });
    expect(report.judged?.gsr).toMatchObject({ count: 40, total: 40 });

    // No request of the second session was about a judged conversation, nor asked a judge whose
    // label was stored; each (conversation, judge) asked at most once.
    const second = judgeRequests(server, from);
    expect(second.length).toBeGreaterThan(0);
    const asked = new Set<string>();
    for (const { conversation, judge } of second) {
      expect(judgedAtKill.has(conversation), `${conversation} was judged before the kill`).toBe(
        false,
      );
      const key = `${conversation}/${judge}`;
      expect(labelledAtKill.has(key), `${key} was labelled before the kill`).toBe(false);
      expect(asked.has(key), `${key} asked twice`).toBe(false);
      asked.add(key);
    }
    // Every (conversation, judge) has exactly one labelled judgement.
    const rows = query<{ position: number; judge: number; n: number; status: string }>(
      `SELECT position, judge, COUNT(*) AS n, MIN(status) AS status FROM goal_judgements
         WHERE run_id = 'kill' GROUP BY position, judge`,
    );
    expect(rows).toHaveLength(120);
    expect(rows.every((r) => r.n === 1 && r.status === "labelled")).toBe(true);
    // Every (conversation, judge) without a label at the kill was asked in the second session,
    // or answered from the response cache (a reply cached just before the kill, its judgement not
    // yet committed).
    expect(asked.size + report.spend.cacheHits).toBe(120 - labelledAtKill.size);
  }, 60_000);

  it("SIGTERM: exit 143, nothing printed, stored as stopped (signal); the same command finishes", async () => {
    await server.close();
    server = await startFakeModelServer({ latencyMs: 100, rule: judgeRule(() => ["N s", ". s"]) });
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server);
    const file = writeDialogues(
      join(dir, "many.json"),
      Array.from({ length: 20 }, (_, i) => ({ id: `t${i + 1}`, turns: 2 })),
    );
    const args = [
      ...[BIN, "goals", file, "--judges", JUDGES, "--run-id", "term", "--config", config],
      ...["--concurrency", "3", "--db", db, "--quiet", "--json"],
    ];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    const exited = exitOf(child);
    const deadline = Date.now() + 20_000;
    const judgedCount = () => {
      try {
        return query<{ n: number }>(
          "SELECT COUNT(*) AS n FROM goal_conversations WHERE status = 'judged'",
        )[0]?.n as number;
      } catch {
        return 0;
      }
    };
    while (judgedCount() < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill("SIGTERM");
    expect((await exited).code).toBe(143);
    expect(out).toBe("");
    expect(query("SELECT status, stop_reason FROM goal_runs WHERE id = 'term'")).toEqual([
      { status: "stopped", stop_reason: "signal" },
    ]);
    const judgedAtStop = judgedCount();
    expect(judgedAtStop).toBeLessThan(20);
    const report = json(await cli(...args.slice(1)));
    expect(report).toMatchObject({ status: "complete", stopReason: null });
    expect(report.counts).toEqual({ conversations: 20, pending: 0, judged: 20, errored: 0 });
    // 60 answered calls, and those the signal cut short (at most the 3 in flight), which were
    // paid for and are counted.
    expect(report.spend.calls).toBeGreaterThanOrEqual(60);
    expect(report.spend.calls).toBeLessThanOrEqual(63);
  }, 60_000);

  it("at the default concurrency, the built CLI writes nothing to stderr with --quiet", async () => {
    await server.close();
    server = await startFakeModelServer({ latencyMs: 20, rule: judgeRule(() => ["N s", ". s"]) });
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server);
    const file = writeDialogues(
      join(dir, "many.json"),
      Array.from({ length: 40 }, (_, i) => ({ id: `q${i + 1}`, turns: 2 })),
    );
    const child = spawn(
      process.execPath,
      [
        BIN,
        "goals",
        file,
        "--judges",
        JUDGES,
        "--run-id",
        "q",
        "--config",
        config,
        "--db",
        db,
        "--quiet",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let err = "";
    child.stderr?.on("data", (d) => {
      err += d;
    });
    expect((await exitOf(child)).code).toBe(0);
    // 24 judge calls in flight listen to one abort signal: no MaxListenersExceededWarning.
    expect(err).toBe("");
  }, 30_000);

  it("the same --run-id with other judges or a changed source: one-line conflict, exit 2, nothing changed", async () => {
    server.setRule(judgeRule(disagreeing));
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server);
    json(await cli(...judgeArgs("c", config, "--json")));
    const before = goalTables();
    const requests = server.requests.length;
    const otherJudges = await cli(
      ...judgeArgs("c", config).map((a) => (a === JUDGES ? "judge-a,judge-b,judge-b" : a)),
    );
    expect(oneLineError(otherJudges)).toMatch(/goal evaluation "c"/);
    const otherRubric = await cli(...judgeArgs("c", config, "--rubric", "helpdesk"));
    expect(oneLineError(otherRubric)).toMatch(/goal evaluation "c"/);
    // The source changed: one conversation more.
    const changed = writeDialogues(join(dir, "labelled.json"), [
      ...Object.entries(TRUTH).map(([id, truth]) => ({ id, truth })),
      { id: "g7", truth: ["N s"] },
    ]);
    const otherSource = await cli(
      ...["goals", changed, "--judges", JUDGES, "--run-id", "c", "--config", config, "--db", db],
    );
    expect(oneLineError(otherSource)).toMatch(/goal evaluation "c"/);
    expect(goalTables()).toEqual(before);
    expect(server.requests.length).toBe(requests);
  }, 30_000);
});
