/** Human-readable reports of a run's metrics, shared by `eval`, `show` and `demo`. */
import type { MetricsReport } from "../eval/metrics.js";
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
