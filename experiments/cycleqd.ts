/**
 * CycleQD's central comparison at small scale (docs/experiments/cycleqd.md): on K = 3 tasks
 * (maze, textcraft, gridworld) the base, the three experts, a multi-task RL baseline trained on
 * the mixed tasks with CycleQD's environment-step budget, and CycleQD's finalists (best-mean
 * elite, merge of the per-task best) of the `paper` and the `released` variant, all played
 * greedily on each task's held-out test tasks; several seeds.
 *
 *   npx tsx experiments/cycleqd.ts [--out FILE] [--seeds N] [--generations G] [--work DIR] [--report]
 *
 * Per seed, four arms, each appended to FILE (JSON lines; default experiments/results/cycleqd.jsonl)
 * when done and skipped when the script runs again (a killed run redoes only the arm it was in):
 *
 *   experts        the base (30 PPO steps on the mixture) and one expert per task (30 steps each
 *                  from the base), as `clade qd` trains them (trainBaseAndExperts); checkpoints in
 *                  WORK/seed-S/training, so the later arms and a rerun reuse them;
 *   cycleqd-paper, cycleqd-released
 *                  G generations from the experts, then policyFinalists;
 *   multitask      the base trained further on the mixture (baseTrainingSet) until its env steps
 *                  reach each variant's budget (below); a snapshot at each.
 *
 * Budget of a variant, counted in env.step() calls beyond the base (the base is shared by every
 * arm): the experts' training env steps (the trainer's totalEnvSteps, summed over the K experts)
 * + the search's evaluation env steps (the genome's envSteps counter over the whole search: the
 * experts' generation-0 evaluation and every child's). The multi-task run stops at the first
 * optimiser step whose totalEnvSteps reaches the budget, so it overshoots by less than one step.
 * Test-time evaluation is counted for nobody.
 *
 * --report prints the tables from FILE alone.
 */

import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { findEnv } from "../src/env/registry.js";
import type { ArchiveStats } from "../src/improve/qd/archive.js";
import { comparePolicies, type PolicyComparison } from "../src/improve/qd/compare.js";
import { type CycleState, initCycle, runCycle, type Variant } from "../src/improve/qd/cycle.js";
import {
  baseTrainingSet,
  type QdTask,
  type TrainedExperts,
  trainBaseAndExperts,
} from "../src/improve/qd/experts.js";
import { policyFinalists } from "../src/improve/qd/final.js";
import { createPolicyGenome, FilePolicyStore } from "../src/improve/qd/policy-genome.js";
import { decodePolicy, encodePolicy, type PolicyModel } from "../src/improve/rl/policy/model.js";
import { train } from "../src/improve/rl/train/train.js";
import { readResults } from "./results-file.js";

// ---- The design -----------------------------------------------------------------------------
const TASK_NAMES = ["maze", "textcraft", "gridworld"] as const;
const BASE_STEPS = 30;
const EXPERT_STEPS = 30;
const SEARCH_TASKS = 10;
const TEST_TASKS = 50;
const BINS = 15;
const RANGES = TASK_NAMES.map(() => ({ min: 0, max: 1 }));
const VARIANT_LIST: readonly Variant[] = ["paper", "released"];
const DEFAULT_GENERATIONS = 60;
const DEFAULT_SEEDS = 3;
/** Coverage and QD-score are recorded every this many generations. */
const CURVE_EVERY = 10;

function qdTasks(): QdTask[] {
  return TASK_NAMES.map((name) => {
    const env = findEnv(name);
    const { train: tr, test } = env.info.splits;
    const trainTasks = Array.from({ length: tr.end - tr.start }, (_, i) => tr.start + i);
    return {
      label: name,
      env,
      train: trainTasks,
      search: trainTasks.slice(0, SEARCH_TASKS),
      test: Array.from(
        { length: Math.min(TEST_TASKS, test.end - test.start) },
        (_, i) => test.start + i,
      ),
    };
  });
}

