/**
 * `clade review RUN`: the human review queue of a goal evaluation judged by three teacher judges
 * on the fake model server. Answers are piped in (a Readable, in-process; stdin, through the
 * built CLI): each is stored at once with the reviewer and the time, a bad answer is asked
 * again, `q` quits keeping what was stored, the end of input ends cleanly, and GSR before → after
 * follows the answers as counted by hand. `--json` exports the open queue with every judge's
 * label and rationale; once all is reviewed the queue is empty and `clade goals report` shows the
 * reviewed counts and each judge's agreement with the reviewers.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reviewCommand } from "../../src/cli/commands/review.js";
import type { CliIo } from "../../src/cli/io.js";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/fake-model-server.js";
import { runCli } from "../fixtures/cli.js";
import {
  disagreeing,
  JUDGES,
  judgeRule,
  TRUTH,
  writeDialogues,
  writeJudgeConfig,
  writeTruth,
} from "../fixtures/goals/cli-judges.js";

const cli = runCli;
const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "clade.js");

let dir: string;
let db: string;
let server: FakeModelServer;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-review-"));
  db = join(dir, "clade.db");
  server = await startFakeModelServer({ rule: judgeRule(disagreeing) });
});

afterEach(async () => {
  await server.close();
});

/** The scenario judged by three judges under `runId`: g2's cause and g3's segmentation queued. */
async function judged(runId = "r"): Promise<void> {
  const config = writeJudgeConfig(join(dir, "clade.config.json"), server);
  const result = await cli(
    ...["goals", writeTruth(join(dir, "labelled.json")), "--judges", JUDGES],
    ...["--run-id", runId, "--config", config, "--db", db, "--quiet"],
  );
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/review queue: 2 fields queued, 2 open, 0 reviewed/);
}

/** reviewCommand with these lines piped in; what it printed. */
async function review(
  runId: string,
  lines: readonly string[],
  ...options: [Record<string, unknown>?]
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    interactive: false,
  };
  const input = Readable.from(lines.length > 0 ? [lines.map((l) => `${l}\n`).join("")] : []);
  const code = await reviewCommand(runId, { db, ...(options[0] ?? {}) }, io, input);
  return { code, stdout, stderr };
}

interface ReviewRow {
  position: number;
  turn_number: number;
  field: string;
  value: string;
  reviewer: string;
  at: string;
}

function reviews(runId = "r"): ReviewRow[] {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return conn
      .prepare(
        "SELECT position, turn_number, field, value, reviewer, at FROM goal_reviews WHERE run_id = ? ORDER BY id",
      )
      .all(runId) as ReviewRow[];
  } finally {
    conn.close();
  }
}

interface Label {
  is_new_goal: boolean;
  quality: string;
  rcof: string | null;
}

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

