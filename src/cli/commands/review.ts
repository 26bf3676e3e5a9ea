/**
 * `clade review RUN [--reviewer NAME]`: the human review queue of a goal-evaluation job, in the
 * terminal. Each turn with fields the judges' vote could not settle (no majority, or any
 * segmentation disagreement) is shown with every judge's label and rationale side by side; the
 * reviewer's answer is stored at once with who and when (a quit or a kill loses nothing
 * answered), and the judges' GSR is recomputed at the end. `--json` exports the queue instead
 * (open fields, or `--all`), with the same context, for review elsewhere.
 *
 * Answers are read a line at a time from standard input, so a reviewer can also pipe them in.
 */
import { existsSync } from "node:fs";
import { userInfo } from "node:os";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { z } from "zod";
import type { LabelField } from "../../eval/goals/agreement.js";
import type { Conversation } from "../../eval/goals/conversation.js";
import { renderConversation } from "../../eval/goals/judge.js";
import { buildGoalReport, readRunConfig } from "../../eval/goals/report.js";
import { reviewsByPosition } from "../../eval/goals/review.js";
import { type QueuedTurn, queuedTurnsOf, queueItems } from "../../eval/goals/review-queue.js";
import type { Taxonomy } from "../../eval/goals/taxonomy.js";
import { GoalStore } from "../../store/goal-log.js";
import type { JsonValue } from "../../store/search-log.js";
import { type CliIo, UsageError } from "../io.js";
import { parseOptions } from "../options.js";
import { formatPercent, renderTable } from "../table.js";

const reviewOptionsSchema = z.object({
  reviewer: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(100, "must be at most 100 characters")
    .optional(),
  all: z.boolean().optional(),
  db: z.string().min(1, "must not be empty"),
  json: z.boolean().optional(),
});

export type RawReviewOptions = z.input<typeof reviewOptionsSchema>;

/** Who reviews when --reviewer is not given: the login name. */
function defaultReviewer(): string {
  try {
    return process.env.USER || userInfo().username || "unknown";
  } catch {
    return "unknown";
  }
}

/** The queued turns in order, each with its open (or, with `all`, every) queued field. */
function queuedTurns(store: GoalStore, runId: string, all: boolean): QueuedTurn[] {
  const reviewsBy = reviewsByPosition(store.reviews(runId));
  return store
    .conversations(runId, ["judged"])
    .flatMap((row) => queuedTurnsOf(store, runId, row, reviewsBy.get(row.position) ?? [], all));
}

function queueJson(runId: string, turns: readonly QueuedTurn[]) {
  return { schema: "clade.review-queue/1", runId, items: queueItems(turns) };
}

