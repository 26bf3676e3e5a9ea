/**
 * The demo's BLADE step (`clade demo`): the reference solver (an expert's analysis) and the naive
 * baseline (the outcome fitted on its cause alone) on clade's own datasets, each analysis run and
 * matched in the sandbox on the embedded SQL engine, then BLADE's scores and the conclusions
 * against the true effects (`clade blade report RUN`). The model judges need a model, so the
 * matching is the offline one.
 */
import { findEnv } from "../../env/registry.js";
import {
  type BladeReport,
  buildBladeReport,
  reportedAnalyses,
  storedAnalyses,
} from "../../eval/blade/report.js";
import { runEvaluation } from "../../eval/evaluation.js";
import type { RunStore } from "../../store/run-store.js";
import { formatInterval, formatRate, renderTable } from "../table.js";

export interface BladeDemo {
  agent: string;
  runId: string;
  report: BladeReport;
}

/** Runs an agent on every own dataset (the reference's run may exist already) and reports it. */
export async function demoBlade(store: RunStore, agent: string, runId: string): Promise<BladeDemo> {
  if (!store.getRun(runId)) {
    const env = findEnv("blade");
    const { start, end } = env.info.splits.test;
    await runEvaluation({
      env,
      tasks: Array.from({ length: end - start }, (_, i) => start + i),
      agent,
      store,
      runId,
      samples: 1,
      timeoutMs: 120_000,
      concurrency: 2,
      failFast: false,
    });
  }
  return { agent, runId, report: buildBladeReport(reportedAnalyses(storedAnalyses(store, runId))) };
}

export function bladeJson(demos: readonly BladeDemo[]) {
  return demos.map(({ agent, runId, report }) => ({
    agent,
    runId,
    weighted: report.scores.weighted,
    unweighted: report.scores.unweighted,
    f1: report.scores.f1,
    conclusions: report.conclusions
      ? { direction: report.conclusions.direction.rate, size: report.conclusions.size.rate }
      : null,
  }));
}

export function bladeText(demos: readonly BladeDemo[]): string {
  const table = renderTable(
    [
      "blade (clade's 6 datasets)",
      "weighted",
      "F1 vars",
      "models",
      "model+vars",
      "transforms value",
      "graph",
      "direction right",
      "95% CI",
    ],
    demos.map(({ agent, report }) => {
      const { scores, conclusions } = report;
      return [
        agent,
        formatRate(scores.weighted),
        formatRate(scores.f1.cvar),
        formatRate(scores.f1.model),
        formatRate(scores.f1.modelCvar),
        formatRate(scores.f1.transformValue),
        formatRate(scores.f1.transformGraph),
        conclusions ? `${conclusions.direction.count}/${conclusions.direction.total}` : "n/a",
        conclusions ? formatInterval(conclusions.direction.interval) : "",
      ];
    }),
  );
  return (
    `${table}BLADE's scores of one analysis per dataset (coverage over that one run); each analysis ` +
    "ran and was matched in the sandbox (embedded SQL). Direction right: the fitted effect's sign " +
    "against the process that generated the data. Details: clade blade report RUN; BLADE's data: " +
    "clade eval --env blade --blade-dir DIR (docs/blade.md)."
  );
}