/** GSR and multi-turn GSR, in percent with one decimal, counted by hand. */
function gsrByHand(sessions: readonly (readonly Label[])[]): { gsr: string; multi: string } {
  let goals = 0;
  let ok = 0;
  let multi = 0;
  let multiOk = 0;
  for (const session of sessions) {
    const split: Label[][] = [];
    session.forEach((t, i) => {
      if (i === 0 || t.is_new_goal) split.push([]);
      split.at(-1)?.push(t);
    });
    for (const goal of split) {
      const success = goal.every((t) => t.quality === "success");
      goals++;
      if (success) ok++;
      if (goal.length > 1) {
        multi++;
        if (success) multiOk++;
      }
    }
  }
  const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)}%`;
  return { gsr: pct(ok, goals), multi: pct(multiOk, multi) };
}

/** The scenario's labels after the vote (equal to the ground truth), with changes per id. */
function votedWith(changes: Record<string, readonly string[]>): Label[][] {
  return Object.entries(TRUTH).map(([id, specs]) => specLabels(changes[id] ?? specs));
}

interface QueueItem {
  conversation: string;
  position: number;
  turn_number: number;
  field: string;
  reason: string;
  turn: { turn_number: number; user: string; assistant: string } | null;
  vote: { is_new_goal: boolean; quality: string; rcof: string | null; rationale: string };
  judges: {
    judge: number;
    model: string;
    label: { is_new_goal: boolean; quality: string; rcof: string | null; rationale: string } | null;
  }[];
  review: { value: unknown; reviewer: string; at: string } | null;
}

async function queue(runId: string, ...flags: string[]): Promise<QueueItem[]> {
  const result = await cli("review", runId, "--db", db, "--json", ...flags);
  expect(result.code).toBe(0);
  expect(result.stdout.trimEnd().split("\n")).toHaveLength(1);
  const out = JSON.parse(result.stdout) as { schema: string; runId: string; items: QueueItem[] };
  expect(out).toMatchObject({ schema: "clade.review-queue/1", runId });
  return out.items;
}

describe("clade review", () => {
  it("stores each answer with reviewer and time, asks again after a bad answer, and GSR follows", async () => {
    await judged();
    // Before: the vote equals the ground truth.
    const before = gsrByHand(votedWith({}));
    expect(before).toEqual({ gsr: "75.0%", multi: "75.0%" });
    const start = new Date().toISOString();
    // g2, turn 2, cause (E3, success, E4): "bogus" then e4; g3, turn 2, new goal: "x" then n.
    const result = await review("r", ["bogus", "e4", "x", "n"], { reviewer: "alice" });
    const end = new Date().toISOString();
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const out = result.stdout;
    expect(out).toMatch(/^review r: 2 turns with 2 open fields; reviewer alice/);
    expect(out).toMatch(/\[1\/2\] conversation g2, turn 2/);
    expect(out).toMatch(
      /queued: rcof: three-way disagreement: rcof E3 \(1\), \(success\) \(2\), E4 \(3\)/,
    );
    // The judges' labels and rationales side by side.
    expect(out).toMatch(/1 openai-compatible:.*#judge-a\s+false\s+failure\s+E3\s+why \. f E3/);
    expect(out).toMatch(/2 openai-compatible:.*#judge-b\s+false\s+success\s+-\s+why \. s/);
    expect(out).toMatch(/3 openai-compatible:.*#judge-c\s+false\s+failure\s+E4\s+why \. f E4/);
    expect(out).toMatch(/User: question 2 of g2/);
    expect(out).toContain('not an answer here: "bogus"');
    expect(out).toContain('not an answer here: "x"');
    expect(out).toMatch(/\[2\/2\] conversation g3, turn 2/);
    expect(out).toMatch(/queued: is_new_goal: segmentation disagreement/);
    // After: g2's cause E4 (still a failure), g3 one goal of two turns.
    const after = gsrByHand(votedWith({ g2: ["N s", ". f E4"], g3: ["N s", ". s"] }));
    expect(after).toEqual({ gsr: "71.4%", multi: "80.0%" });
    expect(out).toContain("review r: 2 labels stored by alice; 0 fields still open\n");
    expect(out).toContain(
      `GSR ${before.gsr} → ${after.gsr}; multi-turn GSR ${before.multi} → ${after.multi}\n`,
    );

    const stored = reviews();
    expect(
      stored.map((r) => [r.position, r.turn_number, r.field, JSON.parse(r.value), r.reviewer]),
    ).toEqual([
      [1, 2, "rcof", "E4", "alice"],
      [2, 2, "is_new_goal", false, "alice"],
    ]);
    for (const r of stored) {
      expect(r.at >= start && r.at <= end, r.at).toBe(true);
    }

    // The queue is empty; --all lists both fields with their reviews.
    expect(await queue("r")).toEqual([]);
    const all = await queue("r", "--all");
    expect(all.map((i) => [i.conversation, i.field, i.review?.value, i.review?.reviewer])).toEqual([
      ["g2", "rcof", "E4", "alice"],
      ["g3", "is_new_goal", false, "alice"],
    ]);
    const again = await review("r", ["e1"], { reviewer: "alice" });
    expect(again.stdout).toBe(
      `review r: nothing open (2 fields queued, all reviewed); GSR ${after.gsr}\n`,
    );
    expect(reviews()).toHaveLength(2);

    // The report: reviewed counts, the reviewed GSR, each judge against the reviewer.
    const report = await cli("goals", "report", "r", "--db", db, "--json");
    expect(report.code).toBe(0);
    const json = JSON.parse(report.stdout);
    expect(json.review).toEqual({ queued: 2, open: 0, reviewed: 2 });
    expect(json.judged.gsr).toMatchObject({ count: 5, total: 7 });
    expect(json.judged.multiTurnGsr).toMatchObject({ count: 4, total: 5 });
    const causes = json.judged.causes.filter((c: { count: number }) => c.count > 0);
    expect(causes.map((c: { code: string }) => c.code)).toEqual(["E2", "E4"]);
    // The reviewer's rcof E4: judge 1 said E3, judge 2 success, judge 3 E4; the reviewer's
    // "no new goal": judge 2 said so, judges 1 and 3 did not.
    const vsHuman = json.human.judges.map(
      (fields: Record<string, { items: number; agreed: number }>) =>
        Object.fromEntries(Object.entries(fields).map(([f, v]) => [f, [v.items, v.agreed]])),
    );
    expect(json.human.reviews).toBe(2);
    expect(vsHuman).toEqual([
      { is_new_goal: [1, 0], quality: [0, 0], rcof: [1, 0] },
      { is_new_goal: [1, 1], quality: [0, 0], rcof: [1, 0] },
      { is_new_goal: [1, 0], quality: [0, 0], rcof: [1, 1] },
    ]);
    // The vote as cast (E3; a new goal) against the reviewer: both differ.
    expect(
      Object.fromEntries(
        Object.entries(
          json.human.ensemble as Record<string, { items: number; agreed: number }>,
        ).map(([f, v]) => [f, [v.items, v.agreed]]),
      ),
    ).toEqual({ is_new_goal: [1, 0], quality: [0, 0], rcof: [1, 0] });
    const text = await cli("goals", "report", "r", "--db", db);
    expect(text.stdout).toMatch(/review queue: 2 fields queued, 0 open, 2 reviewed\n/);
    expect(text.stdout).toMatch(/agreement with the reviewers \(2 reviewed fields/);
    expect(text.stdout).toMatch(/^judges \(vote, reviews applied\)\s+6\s+7\s+71\.4% /m);
  }, 30_000);

  it("--json exports the open queue with every judge's label and rationale", async () => {
    await judged();
    const items = await queue("r");
    expect(items).toHaveLength(2);
    const [cause, segmentation] = items as [QueueItem, QueueItem];
    expect(cause).toMatchObject({
      conversation: "g2",
      position: 1,
      turn_number: 2,
      field: "rcof",
      reason: "three-way disagreement: rcof E3 (1), (success) (2), E4 (3)",
      turn: { turn_number: 2, user: "question 2 of g2", assistant: "answer 2 of g2" },
      vote: { quality: "failure", rcof: "E3", rationale: "why . f E3" },
      review: null,
    });
    expect(
      cause.judges.map((j) => [j.judge, j.label?.quality, j.label?.rcof, j.label?.rationale]),
    ).toEqual([
      [0, "failure", "E3", "why . f E3"],
      [1, "success", null, "why . s"],
      [2, "failure", "E4", "why . f E4"],
    ]);
    expect(cause.judges[2]?.model).toMatch(
      /^openai-compatible:http:\/\/127\.0\.0\.1:\d+\/v1#judge-c$/,
    );
    expect(segmentation).toMatchObject({
      conversation: "g3",
      field: "is_new_goal",
      vote: { is_new_goal: true },
      review: null,
    });
    expect(segmentation.reason).toMatch(
      /^segmentation disagreement: is_new_goal true \(1, 3\), false \(2\)$/,
    );
    expect(segmentation.judges.map((j) => j.label?.is_new_goal)).toEqual([true, false, true]);
    // Exporting stores nothing.
    expect(reviews()).toEqual([]);
  }, 30_000);

  it("q quits keeping what was stored; the end of input ends cleanly; the rest is reviewed later", async () => {
    await judged();
    const quit = await review("r", ["E4", "q", "n"], { reviewer: "bob" });
    expect(quit.code).toBe(0);
    expect(quit.stdout).toContain("review r: 1 label stored by bob; 1 fields still open\n");
    // g2's cause changes, not its outcome: GSR unchanged.
    expect(quit.stdout).toContain("GSR 75.0% → 75.0%; multi-turn GSR 75.0% → 75.0%\n");
    expect(reviews().map((r) => [r.field, JSON.parse(r.value), r.reviewer])).toEqual([
      ["rcof", "E4", "bob"],
    ]);
    const open = await queue("r");
    expect(open.map((i) => [i.conversation, i.field])).toEqual([["g3", "is_new_goal"]]);

    // Nothing to read: no answer, nothing stored, exit 0.
    const eof = await review("r", [], { reviewer: "bob" });
    expect(eof.code).toBe(0);
    expect(eof.stdout).toMatch(/^review r: 1 turns with 1 open fields; reviewer bob/);
    expect(eof.stdout).toContain("review r: 0 labels stored by bob; 1 fields still open\n");
    expect(reviews()).toHaveLength(1);

    // Later, another reviewer keeps g3's second goal: GSR stays.
    const rest = await review("r", ["yes"], { reviewer: "carol" });
    expect(rest.stdout).toContain("review r: 1 label stored by carol; 0 fields still open\n");
    expect(rest.stdout).toContain("GSR 75.0% → 75.0%");
    expect(reviews().map((r) => [r.field, JSON.parse(r.value), r.reviewer])).toEqual([
      ["rcof", "E4", "bob"],
      ["is_new_goal", true, "carol"],
    ]);
    expect(await queue("r")).toEqual([]);
    const report = JSON.parse((await cli("goals", "report", "r", "--db", db, "--json")).stdout);
    expect(report.review).toEqual({ queued: 2, open: 0, reviewed: 2 });
    expect(report.judged.gsr).toMatchObject({ count: 6, total: 8 });
  }, 30_000);

  it("a skipped field stores nothing and stays open", async () => {
    await judged();
    // k skips a cause, s skips a segmentation question.
    const skipped = await review("r", ["k", "s"], { reviewer: "fay" });
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toContain("review r: 0 labels stored by fay; 2 fields still open\n");
    expect(skipped.stdout).toContain("GSR 75.0% → 75.0%");
    expect(reviews()).toEqual([]);
    expect(await queue("r")).toHaveLength(2);
  }, 30_000);

  it("two judges split on quality: set to failure, the cause is asked for and stored", async () => {
    // h1's second turn: judge 1 success, judge 2 failure (E3): no majority of two, quality
    // queued, success kept (the earliest judge's); no cause voted.
    server.setRule(
      judgeRule((conversation, judge) =>
        conversation === "h1" && judge === 1 ? ["N s", ". f E3"] : ["N s", ". s"],
      ),
    );
    const config = writeJudgeConfig(join(dir, "clade.config.json"), server);
    const file = writeDialogues(join(dir, "two.json"), [
      { id: "h1", truth: ["N s", ". s"] },
      { id: "h2", truth: ["N s", ". s"] },
    ]);
    const run = await cli(
      ...["goals", file, "--judges", "judge-a,judge-b", "--run-id", "two", "--config", config],
      ...["--db", db, "--quiet", "--json"],
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).review).toEqual({ queued: 1, open: 1, reviewed: 0 });
    const items = await queue("two");
    expect(items.map((i) => [i.conversation, i.turn_number, i.field])).toEqual([
      ["h1", 2, "quality"],
    ]);

    // "f", then a code the taxonomy lacks (asked again), then E3.
    const result = await review("two", ["f", "E9", "E3"], { reviewer: "dana" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('not an answer here: "E9"');
    expect(reviews("two").map((r) => [r.turn_number, r.field, JSON.parse(r.value)])).toEqual([
      [2, "quality", "failure"],
      [2, "rcof", "E3"],
    ]);
    // Two goals of two turns, both succeeded; then h1's failed.
    const before = gsrByHand([specLabels(["N s", ". s"]), specLabels(["N s", ". s"])]);
    const after = gsrByHand([specLabels(["N s", ". f E3"]), specLabels(["N s", ". s"])]);
    expect(result.stdout).toContain(
      `GSR ${before.gsr} → ${after.gsr}; multi-turn GSR ${before.multi} → ${after.multi}\n`,
    );
    expect(after.gsr).toBe("50.0%");
    const report = JSON.parse((await cli("goals", "report", "two", "--db", db, "--json")).stdout);
    expect(report.judged.causes.find((c: { code: string }) => c.code === "E3").count).toBe(1);
    expect(report.review).toEqual({ queued: 1, open: 0, reviewed: 1 });
  }, 30_000);

  it("through the built CLI, answers on stdin", async () => {
    if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
      throw new Error("dist/ is missing: run `npm run build` (npm test does it for you)");
    }
    await judged();
    const child = spawn(process.execPath, [BIN, "review", "r", "--db", db, "--reviewer", "erin"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.stdin.end("none\nn\n");
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("review r: 2 labels stored by erin; 0 fields still open\n");
    // g2's failure without a cause (unattributed) and g3 as one goal.
    const after = gsrByHand(votedWith({ g2: ["N s", ". f"], g3: ["N s", ". s"] }));
    expect(out).toContain(`GSR 75.0% → ${after.gsr}; multi-turn GSR 75.0% → ${after.multi}\n`);
    expect(reviews().map((r) => [r.field, JSON.parse(r.value), r.reviewer])).toEqual([
      ["rcof", null, "erin"],
      ["is_new_goal", false, "erin"],
    ]);
    const report = JSON.parse((await cli("goals", "report", "r", "--db", db, "--json")).stdout);
    expect(report.judged.unattributed.count).toBe(1);
  }, 30_000);

  it("an unknown run, or one without judges: one line, exit 2", async () => {
    // reviewCommand throws usage errors to main; through the CLI they are one line.
    await expect(review("nope", [])).rejects.toThrow(/no goal evaluation "nope"/);
    const unknown = await cli("review", "nope", "--db", db);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^clade: error: no goal evaluation "nope" in .*\n$/);
    const truth = await cli(
      ...["goals", writeTruth(join(dir, "labelled.json")), "--run-id", "gt", "--db", db],
    );
    expect(truth.code).toBe(0);
    const noJudges = await cli("review", "gt", "--db", db);
    expect(noJudges.code).toBe(2);
    expect(noJudges.stderr).toMatch(
      /^clade: error: goal evaluation "gt" has no judges: nothing to review\n$/,
    );
  });
});
