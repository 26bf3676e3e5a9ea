/**
 * What `clade qd` prints at the end, for policies and agent configurations alike: each
 * archive's statistics, and the held-out comparison, as tables and as JSON.
 */

import type { Comparison } from "../../improve/qd/compare.js";
import type { CycleState } from "../../improve/qd/cycle.js";
import { formatInterval, formatRate, renderTable } from "../table.js";

/** Each archive's statistics, labelled by its quality task. */
export function archivesJson(state: CycleState, labels: readonly string[]) {
  return state.archives.stats().map((s, k) => ({ task: labels[k] ?? String(k), ...s }));
}

/** The comparison rows, each task labelled. */
export function comparisonJson(comparison: readonly Comparison[], labels: readonly string[]) {
  return comparison.map((c) => ({
    name: c.name,
    mean: c.mean,
    meanInterval: c.meanInterval,
    perTask: c.perTask.map((t, k) => ({ task: labels[k] ?? String(k), ...t })),
  }));
}

export function renderArchiveStats(state: CycleState, labels: readonly string[]): string {
  return renderTable(
    ["archive (quality)", "elites", "coverage", "QD-score", "max", "mean"],
    state.archives
      .stats()
      .map((s, k) => [
        labels[k] ?? String(k),
        `${s.elites}/${s.cells}`,
        formatRate(s.coverage),
        formatRate(s.qdScore),
        formatRate(s.objMax),
        formatRate(s.objMean),
      ]),
  );
}

/** The heading line and table of the held-out comparison; nothing when it was skipped. */
export function renderComparison(
  comparison: readonly Comparison[],
  tasks: readonly { readonly label: string; readonly test: readonly number[] }[],
  what: string,
): string[] {
  if (comparison.length === 0) return [];
  return [
    `held-out test tasks (success rate, 95% bootstrap intervals; ${tasks.map((t) => `${t.label} ${t.test.length}`).join(", ")})`,
    renderTable(
      [what, ...tasks.map((t) => t.label), "mean"],
      comparison.map((c) => [
        c.name,
        ...c.perTask.map((t) => `${formatRate(t.rate)} ${formatInterval(t.interval)}`),
        `${formatRate(c.mean)} ${formatInterval(c.meanInterval)}`,
      ]),
    ),
  ];
}
