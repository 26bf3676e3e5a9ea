/**
 * `clade goals SOURCE [--format run|chat|tau|dialogues] [--judges SPEC,SPEC,SPEC --run-id ID]
 * [--rubric generic|helpdesk|FILE] [--taxonomy rcof|tau|mast|FILE]` and `clade goals report RUN`:
 * goal-oriented evaluation of conversations (docs/goals.md).
 *
 * Without judges: GSR, root causes and turn success from the labels that came with the data
 * (τ-bench's reward, labelled dialogues, helpdesk's injected faults); stored too when --run-id
 * is given. With judges: a stored, resumable judging job (src/eval/goals/job.ts), then the
 * report: the judges' GSR, the ground truth's beside it, agreement, the review queue.
 * Everything is read and checked before the store is opened: bad input writes nothing.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { z } from "zod";
import { formatKappa, LABEL_FIELDS, type LabelField } from "../../eval/goals/agreement.js";
import type { Conversation } from "../../eval/goals/conversation.js";
import {
  ConversationImportError,
  importRun,
  readConversations,
} from "../../eval/goals/import/index.js";
import { type GoalJobProgress, runGoalJob } from "../../eval/goals/job.js";
import { DEFAULT_ANSWER_ATTEMPTS, type Judge } from "../../eval/goals/judge.js";
import { checkTurnLabels, LabelError } from "../../eval/goals/labels.js";
import {
  computeGoalMetrics,
  type GoalMetrics,
  type SessionLabels,
} from "../../eval/goals/metrics.js";
import { buildGoalReport, type GoalReport, groundTruthTurns } from "../../eval/goals/report.js";
import {
  DEFAULT_RUBRIC,
  RubricError,
  renderRubric,
  resolveRubric,
} from "../../eval/goals/rubric.js";
import {
  DEFAULT_TAXONOMY,
  resolveTaxonomy,
  type Taxonomy,
  TaxonomyError,
} from "../../eval/goals/taxonomy.js";
import { CACHE_MODES, type CacheMode } from "../../model/cache.js";
import { createModelClient } from "../../model/client.js";
import { loadConfig } from "../../model/config.js";
import { assertPricedForBudget } from "../../model/pricing.js";
import { checkKey, publicModelSpec, resolveModel } from "../../model/resolve.js";
import { GoalStore } from "../../store/goal-log.js";
import { createResponseCache } from "../../store/response-cache.js";
import type { JsonValue } from "../../store/search-log.js";
import { type CliIo, EXIT, sha256OfFile, UsageError } from "../io.js";
import { integerOption, numberOption, parseOptions, runIdSchema } from "../options.js";
import { formatInterval, formatPercent, formatRate, renderTable } from "../table.js";
import { throttled, withInterruption } from "./evolve.js";

export const GOALS_DEFAULTS = {
  /** Judge calls in flight: eight conversations of three judges. */
  concurrency: 24,
  cache: "rw" as CacheMode,
  answerAttempts: DEFAULT_ANSWER_ATTEMPTS,
} as const;

const goalsOptionsSchema = z.object({
  format: z.enum(["run", "chat", "tau", "dialogues"]).optional(),
  judges: z.string().min(1, "must not be empty").optional(),
  rubric: z.string().min(1, "must not be empty").optional(),
  taxonomy: z.string().min(1, "must not be empty").optional(),
  runId: runIdSchema.optional(),
  concurrency: integerOption(1, 1024).optional(),
  budgetUsd: numberOption(0, 1_000_000).optional(),
  cache: z
    .enum(CACHE_MODES as [CacheMode, ...CacheMode[]], {
      error: `must be one of ${CACHE_MODES.join(", ")}`,
    })
    .optional(),
  answerAttempts: integerOption(1, 10).optional(),
  seed: integerOption(0, 2 ** 31 - 1).optional(),
  config: z.string().min(1).optional(),
  db: z.string().min(1, "must not be empty"),
  json: z.boolean().optional(),
  quiet: z.boolean().optional(),
});