// ---- Records --------------------------------------------------------------------------------
interface Base {
  /** Names the design: arms of another design are neither skipped nor reported. */
  design: string;
  seed: number;
  cpuSeconds: number;
}
interface ExpertsRecord extends Base {
  arm: "experts";
  envSteps: { base: number; experts: number[] };
  test: PolicyComparison[];
}
interface CycleRecord extends Base {
  arm: "cycleqd";
  variant: Variant;
  generations: number;
  /** The genome's env steps: generation 0 (the experts' evaluation) and the whole search. */
  initEnvSteps: number;
  searchEnvSteps: number;
  expertsEnvSteps: number;
  budget: number;
  errored: number;
  /** Children that entered at least one archive (the experts not counted). */
  kept: number;
  archives: (ArchiveStats & { task: string })[];
  curve: { generation: number; coverage: number; qdScore: number }[];
  finalists: {
    bestMean: { id: string; scores: number[] };
    merge: { members: { id: string; scores: number[] }[] };
  };
  test: PolicyComparison[];
}
interface MultitaskRecord extends Base {
  arm: "multitask";
  snapshots: { variant: Variant; budget: number; envSteps: number; steps: number }[];
  test: PolicyComparison[];
}
type Record_ = ExpertsRecord | CycleRecord | MultitaskRecord;

const armKey = (r: { arm: string; variant?: Variant }) =>
  r.arm === "cycleqd" ? `cycleqd-${r.variant}` : r.arm;

// ---- The arms -------------------------------------------------------------------------------
const say = (line: string) =>
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function baseAndExperts(tasks: QdTask[], seed: number, dir: string) {
  return trainBaseAndExperts({
    tasks,
    baseSteps: BASE_STEPS,
    expertSteps: EXPERT_STEPS,
    seed,
    dir,
    onStep: (phase, m) => {
      if ((m.step + 1) % 10 !== 0) return;
      const who = phase.kind === "base" ? "base" : `expert ${tasks[phase.task]?.label}`;
      say(`seed ${seed}: ${who} step ${m.step + 1}, train success ${m.successRate.toFixed(2)}`);
    },
  });
}

async function expertsArm(
  tasks: QdTask[],
  seed: number,
  trained: TrainedExperts,
  design: string,
  cpu0: number,
): Promise<ExpertsRecord> {
  say(`seed ${seed}: testing the base and the experts`);
  const test = await comparePolicies(
    [
      { name: "base", policy: trained.base },
      ...trained.experts.map((policy, k) => ({ name: `expert ${tasks[k]?.label}`, policy })),
    ],
    tasks,
  );
  return {
    design,
    seed,
    arm: "experts",
    envSteps: trained.envSteps,
    test,
    cpuSeconds: cpuNow() - cpu0,
  };
}

async function cycleArm(
  tasks: QdTask[],
  seed: number,
  trained: TrainedExperts,
  variant: Variant,
  generations: number,
  dir: string,
  design: string,
): Promise<CycleRecord> {
  const cpu0 = cpuNow();
  const genome = createPolicyGenome({
    base: trained.base,
    experts: trained.experts,
    tasks: tasks.map((t) => ({ env: t.env, tasks: t.search })),
    variant,
  });
  const store = new FilePolicyStore(join(dir, variant, "elites"));
  const setup = { genome, store, seed, variant };
  const summary = (state: CycleState) => {
    const stats = state.archives.stats();
    return {
      generation: state.generation,
      coverage: stats.reduce((a, s) => a + s.coverage, 0) / stats.length,
      qdScore: stats.reduce((a, s) => a + s.qdScore, 0),
    };
  };
  const { state } = await initCycle(setup, {
    experts: trained.experts,
    ranges: RANGES,
    bins: BINS,
  });
  const initEnvSteps = genome.envSteps;
  const curve = [summary(state)];
  let kept = 0;
  await runCycle(setup, state, {
    generations,
    onGeneration: (record, now) => {
      if (record.child.kept) kept++;
      if (now.generation % CURVE_EVERY !== 0) return;
      const s = summary(now);
      curve.push(s);
      say(
        `seed ${seed} ${variant}: generation ${s.generation}/${generations}, coverage ${s.coverage.toFixed(3)}, QD-score ${s.qdScore.toFixed(2)}, env steps ${genome.envSteps}`,
      );
    },
  });
  const finalists = await policyFinalists(state.archives, store, trained.base);
  say(`seed ${seed} ${variant}: testing the finalists`);
  const test = await comparePolicies(
    [
      { name: `CycleQD ${variant} best-mean`, policy: finalists.bestMean.policy },
      { name: `CycleQD ${variant} merge`, policy: finalists.merge.policy },
    ],
    tasks,
  );
  const expertsEnvSteps = trained.envSteps.experts.reduce((a, b) => a + b, 0);
  return {
    design,
    seed,
    arm: "cycleqd",
    variant,
    generations: state.generation,
    initEnvSteps,
    searchEnvSteps: genome.envSteps,
    expertsEnvSteps,
    budget: expertsEnvSteps + genome.envSteps,
    errored: state.errored,
    kept,
    archives: state.archives.stats().map((s, k) => ({ task: tasks[k]?.label ?? String(k), ...s })),
    curve,
    finalists: {
      bestMean: { id: finalists.bestMean.elite.id, scores: [...finalists.bestMean.elite.scores] },
      merge: {
        members: finalists.merge.elites.map((e) => ({ id: e.id, scores: [...e.scores] })),
      },
    },
    test,
    cpuSeconds: cpuNow() - cpu0,
  };
}

