/** Human-readable reports of a run's metrics, shared by `eval`, `show` and `demo`. */

import type { RunComparison } from "../eval/compare.js";
import type { MetricsReport } from "../eval/metrics.js";
import type { ModelCallRecord } from "../model/call-record.js";
import type { StepRecord } from "../rollout/episode.js";
import {
  addCosts,
  type CostFields,
  type ModelUsageSummary,
  type StoredEpisode,
} from "../store/run-store.js";

import { formatInterval, formatRate, renderTable } from "./table.js";

/** Each metric beside its definition's name, as docs/metrics.md asks. */
export function renderMetrics(report: MetricsReport): string {
  const rows: (string | number)[][] = [
    [
      "success rate",
      formatRate(report.successRate),
      formatInterval(report.successRateInterval),
      `successes/finished (${report.successes}/${report.finished}); errors excluded: ${report.errors}`,
    ],
    [
      "mean reward",
      formatRate(report.meanReward),
      formatInterval(report.meanRewardInterval),
      "mean final reward over finished episodes",
    ],
    [
      `avg@${report.avgAtK.k}`,
      formatRate(report.avgAtK.value),
      "",
      "mean reward per task, averaged over tasks",
    ],
  ];
  for (const p of report.passAtK) {
    rows.push([
      `pass@${p.k}`,
      formatRate(p.value),
      formatInterval(p.interval),
      `unbiased 1 - C(n-c,k)/C(n,k), ${p.tasks} tasks`,
    ]);
  }
  for (const p of report.passHatK) {
    if (p.k === 1) continue; // pass^1 equals pass@1
    rows.push([
      `pass^${p.k}`,
      formatRate(p.value),
      formatInterval(p.interval),
      `C(c,k)/C(n,k), ${p.tasks} tasks`,
    ]);
  }
  return renderTable(["metric", "value", "95% CI (bootstrap over tasks)", "definition"], rows);
}

/** A call's cost as reports count it: unknown (null) when its model had no price. */
export function callCost(call: Pick<ModelCallRecord, "costUsd" | "unpriced">): CostFields {
  return call.unpriced ? { costUsd: null, unpriced: true } : { costUsd: call.costUsd };
}

/**
 * A cost for people: "$0.0123"; "unpriced" when no call had a price (never "$0.0000");
 * "$0.0123 + unpriced" when only some had. `none` stands for a null cost with nothing unpriced.
 */
export function formatCost(cost: CostFields, none = "$0.0000"): string {
  if (cost.costUsd === null) return cost.unpriced ? "unpriced" : none;
  const priced = `$${cost.costUsd.toFixed(4)}`;
  return cost.unpriced ? `${priced} + unpriced` : priced;
}

const ms = (value: number | null): string => (value === null ? "n/a" : `${Math.round(value)}`);

/**
 * Tokens, cost and time by model, with a total row when there are several models. Latency is the
 * provider's time per call that reached it; queue (waiting for the model's limiter) and retry
 * (sleeping between attempts) are shown apart, as mean per call / total.
 */
export function renderUsage(rows: readonly ModelUsageSummary[]): string {
  const sum = (pick: (r: ModelUsageSummary) => number) => rows.reduce((t, r) => t + pick(r), 0);
  const sumOrNull = (pick: (r: ModelUsageSummary) => number | null) =>
    rows.some((r) => pick(r) !== null) ? sum((r) => pick(r) ?? 0) : null;
  const line = (name: string, r: ModelUsageSummary) => [
    name,
    r.calls,
    r.cacheHits,
    r.failedCalls,
    r.failedAttempts,
    r.retries,
    r.inputTokens,
    r.outputTokens,
    formatCost(r),
    ms(r.meanLatencyMs),
    `${ms(r.meanQueueMs)}/${ms(r.totalQueueMs)}`,
    `${ms(r.meanRetryMs)}/${ms(r.totalRetryMs)}`,
  ];
  const total: ModelUsageSummary = {
    model: "total",
    calls: sum((r) => r.calls),
    cacheHits: sum((r) => r.cacheHits),
    failedCalls: sum((r) => r.failedCalls),
    failedAttempts: sum((r) => r.failedAttempts),
    retries: sum((r) => r.retries),
    inputTokens: sum((r) => r.inputTokens),
    outputTokens: sum((r) => r.outputTokens),
    ...addCosts(rows),
    meanLatencyMs: null,
    meanQueueMs: null,
    totalQueueMs: sumOrNull((r) => r.totalQueueMs),
    meanRetryMs: null,
    totalRetryMs: sumOrNull((r) => r.totalRetryMs),
  };
  return renderTable(
    [
      "model",
      "calls",
      "cached",
      "failed",
      "failed attempts",
      "retries",
      "input tok",
      "output tok",
      "cost",
      "latency ms (mean)",
      "queue ms (mean/total)",
      "retry ms (mean/total)",
    ],
    [...rows.map((r) => line(r.model, r)), ...(rows.length > 1 ? [line("total", total)] : [])],
  );
}