export type RawGoalsOptions = z.input<typeof goalsOptionsSchema>;

const reportOptionsSchema = z.object({
  db: z.string().min(1, "must not be empty"),
  seed: integerOption(0, 2 ** 31 - 1).optional(),
  json: z.boolean().optional(),
});

export type RawGoalsReportOptions = z.input<typeof reportOptionsSchema>;

/** The library's one-line errors about the user's files, as usage errors. */
function given<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (
      error instanceof ConversationImportError ||
      error instanceof TaxonomyError ||
      error instanceof RubricError ||
      error instanceof LabelError
    ) {
      throw new UsageError(error.message);
    }
    throw error;
  }
}

/**
 * Ground truth that names causes must name the chosen taxonomy's: helpdesk's labels are RCOF
 * codes, and counting them under MAST would be counting nothing.
 */
function checkGroundTruth(conversations: readonly Conversation[], taxonomy: Taxonomy): void {
  for (const conversation of conversations) {
    const truth = conversation.groundTruth;
    if (truth?.kind !== "turns") continue;
    try {
      checkTurnLabels(truth.labels, { taxonomy, allowMissingCause: true });
    } catch (error) {
      if (!(error instanceof LabelError)) throw error;
      throw new UsageError(
        `conversation ${conversation.id} (${conversation.source.record}): ground truth: ${error.message}; choose the taxonomy the data was labelled in (--taxonomy)`,
      );
    }
  }
}

function readSource(source: string, format: RawGoalsOptions["format"], db: string) {
  if (format === "run") {
    if (!existsSync(db))
      throw new UsageError(`no store at ${db} (--db) to read run "${source}" from`);
    return {
      conversations: given(() => importRun(db, source)),
      identity: { format: "run", runId: source } as Record<string, JsonValue>,
    };
  }
  if (!existsSync(source)) {
    throw new UsageError(
      `${source}: no such file (to read a clade run, give its id with --format run)`,
    );
  }
  const conversations = given(() => readConversations(source, format));
  return {
    conversations,
    identity: {
      format: format ?? conversations[0]?.source.format ?? "chat",
      file: source,
      sha256: sha256OfFile(source),
    } as Record<string, JsonValue>,
  };
}

/** Without judges, the labels that came with the data are all there is to score. */
function requireGroundTruth(conversations: readonly Conversation[]): void {
  if (!conversations.some((c) => c.groundTruth !== undefined)) {
    throw new UsageError(
      "no conversation carries labels (ground truth) and no --judges were given: nothing to score; give --judges SPEC,SPEC,SPEC --run-id ID",
    );
  }
}

/** The report of conversations scored from their ground truth only (no store). */
function groundTruthReport(
  conversations: readonly Conversation[],
  taxonomy: Taxonomy,
  seed: number,
) {
  const sessions: SessionLabels[] = [];
  let turnLevel = true;
  for (const c of conversations) {
    const turns = groundTruthTurns(c);
    if (!turns) continue;
    if (c.groundTruth?.kind !== "turns") turnLevel = false;
    sessions.push({ id: c.id, status: "labelled", turns });
  }
  return {
    metrics: { ...computeGoalMetrics(sessions, taxonomy, { seed }), turnLevel },
    withTruth: sessions.length,
  };
}

function gsrRow(name: string, m: GoalMetrics & { turnLevel?: boolean }): string[] {
  return [
    name,
    String(m.sessions),
    String(m.gsr.total),
    `${formatPercent(m.gsr.percent)} ${formatInterval(m.gsr.interval, 1)}`,
    String(m.multiTurnGsr.total),
    `${formatPercent(m.multiTurnGsr.percent)} ${formatInterval(m.multiTurnGsr.interval, 1)}`,
    m.turnLevel === false
      ? "n/a (outcome only)"
      : `${formatPercent(m.turnSuccessRate.percent)} ${formatInterval(m.turnSuccessRate.interval, 1)}`,
  ];
}

const GSR_HEAD = [
  "labels",
  "sessions",
  "goals",
  "GSR (95% CI)",
  "multi-turn goals",
  "multi-turn GSR",
  "turn success",
];