async function multitaskArm(
  tasks: QdTask[],
  seed: number,
  trained: TrainedExperts,
  budgets: { variant: Variant; budget: number }[],
  design: string,
): Promise<MultitaskRecord> {
  const cpu0 = cpuNow();
  const set = baseTrainingSet(tasks);
  const pending = [...budgets].sort((a, b) => a.budget - b.budget);
  const snapshots: MultitaskRecord["snapshots"] = [];
  const models = new Map<Variant, PolicyModel>();
  const controller = new AbortController();
  const last = pending.at(-1)?.budget ?? 0;
  await train({
    env: set.env,
    trainTasks: set.trainTasks,
    model: trained.base,
    seed,
    steps: 1_000_000,
    signal: controller.signal,
    onStep: (m, model) => {
      if ((m.step + 1) % 10 === 0) {
        say(
          `seed ${seed} multitask: step ${m.step + 1}, env steps ${m.totalEnvSteps}/${last}, train success ${m.successRate.toFixed(2)}`,
        );
      }
      while (pending.length > 0 && m.totalEnvSteps >= (pending[0]?.budget ?? 0)) {
        const { variant, budget } = pending.shift() as { variant: Variant; budget: number };
        models.set(variant, decodePolicy(encodePolicy(model)));
        snapshots.push({ variant, budget, envSteps: m.totalEnvSteps, steps: m.step + 1 });
        say(`seed ${seed} multitask: ${variant} budget ${budget} reached at step ${m.step + 1}`);
      }
      if (pending.length === 0) controller.abort();
    },
  });
  say(`seed ${seed} multitask: testing`);
  const test = await comparePolicies(
    budgets.map(({ variant }) => ({
      name: `multi-task RL (${variant} budget)`,
      policy: models.get(variant) as PolicyModel,
    })),
    tasks,
  );
  return { design, seed, arm: "multitask", snapshots, test, cpuSeconds: cpuNow() - cpu0 };
}

// ---- Report ---------------------------------------------------------------------------------
/** Student's t quantile (0.975) for n − 1 degrees of freedom, n ≤ 11. */
const T975 = [Number.NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

function meanInterval(xs: readonly number[]): { mean: number; half: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, half: Number.NaN };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  return { mean, half: ((T975[n - 1] ?? 1.96) * sd) / Math.sqrt(n) };
}
const pm = (xs: readonly number[], digits = 3) => {
  const { mean, half } = meanInterval(xs);
  return `${mean.toFixed(digits)} ± ${Number.isNaN(half) ? "n/a" : half.toFixed(digits)}`;
};
const kilo = (x: number) => `${(x / 1000).toFixed(0)} k`;