/** A line reader over a stream: `ask` writes the prompt and waits for one line (undefined at EOF). */
function lineReader(input: Readable, io: CliIo) {
  const rl = createInterface({ input, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  return {
    async ask(prompt: string): Promise<string | undefined> {
      io.stdout(prompt);
      const next = await lines.next();
      if (next.done) return undefined;
      return next.value.trim();
    },
    close: () => rl.close(),
  };
}

type Answer =
  | { kind: "value"; value: boolean | string | null }
  | { kind: "skip" }
  | { kind: "quit" };

/** Reads one field's answer; a bad answer is said and asked again. */
async function askField(
  reader: ReturnType<typeof lineReader>,
  io: CliIo,
  field: LabelField,
  turnNumber: number,
  taxonomy: Taxonomy,
): Promise<Answer | undefined> {
  const codes = taxonomy.codes.map((c) => c.code);
  const prompt =
    field === "is_new_goal"
      ? `  turn ${turnNumber}: does it start a new goal? [y]es, [n]o, [s]kip, [q]uit: `
      : field === "quality"
        ? `  turn ${turnNumber}: quality? [s]uccess, [f]ailure, [k] skip, [q]uit: `
        : `  turn ${turnNumber}: root cause? ${codes.join(", ")}, [none], [k] skip, [q]uit: `;
  for (;;) {
    const line = await reader.ask(prompt);
    if (line === undefined) return undefined;
    const answer = line.toLowerCase();
    if (answer === "q" || answer === "quit") return { kind: "quit" };
    if (field === "is_new_goal") {
      if (answer === "s" || answer === "skip") return { kind: "skip" };
      if (answer === "y" || answer === "yes" || answer === "n" || answer === "no") {
        const value = answer.startsWith("y");
        if (turnNumber === 1 && !value) {
          io.stdout("  turn 1 always starts a goal\n");
          continue;
        }
        return { kind: "value", value };
      }
    } else if (field === "quality") {
      if (answer === "k" || answer === "skip") return { kind: "skip" };
      if (answer === "s" || answer === "success") return { kind: "value", value: "success" };
      if (answer === "f" || answer === "failure") return { kind: "value", value: "failure" };
    } else {
      if (answer === "k" || answer === "skip") return { kind: "skip" };
      if (answer === "none") return { kind: "value", value: null };
      const code = codes.find((c) => c.toLowerCase() === answer);
      if (code) return { kind: "value", value: code };
    }
    io.stdout(`  not an answer here: "${line}"\n`);
  }
}

function renderQueuedTurn(t: QueuedTurn, index: number, total: number): string {
  const turn = t.conversation.turns[t.turnNumber - 1];
  const text = turn
    ? renderConversation({
        ...t.conversation,
        system: undefined,
        opening: undefined,
        closing: undefined,
        turns: [turn],
      } as Conversation)
    : "(turn missing)";
  const table = renderTable(
    ["judge", "new goal", "quality", "rcof", "rationale"],
    t.judges.map((j) => [
      `${j.judge + 1} ${j.model}`,
      j.label ? String(j.label.is_new_goal) : "-",
      j.label?.quality ?? "-",
      j.label?.rcof ?? "-",
      j.label?.rationale ?? "(no label)",
    ]),
  );
  return [
    `[${index}/${total}] conversation ${t.row.conversationId}, turn ${t.turnNumber}`,
    text,
    table,
    ...t.items.map((item) => `  queued: ${item.field}: ${item.reason}`),
    "",
  ].join("\n");
}

export async function reviewCommand(
  runId: string,
  raw: RawReviewOptions,
  io: CliIo,
  input: Readable = process.stdin,
): Promise<number> {
  const options = parseOptions(reviewOptionsSchema, raw);
  const unknown = () => new UsageError(`no goal evaluation "${runId}" in ${options.db}`);
  if (!existsSync(options.db)) throw unknown();
  const store = GoalStore.open(options.db, { readonly: Boolean(options.json) });
  try {
    const run = store.getRun(runId);
    if (!run) throw unknown();
    const { judges, taxonomy } = readRunConfig(run.config, runId);
    if (judges.length === 0) {
      throw new UsageError(`goal evaluation "${runId}" has no judges: nothing to review`);
    }
    const turns = queuedTurns(store, runId, Boolean(options.all));
    if (options.json) {
      io.stdout(`${JSON.stringify(queueJson(runId, turns))}\n`);
      return 0;
    }
    const before = buildGoalReport(store, runId);
    if (turns.length === 0) {
      io.stdout(
        `review ${runId}: nothing open (${before.review.queued} fields queued, all reviewed); GSR ${formatPercent(before.judged?.gsr.percent ?? Number.NaN)}\n`,
      );
      return 0;
    }
    const reviewer = options.reviewer ?? defaultReviewer();
    io.stdout(
      `review ${runId}: ${turns.length} turns with ${turns.reduce((n, t) => n + t.items.length, 0)} open fields; reviewer ${reviewer}; answers are stored as given\n\n`,
    );
    const reader = lineReader(input, io);
    let stored = 0;
    let stopped = false;
    try {
      for (const [i, t] of turns.entries()) {
        io.stdout(renderQueuedTurn(t, i + 1, turns.length));
        const fields = new Set(t.items.map((item) => item.field));
        // A quality set to failure asks for the cause too; a cause of a success is moot.
        const order: LabelField[] = (["is_new_goal", "quality", "rcof"] as const).filter((f) =>
          fields.has(f),
        );
        const save = (field: LabelField, value: boolean | string | null) => {
          store.addReview(runId, {
            position: t.row.position,
            turnNumber: t.turnNumber,
            field,
            value: value as JsonValue,
            reviewer,
          });
          stored++;
        };
        let quality: string | undefined;
        for (const field of order) {
          if (field === "rcof" && quality === "success") continue;
          const answer = await askField(reader, io, field, t.turnNumber, taxonomy);
          if (answer === undefined || answer.kind === "quit") {
            stopped = true;
            break;
          }
          if (answer.kind === "skip") continue;
          save(field, answer.value);
          if (field === "quality") {
            quality = answer.value as string;
            if (quality === "failure" && !fields.has("rcof")) {
              const cause = await askField(reader, io, "rcof", t.turnNumber, taxonomy);
              if (cause === undefined || cause.kind === "quit") {
                stopped = true;
                break;
              }
              if (cause.kind === "value") save("rcof", cause.value);
            }
          }
        }
        if (stopped) break;
        io.stdout("\n");
      }
    } finally {
      reader.close();
    }
    const after = buildGoalReport(store, runId);
    const g = (r: typeof before) => formatPercent(r.judged?.gsr.percent ?? Number.NaN);
    const m = (r: typeof before) => formatPercent(r.judged?.multiTurnGsr.percent ?? Number.NaN);
    io.stdout(
      `review ${runId}: ${stored} label${stored === 1 ? "" : "s"} stored by ${reviewer}; ${after.review.open} fields still open\n` +
        `GSR ${g(before)} → ${g(after)}; multi-turn GSR ${m(before)} → ${m(after)}\n`,
    );
    return 0;
  } finally {
    store.close();
  }
}