function causesTable(columns: readonly { name: string; metrics: GoalMetrics }[]): string {
  const first = columns[0]?.metrics as GoalMetrics;
  const cell = (m: GoalMetrics, i: number) => {
    const c = m.causes[i];
    return c ? `${c.count} (${formatPercent(c.percent)})` : "";
  };
  const rows = first.causes.map((c, i) => [
    c.code,
    c.name,
    ...columns.map((col) => cell(col.metrics, i)),
  ]);
  if (columns.some((col) => col.metrics.unattributed.count > 0)) {
    rows.push([
      "-",
      "unattributed",
      ...columns.map(
        (col) =>
          `${col.metrics.unattributed.count} (${formatPercent(col.metrics.unattributed.percent)})`,
      ),
    ]);
  }
  return renderTable(
    ["code", "root cause", ...columns.map((c) => `${c.name}: failed goals (share)`)],
    rows,
  );
}

/** The report as tables (what `clade goals` and `clade goals report` print). */
export function renderGoalReport(report: GoalReport): string {
  const { counts } = report;
  const parts: string[] = [];
  const judges = report.judges.length
    ? `judges: ${report.judges.map((j, i) => `${i + 1} ${j}`).join(", ")}`
    : "no judges (ground truth only)";
  parts.push(
    `goals ${report.runId} (${report.status}${report.stopReason ? `: ${report.stopReason}` : ""}): ${counts.conversations} conversations` +
      (report.judges.length
        ? `, ${counts.judged} judged, ${counts.errored} errored, ${counts.pending} pending`
        : "") +
      `; ${judges}; taxonomy ${report.taxonomy}`,
  );
  const gsr: string[][] = [];
  if (report.judged) gsr.push(gsrRow("judges (vote, reviews applied)", report.judged));
  if (report.groundTruth) gsr.push(gsrRow("ground truth", report.groundTruth));
  if (gsr.length > 0) parts.push(renderTable(GSR_HEAD, gsr));
  const columns = [
    ...(report.judged ? [{ name: "judges", metrics: report.judged }] : []),
    ...(report.groundTruth ? [{ name: "ground truth", metrics: report.groundTruth }] : []),
  ];
  if (columns.length > 0) parts.push(causesTable(columns));
  const turns = report.agreement?.turns;
  if (turns) {
    const row = (name: string, a: typeof turns.ensemble) => [
      name,
      ...LABEL_FIELDS.flatMap((f: LabelField) => [
        `${formatRate(a.fields[f].accuracy)} (${a.fields[f].items})`,
        formatKappa(a.fields[f].kappa),
      ]),
    ];
    parts.push(
      `agreement with the ground truth, per turn (accuracy (turns compared), Cohen's κ)\n${renderTable(
        ["labeller", "is_new_goal", "κ", "quality", "κ", "rcof", "κ"],
        [...turns.judges.map((a, i) => row(`judge ${i + 1}`, a)), row("ensemble", turns.ensemble)],
      )}`,
    );
  }
  const outcome = report.agreement?.outcome;
  if (outcome) {
    const row = (name: string, a: typeof outcome.ensemble) => [
      name,
      `${formatRate(a.accuracy)} (${a.items})`,
      formatKappa(a.kappa),
    ];
    parts.push(
      `agreement with the ground truth's outcome (every turn a success ⇔ the data's success)\n${renderTable(
        ["labeller", "accuracy (conversations)", "Cohen's κ"],
        [
          ...outcome.judges.map((a, i) => row(`judge ${i + 1}`, a)),
          row("ensemble", outcome.ensemble),
        ],
      )}`,
    );
  }
  if (report.among) {
    const a = report.among;
    parts.push(
      `agreement among the ${a.labellers} judges (Fleiss' κ; unanimous items): ${LABEL_FIELDS.map(
        (f) =>
          `${f} ${formatKappa(a.fields[f].kappa)} (${a.fields[f].unanimous}/${a.fields[f].items})`,
      ).join(", ")}`,
    );
  }
  if (report.human) {
    const human = report.human;
    parts.push(
      `agreement with the reviewers (${human.reviews} reviewed fields; accuracy (items), Cohen's κ)\n${renderTable(
        ["labeller", "is_new_goal", "κ", "quality", "κ", "rcof", "κ"],
        [
          ...human.judges.map((fields, i) => ({ name: `judge ${i + 1}`, fields })),
          { name: "ensemble (vote before review)", fields: human.ensemble },
        ].map(({ name, fields }) => [
          name,
          ...LABEL_FIELDS.flatMap((f) => [
            `${formatRate(fields[f].accuracy)} (${fields[f].items})`,
            formatKappa(fields[f].kappa),
          ]),
        ]),
      )}`,
    );
  }
  if (report.judges.length > 0) {
    const { review, spend } = report;
    parts.push(
      `review queue: ${review.queued} fields queued, ${review.open} open, ${review.reviewed} reviewed${review.open > 0 ? ` (clade review ${report.runId})` : ""}`,
      `judges' spend: ${spend.unpriced ? "unpriced" : `$${spend.costUsd.toFixed(4)}`}, ${spend.calls} calls (${spend.providerAttempts} requests to the providers, retries included), ${spend.inputTokens} input and ${spend.outputTokens} output tokens, ${spend.cacheHits} cache hits`,
    );
  }
  if (report.errors.length > 0) {
    parts.push(
      `errored conversations (never scored; the same command asks their failed judges again):\n${report.errors
        .slice(0, 5)
        .map((e) => `  ${e.conversation}: ${e.error}`)
        .join(
          "\n",
        )}${report.counts.errored > 5 ? `\n  ... ${report.counts.errored - 5} more (--json lists 20)` : ""}`,
    );
  }
  return `${parts.join("\n\n")}\n`;
}

