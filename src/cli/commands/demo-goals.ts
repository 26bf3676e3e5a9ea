/**
 * The demo's goal-evaluation step (`clade demo`), real work of about a second: the built-in
 * helpdesk assistant (with its seeded faults) against the simulated employee on the test
 * tasks, the episodes read back as conversations (`clade goals RUN --format run`), and GSR,
 * multi-turn GSR, turn success and the root causes of failed goals from the environment's
 * ground truth. Teacher judges need a model, so the demo only names them.
 */
import { findEnv } from "../../env/registry.js";
import { runEvaluation } from "../../eval/evaluation.js";
import { importRun } from "../../eval/goals/import/index.js";
import { computeGoalMetrics, type GoalMetrics } from "../../eval/goals/metrics.js";
import { groundTruthTurns } from "../../eval/goals/report.js";
import { builtinTaxonomy } from "../../eval/goals/taxonomy.js";
import type { RunStore } from "../../store/run-store.js";
import { formatInterval, formatPercent, renderTable } from "../table.js";

export interface GoalsDemo {
  runId: string;
  conversations: number;
  metrics: GoalMetrics;
}

export async function demoGoals(store: RunStore, runId: string): Promise<GoalsDemo> {
  const env = findEnv("helpdesk");
  const { start, end } = env.info.splits.test;
  await runEvaluation({
    env,
    tasks: Array.from({ length: end - start }, (_, i) => start + i),
    agent: "assistant",
    store,
    runId,
    samples: 1,
    timeoutMs: 60_000,
    concurrency: 4,
    failFast: false,
  });
  const conversations = importRun(store, runId);
  const metrics = computeGoalMetrics(
    conversations.map((c) => ({
      id: c.id,
      status: "labelled" as const,
      turns: groundTruthTurns(c) ?? [],
    })),
    builtinTaxonomy("rcof"),
  );
  return { runId, conversations: conversations.length, metrics };
}

/** The demo's JSON part: the counts and rates, without the per-code intervals' bulk. */
export function goalsJson(demo: GoalsDemo) {
  const m = demo.metrics;
  return {
    runId: demo.runId,
    conversations: demo.conversations,
    gsr: m.gsr,
    multiTurnGsr: m.multiTurnGsr,
    turnSuccessRate: m.turnSuccessRate,
    causes: m.causes.map(({ code, count, percent }) => ({ code, count, percent })),
  };
}

export function goalsText(demo: GoalsDemo): string {
  const m = demo.metrics;
  const gsr = renderTable(
    ["helpdesk assistant", "goals", "GSR", "95% CI"],
    [
      ["all goals", m.gsr.total, formatPercent(m.gsr.percent), formatInterval(m.gsr.interval, 1)],
      [
        "multi-turn goals",
        m.multiTurnGsr.total,
        formatPercent(m.multiTurnGsr.percent),
        formatInterval(m.multiTurnGsr.interval, 1),
      ],
      [
        "turns (turn success)",
        m.turnSuccessRate.total,
        formatPercent(m.turnSuccessRate.percent),
        formatInterval(m.turnSuccessRate.interval, 1),
      ],
    ],
  );
  const causes = renderTable(
    ["RCOF", "root cause of failed goals", "goals", "share"],
    m.causes
      .filter((c) => c.count > 0)
      .map((c) => [c.code, c.name, c.count, formatPercent(c.percent)]),
  );
  return [
    `Goal-oriented evaluation: the helpdesk assistant on ${demo.conversations} test sessions, scored from the environment's ground truth (clade goals ${demo.runId} --format run):`,
    gsr,
    causes,
    "GSR = successful goals / goals (a goal succeeds only if all its turns do); CI = 95 % bootstrap over sessions.",
    "With --judges SPEC,SPEC,SPEC, three teacher models label the turns instead and vote; see docs/goals.md.",
  ].join("\n");
}