function report(records: readonly Record_[], design: string): string {
  const mine = records.filter((r) => r.design === design);
  const seeds = [...new Set(mine.map((r) => r.seed))].sort((a, b) => a - b);
  // Only seeds with every arm done enter the tables (so each row has the same seeds).
  const complete = seeds.filter(
    (s) => new Set(mine.filter((r) => r.seed === s).map(armKey)).size === 2 + VARIANT_LIST.length,
  );
  const rec = (seed: number, key: string) =>
    mine.find((r) => r.seed === seed && armKey(r) === key) as Record_;
  const comparisonOf = (seed: number, name: string): PolicyComparison => {
    for (const r of mine.filter((x) => x.seed === seed)) {
      const c = r.test.find((t) => t.name === name);
      if (c) return c;
    }
    throw new Error(`no result for ${name}, seed ${seed}`);
  };
  const names = [
    "base",
    ...TASK_NAMES.map((t) => `expert ${t}`),
    ...VARIANT_LIST.map((v) => `multi-task RL (${v} budget)`),
    ...VARIANT_LIST.flatMap((v) => [`CycleQD ${v} best-mean`, `CycleQD ${v} merge`]),
  ];
  const stepsOf = (seed: number, name: string): number => {
    const experts = rec(seed, "experts") as ExpertsRecord;
    if (name === "base") return 0;
    if (name.startsWith("expert ")) {
      return (
        experts.envSteps.experts[(TASK_NAMES as readonly string[]).indexOf(name.slice(7))] ?? 0
      );
    }
    const variant = VARIANT_LIST.find((v) => name.includes(v)) as Variant;
    if (name.startsWith("multi-task")) {
      const m = rec(seed, "multitask") as MultitaskRecord;
      return m.snapshots.find((s) => s.variant === variant)?.envSteps ?? 0;
    }
    return (rec(seed, `cycleqd-${variant}`) as CycleRecord).budget;
  };
  const lines: string[] = [];
  lines.push(
    `design ${design}; complete seeds: ${complete.join(", ") || "none"}${seeds.length > complete.length ? ` (incomplete: ${seeds.filter((s) => !complete.includes(s)).join(", ")})` : ""}`,
    "",
    "Held-out test success (greedy; mean ± 95 % t-interval over seeds):",
    "",
    `| policy | ${TASK_NAMES.join(" | ")} | mean over tasks | env steps beyond the base |`,
    `|---|${TASK_NAMES.map(() => "---|").join("")}---|---|`,
  );
  if (complete.length === 0) return lines.join("\n");
  for (const name of names) {
    const cs = complete.map((s) => comparisonOf(s, name));
    lines.push(
      `| ${name} | ${TASK_NAMES.map((_, k) => pm(cs.map((c) => c.perTask[k]?.rate ?? Number.NaN))).join(" | ")} | ${pm(cs.map((c) => c.mean))} | ${kilo(complete.reduce((a, s) => a + stepsOf(s, name), 0) / complete.length)} |`,
    );
  }

  // Paired differences of the mean over tasks, by seed.
  const meanOf = (s: number, name: string) => comparisonOf(s, name).mean;
  const bestExpert = (s: number) => Math.max(...TASK_NAMES.map((t) => meanOf(s, `expert ${t}`)));
  const diff = (label: string, f: (s: number) => number) => {
    const ds = complete.map(f);
    const better = ds.filter((d) => d > 1e-12).length;
    const worse = ds.filter((d) => d < -1e-12).length;
    lines.push(
      `| ${label} | ${pm(ds)} | ${better} / ${worse} / ${ds.length - better - worse} | ${ds.map((d) => d.toFixed(3)).join(", ")} |`,
    );
  };
  lines.push(
    "",
    "Paired differences of the mean over tasks (by seed):",
    "",
    "| difference | mean ± 95 % t-interval | seeds better / worse / tied | per seed |",
    "|---|---|---|---|",
  );
  for (const v of VARIANT_LIST) {
    for (const f of ["merge", "best-mean"]) {
      const cq = `CycleQD ${v} ${f}`;
      diff(`${cq} − best expert of the seed`, (s) => meanOf(s, cq) - bestExpert(s));
      diff(
        `${cq} − multi-task RL (${v} budget)`,
        (s) => meanOf(s, cq) - meanOf(s, `multi-task RL (${v} budget)`),
      );
      diff(`${cq} − base`, (s) => meanOf(s, cq) - meanOf(s, "base"));
    }
  }
  for (const f of ["merge", "best-mean"]) {
    diff(
      `CycleQD paper ${f} − CycleQD released ${f}`,
      (s) => meanOf(s, `CycleQD paper ${f}`) - meanOf(s, `CycleQD released ${f}`),
    );
  }
  diff(
    "multi-task RL (paper budget) − best expert of the seed",
    (s) => meanOf(s, "multi-task RL (paper budget)") - bestExpert(s),
  );

  // Each task: the finalists against that task's own expert.
  lines.push(
    "",
    "On each task, against that task's own expert (paired by seed; mean ± 95 % t-interval):",
    "",
    `| policy | ${TASK_NAMES.map((t) => `${t} − expert ${t}`).join(" | ")} |`,
    `|---|${TASK_NAMES.map(() => "---|").join("")}`,
  );
  for (const name of names.filter((n) => !n.startsWith("expert"))) {
    lines.push(
      `| ${name} | ${TASK_NAMES.map((t, k) =>
        pm(
          complete.map(
            (s) =>
              (comparisonOf(s, name).perTask[k]?.rate ?? Number.NaN) -
              (comparisonOf(s, `expert ${t}`).perTask[k]?.rate ?? Number.NaN),
          ),
        ),
      ).join(" | ")} |`,
    );
  }

  // Archives.
  lines.push(
    "",
    "Archives after the search (mean ± 95 % t-interval over seeds; 225 cells each; QD-score = Σ quality over elites, offset 0):",
    "",
    `| variant | ${TASK_NAMES.map((t) => `${t} archive: elites, QD-score, best quality`).join(" | ")} | mean coverage | summed QD-score | kept children | errored |`,
    `|---|${TASK_NAMES.map(() => "---|").join("")}---|---|---|---|`,
  );
  for (const v of VARIANT_LIST) {
    const rs = complete.map((s) => rec(s, `cycleqd-${v}`) as CycleRecord);
    lines.push(
      `| ${v} | ${TASK_NAMES.map(
        (_, k) =>
          `${pm(
            rs.map((r) => r.archives[k]?.elites ?? 0),
            1,
          )}, ${pm(
            rs.map((r) => r.archives[k]?.qdScore ?? 0),
            2,
          )}, ${pm(rs.map((r) => r.archives[k]?.objMax ?? Number.NaN))}`,
      ).join(
        " | ",
      )} | ${pm(rs.map((r) => r.archives.reduce((a, x) => a + x.coverage, 0) / r.archives.length))} | ${pm(
        rs.map((r) => r.archives.reduce((a, x) => a + x.qdScore, 0)),
        2,
      )} | ${pm(
        rs.map((r) => r.kept),
        1,
      )} | ${rs.reduce((a, r) => a + r.errored, 0)} |`,
    );
  }
  lines.push("", "Coverage and summed QD-score along the search (mean over seeds):", "");
  for (const v of VARIANT_LIST) {
    const rs = complete.map((s) => rec(s, `cycleqd-${v}`) as CycleRecord);
    const points = (rs[0]?.curve ?? []).map((p, i) => {
      const cov = rs.reduce((a, r) => a + (r.curve[i]?.coverage ?? 0), 0) / rs.length;
      const qd = rs.reduce((a, r) => a + (r.curve[i]?.qdScore ?? 0), 0) / rs.length;
      return `${p.generation}: ${cov.toFixed(3)} / ${qd.toFixed(2)}`;
    });
    lines.push(`- ${v}: ${points.join(", ")}`);
  }

  // Finalists' search scores against their test scores.
  lines.push(
    "",
    "Finalists' scores on the search tasks (what selected them) against the test tasks, mean over tasks and seeds:",
    "",
    "| finalist | search tasks | test tasks |",
    "|---|---|---|",
  );
  for (const v of VARIANT_LIST) {
    const rs = complete.map((s) => rec(s, `cycleqd-${v}`) as CycleRecord);
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    lines.push(
      `| ${v} best-mean | ${pm(rs.map((r) => avg(r.finalists.bestMean.scores)))} | ${pm(rs.map((r) => comparisonOf(r.seed, `CycleQD ${v} best-mean`).mean))} |`,
    );
  }

  // Budgets and CPU.
  lines.push(
    "",
    "Budgets (env steps, mean over seeds) and CPU:",
    "",
    "| seed | base | experts (sum) | paper search (init) | released search (init) | multi-task reached (steps): paper, released | CPU min: experts, paper, released, multitask |",
    "|---|---|---|---|---|---|---|",
  );
  let cpu = 0;
  for (const s of complete) {
    const e = rec(s, "experts") as ExpertsRecord;
    const p = rec(s, "cycleqd-paper") as CycleRecord;
    const r = rec(s, "cycleqd-released") as CycleRecord;
    const m = rec(s, "multitask") as MultitaskRecord;
    const snap = (v: Variant) => {
      const x = m.snapshots.find((y) => y.variant === v);
      return x ? `${kilo(x.envSteps)} (${x.steps})` : "n/a";
    };
    const cpus = [e, p, r, m].map((x) => x.cpuSeconds / 60);
    cpu += cpus.reduce((a, b) => a + b, 0);
    lines.push(
      `| ${s} | ${kilo(e.envSteps.base)} | ${kilo(e.envSteps.experts.reduce((a, b) => a + b, 0))} | ${kilo(p.searchEnvSteps)} (${kilo(p.initEnvSteps)}) | ${kilo(r.searchEnvSteps)} (${kilo(r.initEnvSteps)}) | ${snap("paper")}, ${snap("released")} | ${cpus.map((c) => c.toFixed(1)).join(", ")} |`,
    );
  }
  lines.push("", `total CPU: ${cpu.toFixed(1)} min over ${complete.length} seed(s)`);
  return lines.join("\n");
}