export function goalReportJson(report: GoalReport) {
  return { schema: "clade.goals-report/1", ...report };
}

/** The judges of `--judges a,b,c`: resolved, keys checked, clients through the model layer. */
function buildJudges(
  specs: readonly string[],
  config: Awaited<ReturnType<typeof loadConfig>>["config"],
  options: { budget: boolean },
) {
  return specs.map((spec, i) => {
    const resolved = resolveModel(spec, config);
    checkKey(resolved);
    if (options.budget) assertPricedForBudget(resolved);
    return { resolved, label: `judge ${i + 1} (${publicModelSpec(resolved)})` };
  });
}

function exitCodeOf(report: GoalReport, stopReason: string | null): number {
  if (stopReason === "budget") return EXIT.budget;
  const { counts } = report;
  if (counts.errored > 0 && counts.judged === 0) return EXIT.allErrored;
  if (counts.errored > 0) return EXIT.someErrored;
  return 0;
}

export async function goalsCommand(
  source: string,
  raw: RawGoalsOptions,
  io: CliIo,
): Promise<number> {
  const options = parseOptions(goalsOptionsSchema, raw);
  const judgeSpecs = options.judges?.split(",").map((s) => s.trim()) ?? [];
  if (judgeSpecs.some((s) => s === "")) {
    throw new UsageError(`--judges has an empty entry (got "${options.judges}")`);
  }
  if (judgeSpecs.length > 0 && options.runId === undefined) {
    throw new UsageError("--judges needs --run-id ID: the job is stored, and resumed, under it");
  }
  const judgeOnly = (
    [
      ["rubric", "--rubric"],
      ["concurrency", "--concurrency"],
      ["budgetUsd", "--budget-usd"],
      ["cache", "--cache"],
      ["answerAttempts", "--answer-attempts"],
    ] as const
  ).flatMap(([key, flag]) => (options[key] === undefined ? [] : [flag]));
  if (judgeSpecs.length === 0 && judgeOnly.length > 0) {
    throw new UsageError(
      `${judgeOnly.join(", ")} need${judgeOnly.length === 1 ? "s" : ""} --judges`,
    );
  }
  const { config: cladeConfig } = await loadConfig(options.config);
  const taxonomy = given(() =>
    resolveTaxonomy(options.taxonomy ?? DEFAULT_TAXONOMY, cladeConfig.taxonomies),
  );
  const rubric =
    judgeSpecs.length > 0
      ? given(() => resolveRubric(options.rubric ?? DEFAULT_RUBRIC))
      : undefined;
  const { conversations, identity } = readSource(source, options.format, options.db);
  checkGroundTruth(conversations, taxonomy);
  if (judgeSpecs.length === 0) requireGroundTruth(conversations);
  const seed = options.seed ?? 0;

  if (judgeSpecs.length === 0 && options.runId === undefined) {
    const { metrics, withTruth } = groundTruthReport(conversations, taxonomy, seed);
    const report: GoalReport = {
      runId: source,
      status: "not stored",
      stopReason: null,
      taxonomy: taxonomy.name,
      judges: [],
      counts: { conversations: conversations.length, pending: 0, judged: 0, errored: 0 },
      judged: null,
      groundTruth: metrics,
      agreement: null,
      among: null,
      human: null,
      review: { queued: 0, open: 0, reviewed: 0 },
      spend: {
        costUsd: 0,
        unpriced: false,
        calls: 0,
        inputTokens: 0,
        outputTokens: 0,
        cacheHits: 0,
        providerAttempts: 0,
      },
      errors: [],
    };
    if (options.json) io.stdout(`${JSON.stringify(goalReportJson(report))}\n`);
    else {
      const left = conversations.length - withTruth;
      const note =
        left > 0
          ? `\n(${left} conversation${left === 1 ? "" : "s"} without labels left out)\n`
          : "";
      io.stdout(renderGoalReport(report) + note);
    }
    return 0;
  }

  const judgeModels = buildJudges(judgeSpecs, cladeConfig, {
    budget: options.budgetUsd !== undefined,
  });
  const runId = options.runId as string;
  const answerAttempts = options.answerAttempts ?? GOALS_DEFAULTS.answerAttempts;
  const config: Record<string, JsonValue> = {
    source: identity,
    judges: judgeModels.map((j) => publicModelSpec(j.resolved)),
    rubric: rubric
      ? {
          name: rubric.name,
          sha256: createHash("sha256").update(renderRubric(rubric)).digest("hex"),
        }
      : null,
    taxonomy: taxonomy as unknown as JsonValue,
    answerAttempts: judgeSpecs.length > 0 ? answerAttempts : null,
  };
  const store = GoalStore.open(options.db);
  try {
    const { resumed } = store.beginRun(
      runId,
      config,
      conversations.map((c) => ({ id: c.id, conversation: c as unknown as JsonValue })),
    );
    let stopReason: "signal" | "budget" | null = null;
    if (judgeSpecs.length === 0) {
      store.setStatus(runId, "complete");
    } else {
      const cache = createResponseCache(store.db);
      const cacheMode = options.cache ?? GOALS_DEFAULTS.cache;
      const judges: Judge[] = judgeModels.map((j) => ({
        label: j.label,
        model: publicModelSpec(j.resolved),
        client: createModelClient(j.resolved, { cache, cacheMode }),
      }));
      if (resumed && !options.quiet) {
        const c = store.counts(runId);
        io.stderr(
          `goals ${runId}: resuming: ${c.judged} of ${c.conversations} conversations judged, ${c.errored} errored (asked again)\n`,
        );
      }
      const report = throttled(!options.quiet, (p: GoalJobProgress) =>
        io.stderr(
          `goals ${runId}: ${p.done}/${p.total} conversations, ${p.judged} judged, ${p.errored} errored, ${p.queued} fields queued for review, $${p.spentUsd.toFixed(4)}\n`,
        ),
      );
      let outcome: Awaited<ReturnType<typeof runGoalJob>> | undefined;
      const code = await withInterruption(async (signal) => {
        outcome = await runGoalJob({
          store,
          runId,
          judges,
          settings: { rubric: rubric as NonNullable<typeof rubric>, taxonomy, answerAttempts },
          concurrency: options.concurrency ?? GOALS_DEFAULTS.concurrency,
          signal,
          ...(options.budgetUsd !== undefined ? { budgetUsd: options.budgetUsd } : {}),
          onProgress: report,
        });
        return 0;
      }, io);
      stopReason = code !== 0 ? "signal" : (outcome?.stopReason ?? null);
      if (stopReason === null) store.setStatus(runId, "complete");
      else store.setStatus(runId, "stopped", stopReason);
      if (code !== 0) return code;
      if (stopReason === "budget") {
        io.stderr(
          `goals ${runId}: budget of $${options.budgetUsd} reached ($${outcome?.spentUsd.toFixed(4)} spent): ${outcome?.counts.pending} conversations not judged; raise --budget-usd and run the same command to finish\n`,
        );
      }
    }
    const report = buildGoalReport(store, runId, { seed });
    io.stdout(
      options.json ? `${JSON.stringify(goalReportJson(report))}\n` : renderGoalReport(report),
    );
    return exitCodeOf(report, stopReason);
  } catch (error) {
    if (store.getRun(runId)?.status === "running") store.setStatus(runId, "stopped", "error");
    throw error;
  } finally {
    store.close();
  }
}