/** `clade compare`: both runs' metrics with their intervals, and B − A over the shared tasks. */
export function renderComparison(comparison: RunComparison, a: string, b: string): string {
  const signed = (value: number) =>
    Number.isNaN(value) ? "n/a" : `${value >= 0 ? "+" : ""}${value.toFixed(3)}`;
  const metrics = renderTable(
    ["metric", a, "95% CI", b, "95% CI", "B - A", "95% CI (paired)", "tasks"],
    comparison.metrics.map((m) => [
      m.metric,
      formatRate(m.a),
      formatInterval(m.aInterval),
      formatRate(m.b),
      formatInterval(m.bInterval),
      signed(m.difference),
      formatInterval(m.differenceInterval),
      m.tasks,
    ]),
  );
  const lines = [
    `shared tasks: ${comparison.sharedTasks.length}` +
      (comparison.onlyA + comparison.onlyB > 0
        ? ` (only in A: ${comparison.onlyA}, only in B: ${comparison.onlyB})`
        : ""),
    "",
    metrics,
  ];
  if (comparison.moved.length === 0) {
    lines.push("no shared task changed its success count\n");
  } else {
    const flipped = comparison.moved.filter((m) => m.flipped).length;
    lines.push(
      `tasks whose success rate moved: ${comparison.moved.length} (${flipped} flipped all/none)`,
      "",
      renderTable(
        ["task", "A successes/finished", "B successes/finished", "change"],
        comparison.moved.map((m) => [
          m.taskIndex,
          `${m.a.successes}/${m.a.finished}`,
          `${m.b.successes}/${m.b.finished}`,
          m.flipped ? `${m.change} (flipped)` : m.change,
        ]),
      ),
    );
  }
  return lines.join("\n");
}

/** Text indented under a label, every line of it (observations and replies span lines). */
function block(label: string, text: string): string {
  const body = text.length === 0 ? "(empty)" : text;
  return `  ${label}:\n${body
    .split("\n")
    .map((line) => `    ${line}`.trimEnd())
    .join("\n")}\n`;
}

function describeCall(call: ModelCallRecord, index: number): string {
  const retries = Math.max(call.attempts - 1, 0);
  const parts = [
    call.model,
    `tokens ${call.usage.inputTokens}/${call.usage.outputTokens}`,
    // The provider's time; waiting for the limiter and between retries is shown apart.
    call.latencyMs === null ? "no latency" : `${Math.round(call.latencyMs)} ms`,
    call.cacheHit ? "cache hit" : "cache miss",
    `${call.attempts} attempt${call.attempts === 1 ? "" : "s"}` +
      (retries > 0 ? ` (${retries} retr${retries === 1 ? "y" : "ies"})` : ""),
    ...(call.queueMs !== undefined ? [`queued ${Math.round(call.queueMs)} ms`] : []),
    ...(call.retryMs !== undefined ? [`retry wait ${Math.round(call.retryMs)} ms`] : []),
    formatCost(callCost(call)),
  ];
  let text = `  call ${index + 1}: ${parts.join(", ")}\n`;
  if (call.error) text += `    error: ${call.error}\n`;
  for (const [i, e] of (call.attemptErrors ?? []).entries()) {
    text += `    attempt ${i + 1} failed: ${e}\n`;
  }
  return text;
}

export interface EpisodeView {
  runId: string;
  episode: StoredEpisode;
  instruction: string | null;
  steps: readonly StepRecord[];
  calls: readonly ModelCallRecord[];
}

/** One episode turn by turn: what the agent said and did, what it saw, and its model calls. */
export function renderEpisode(view: EpisodeView): string {
  const { episode, steps, calls } = view;
  const out: string[] = [];
  out.push(
    `episode ${episode.taskIndex}/${episode.sampleIndex} (id ${episode.id}) of run ${view.runId}: ` +
      `${episode.outcome}, reward ${episode.reward}, ${episode.turns} turns, end ${episode.endReason}, ` +
      `${Math.round(episode.durationMs)} ms, seed ${episode.seed}\n`,
  );
  if (episode.error) out.push(`error: ${episode.error}\n`);
  if (calls.length > 0) {
    const cost = addCosts(calls.map(callCost));
    const tokensIn = calls.reduce((s, c) => s + c.usage.inputTokens, 0);
    const tokensOut = calls.reduce((s, c) => s + c.usage.outputTokens, 0);
    out.push(
      `model calls: ${calls.length}, tokens in/out ${tokensIn}/${tokensOut}, cost ${formatCost(cost)}\n`,
    );
  }
  out.push("\n");
  if (view.instruction !== null) out.push(block("instruction", view.instruction));
  if (episode.initialObservation) {
    out.push(block("initial observation", episode.initialObservation.text));
    const actions = episode.initialObservation.availableActions;
    if (actions?.length) out.push(`  available actions: ${actions.join(" | ")}\n`);
  }
  // Calls of a turn that never became a step (the episode ended in it) still get shown.
  const turns = [...new Set([...steps.map((s) => s.turn), ...calls.map((c) => c.turn)])].sort(
    (x, y) => x - y,
  );
  for (const turn of turns) {
    const step = steps.find((s) => s.turn === turn);
    out.push("\n");
    if (step) {
      out.push(
        `turn ${turn}: reward ${step.reward}, done ${step.done ? "yes" : "no"}, ` +
          `${Math.round(step.elapsedMs)} ms` +
          (step.parseErrors ? `, unusable replies ${step.parseErrors}` : "") +
          "\n",
      );
      if (step.message !== step.action) out.push(block("message", step.message));
      out.push(`  action: ${step.action}\n`);
      out.push(block("observation", step.observation.text));
    } else {
      out.push(`turn ${turn}: no step (the episode ended during this turn)\n`);
    }
    const turnCalls = calls.filter((c) => c.turn === turn);
    turnCalls.forEach((call, i) => {
      out.push(describeCall(call, i));
    });
  }
  if (turns.length === 0) out.push("no turns stored\n");
  return out.join("");
}