// ---- Main -----------------------------------------------------------------------------------
const { values } = parseArgs({
  options: {
    out: { type: "string", default: "experiments/results/cycleqd.jsonl" },
    seeds: { type: "string", default: String(DEFAULT_SEEDS) },
    generations: { type: "string", default: String(DEFAULT_GENERATIONS) },
    work: { type: "string", default: "scratch/cycleqd" },
    report: { type: "boolean", default: false },
  },
});
const out = values.out;
const seeds = Number(values.seeds);
const generations = Number(values.generations);
if (!(Number.isInteger(seeds) && seeds >= 1)) throw new Error("--seeds must be an integer ≥ 1");
if (!(Number.isInteger(generations) && generations >= 1)) {
  throw new Error("--generations must be an integer ≥ 1");
}
const design = `K3-b${BASE_STEPS}-e${EXPERT_STEPS}-s${SEARCH_TASKS}-t${TEST_TASKS}-B${BINS}-G${generations}`;
const records = readResults<Record_>(out);

if (!values.report) {
  mkdirSync(dirname(out), { recursive: true });
  const tasks = qdTasks();
  const save = (r: Record_) => {
    appendFileSync(out, `${JSON.stringify(r)}\n`);
    records.push(r);
  };
  const has = (seed: number, key: string) =>
    records.some((r) => r.design === design && r.seed === seed && armKey(r) === key);
  const started = cpuNow();
  for (let seed = 0; seed < seeds; seed++) {
    const arms = ["experts", ...VARIANT_LIST.map((v) => `cycleqd-${v}`), "multitask"];
    if (arms.every((a) => has(seed, a))) continue;
    const dir = join(values.work, design, `seed-${seed}`);
    const cpu0 = cpuNow();
    // Trained once per seed (or read back from its checkpoints) and shared by every arm; the
    // checkpoints do not depend on G, so a design that differs only in G reuses them.
    const trainingDir = join(values.work, `train-b${BASE_STEPS}-e${EXPERT_STEPS}`, `seed-${seed}`);
    const trained = await baseAndExperts(tasks, seed, trainingDir);
    if (trained.stopped) throw new Error("training stopped");
    if (!has(seed, "experts")) {
      const r = await expertsArm(tasks, seed, trained, design, cpu0);
      save(r);
      say(
        `seed ${seed}: experts done, test means ${r.test.map((c) => `${c.name} ${c.mean.toFixed(3)}`).join(", ")}, ${(r.cpuSeconds / 60).toFixed(1)} CPU min`,
      );
    }
    for (const variant of VARIANT_LIST) {
      if (has(seed, `cycleqd-${variant}`)) continue;
      const r = await cycleArm(tasks, seed, trained, variant, generations, dir, design);
      save(r);
      say(
        `seed ${seed} ${variant}: done, budget ${r.budget}, test means ${r.test.map((c) => `${c.name} ${c.mean.toFixed(3)}`).join(", ")}, ${(r.cpuSeconds / 60).toFixed(1)} CPU min`,
      );
    }
    if (!has(seed, "multitask")) {
      const budgets = VARIANT_LIST.map((variant) => {
        const c = records.find(
          (r) => r.design === design && r.seed === seed && armKey(r) === `cycleqd-${variant}`,
        ) as CycleRecord;
        return { variant, budget: c.budget };
      });
      const r = await multitaskArm(tasks, seed, trained, budgets, design);
      save(r);
      say(
        `seed ${seed} multitask: done, test means ${r.test.map((c) => `${c.name} ${c.mean.toFixed(3)}`).join(", ")}, ${(r.cpuSeconds / 60).toFixed(1)} CPU min`,
      );
    }
    say(`seed ${seed}: all arms done; ${((cpuNow() - started) / 60).toFixed(1)} CPU min this run`);
  }
}
console.log(report(records, design));