export function goalsReportCommand(runId: string, raw: RawGoalsReportOptions, io: CliIo): number {
  const options = parseOptions(reportOptionsSchema, raw);
  const unknown = () => new UsageError(`no goal evaluation "${runId}" in ${options.db}`);
  if (!existsSync(options.db)) throw unknown();
  const store = GoalStore.open(options.db, { readonly: true });
  try {
    if (!store.getRun(runId)) throw unknown();
    const report = buildGoalReport(store, runId, { seed: options.seed ?? 0 });
    io.stdout(
      options.json ? `${JSON.stringify(goalReportJson(report))}\n` : renderGoalReport(report),
    );
    return 0;
  } finally {
    store.close();
  }
}

/** One stored goal evaluation as `clade goals list` shows it. */
function listedRun(store: GoalStore, run: NonNullable<ReturnType<GoalStore["getRun"]>>) {
  const judges = Array.isArray(run.config.judges) ? run.config.judges.map(String) : [];
  const taxonomy = run.config.taxonomy as { name?: unknown } | null | undefined;
  const counts = store.counts(run.id);
  return {
    id: run.id,
    status: run.status,
    stopReason: run.stopReason,
    judges,
    taxonomy: typeof taxonomy?.name === "string" ? taxonomy.name : null,
    conversations: counts.conversations,
    // Without judges nothing waits for a verdict (as the report counts it).
    pending: judges.length > 0 ? counts.pending : 0,
    judged: counts.judged,
    errored: counts.errored,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
  };
}

export function goalsListCommand(raw: { db: string; json?: boolean }, io: CliIo): number {
  const runs = existsSync(raw.db)
    ? (() => {
        const store = GoalStore.open(raw.db, { readonly: true });
        try {
          return store.listRuns().map((run) => listedRun(store, run));
        } finally {
          store.close();
        }
      })()
    : [];
  if (raw.json) {
    io.stdout(`${JSON.stringify({ schema: "clade.goals-list/1", runs })}\n`);
    return 0;
  }
  if (runs.length === 0) {
    io.stdout(`no goal evaluations yet in ${raw.db} (clade goals SOURCE --run-id ID)\n`);
    return 0;
  }
  io.stdout(
    `${renderTable(
      [
        "evaluation",
        "status",
        "conversations",
        "judged",
        "errored",
        "pending",
        "judges",
        "taxonomy",
        "created",
      ],
      runs.map((r) => [
        r.id,
        r.stopReason ? `${r.status} (${r.stopReason})` : r.status,
        r.conversations,
        r.judged,
        r.errored,
        r.pending,
        r.judges.length > 0 ? r.judges.join(", ") : "none (ground truth)",
        r.taxonomy ?? "",
        r.createdAt,
      ]),
    )}\n`,
  );
  return 0;
}
