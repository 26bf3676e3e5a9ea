/**
 * Simulated searches and the comparison of methods over many seeds (`clade evolve --simulate`,
 * docs/experiments/hgm-simulation.md). For each run: the true quality of the final choice, the
 * regret against the best quality the scenario can reach, how many evaluations (t) passed before
 * the run made its best agent, and how well the method's CMP estimate tracks the clades' real
 * productivity, as the HGM paper's Table 1 measures it.
 */
import { bootstrapInterval } from "../../../eval/metrics.js";
import type { SearchEvent, SearchLog } from "../../../store/search-log.js";
import { runSearch, type SearchResult } from "../engine.js";
import { createPolicy, type Method, type MethodHyperparameters } from "../policies/index.js";
import type { SearchPolicy } from "../policy.js";
import type { SearchTree } from "../tree.js";
import { agentOf, createSimulatedWork } from "./process.js";
import { bestQuality, createTrueCmp, type Scenario } from "./scenario.js";
import { VirtualClock } from "./virtual-clock.js";

export interface SimulatedSearchOptions {
  scenario: Scenario;
  method: Method;
  seed: number;
  /** T: evaluations of non-root nodes. */
  T: number;
  /** W: workers. Above 1, work takes simulated time (a virtual clock) unless `latencyMs`. */
  W: number;
  hyperparameters?: MethodHyperparameters;
  log?: SearchLog;
  budgetUsd?: number;
  /** Real milliseconds per piece of work (a run to watch or interrupt). */
  latencyMs?: number;
  signal?: AbortSignal;
  onEvent?: (event: SearchEvent, tree: SearchTree) => void;
}

export async function runSimulatedSearch(
  options: SimulatedSearchOptions,
): Promise<{ result: SearchResult; policy: SearchPolicy }> {
  const { scenario, method, seed, T, W } = options;
  const clock = W > 1 && !options.latencyMs ? new VirtualClock() : undefined;
  const pace = {
    ...(clock ? { clock } : {}),
    ...(options.latencyMs ? { latencyMs: options.latencyMs } : {}),
  };
  const work = createSimulatedWork(scenario, seed, pace);
  const policy = createPolicy(method, options.hyperparameters);
  const tasks = Array.from({ length: scenario.tasks }, (_, i) => i);
  const result = await runSearch({
    policy,
    improver: work.improver,
    evaluator: work.evaluator,
    tasks,
    T,
    W,
    seed,
    rootData: { ...work.root },
    ...(options.log ? { log: options.log } : {}),
    ...(options.budgetUsd !== undefined ? { budgetUsd: options.budgetUsd } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  return { result, policy };
}

/** A correlation, weighted by each node's own finished evaluations and unweighted. */
export interface Correlation {
  weighted: number;
  unweighted: number;
}

/** One simulated search, scored against the scenario's hidden truth. */
export interface RunScore {
  seed: number;
  /** The final choice's hidden p (NaN when nothing was chosen). */
  quality: number;
  /** The scenario's best reachable quality minus `quality`. */
  regret: number;
  /** The highest hidden p among the agents the run made (what a perfect final choice would get). */
  bestFound: number;
  /** t when the run made the agent with the highest hidden p it ever made (0: the root). */
  evalsToBest: number;
  /** Non-root nodes, improvements started, improvements that gave no child, errored evaluations. */
  nodes: number;
  improvements: number;
  failedImprovements: number;
  errors: number;
  /** The method's CMP estimate against the empirical CMP (best p among strict descendants). */
  cmpCorrelation: Correlation;
  /** The same estimate against the true CMP (the best p the scenario lets descendants reach). */
  trueCmpCorrelation: Correlation;
  /** Improvements started, by the branch (type of the root's child) of their parent. */
  expansions: Record<string, number>;
  /** Simulated durations of all finished work, in hours (the paper's CPU-hours). */
  workHours: number;
}

/** Pearson's correlation with weights; NaN with fewer than 3 points or no spread. */
export function weightedCorrelation(
  xs: readonly number[],
  ys: readonly number[],
  weights?: readonly number[],
): number {
  const w = (i: number) => (weights ? (weights[i] as number) : 1);
  let total = 0;
  let mx = 0;
  let my = 0;
  let points = 0;
  for (let i = 0; i < xs.length; i++) {
    if (w(i) <= 0) continue;
    points += 1;
    total += w(i);
    mx += w(i) * (xs[i] as number);
    my += w(i) * (ys[i] as number);
  }
  if (points < 3) return Number.NaN;
  mx /= total;
  my /= total;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    const dx = (xs[i] as number) - mx;
    const dy = (ys[i] as number) - my;
    sxy += w(i) * dx * dy;
    sxx += w(i) * dx * dx;
    syy += w(i) * dy * dy;
  }
  if (sxx <= 1e-15 || syy <= 1e-15) return Number.NaN;
  return sxy / Math.sqrt(sxx * syy);
}

export function scoreRun(
  scenario: Scenario,
  policy: SearchPolicy,
  result: SearchResult,
  seed: number,
): RunScore {
  const { tree, chosen, log } = result;
  const nodes = tree.nodes;
  const p = nodes.map((node) => agentOf(node).p);
  const quality = chosen === null ? Number.NaN : (p[chosen] as number);

  // Best hidden p among strict descendants: children have larger ids than their parents.
  const below = new Array<number>(nodes.length).fill(Number.NEGATIVE_INFINITY);
  for (let id = nodes.length - 1; id > 0; id--) {
    const parent = nodes[id]?.parent as number;
    below[parent] = Math.max(below[parent] as number, p[id] as number, below[id] as number);
  }
  const trueCmp = createTrueCmp(scenario);
  const estimates: number[] = [];
  const empirical: number[] = [];
  const truth: number[] = [];
  const weights: number[] = [];
  const trueEstimates: number[] = [];
  const trueWeights: number[] = [];
  for (const node of nodes) {
    if (node.id === 0) continue; // the root's clade is the whole tree (the paper leaves it out)
    const estimate = policy.cmpEstimate(node);
    if (Number.isNaN(estimate)) continue;
    const agent = agentOf(node);
    trueEstimates.push(estimate);
    truth.push(trueCmp(agent.type, agent.p));
    trueWeights.push(node.s + node.f);
    const best = below[node.id] as number;
    if (best === Number.NEGATIVE_INFINITY) continue; // a leaf has no empirical CMP
    estimates.push(estimate);
    empirical.push(best);
    weights.push(node.s + node.f);
  }

  let bestId = 0;
  for (let id = 1; id < nodes.length; id++)
    if ((p[id] as number) > (p[bestId] as number)) bestId = id;

  const expansions: Record<string, number> = {};
  for (const event of log.read()) {
    if (event.type !== "improvement_started") continue;
    const branch = agentOf(tree.node(event.parent)).branch;
    expansions[branch] = (expansions[branch] ?? 0) + 1;
  }

  return {
    seed,
    quality,
    regret: bestQuality(scenario) - quality,
    bestFound: p[bestId] as number,
    evalsToBest: tree.node(bestId).createdAtT,
    nodes: nodes.length - 1,
    improvements: tree.improvementsStarted,
    failedImprovements: tree.improvementsFailed,
    errors: tree.errors,
    cmpCorrelation: {
      weighted: weightedCorrelation(estimates, empirical, weights),
      unweighted: weightedCorrelation(estimates, empirical),
    },
    trueCmpCorrelation: {
      weighted: weightedCorrelation(trueEstimates, truth, trueWeights),
      unweighted: weightedCorrelation(trueEstimates, truth),
    },
    expansions,
    workHours: tree.workMs / 3_600_000,
  };
}

/** A mean over seeds with its 95 % percentile-bootstrap interval; null fields without data. */
export interface Estimate {
  mean: number | null;
  low: number | null;
  high: number | null;
  /** Seeds with a value (a correlation needs 3 nodes with spread). */
  n: number;
}

const mean = (values: readonly number[]) => values.reduce((s, v) => s + v, 0) / values.length;

export function estimate(values: readonly number[]): Estimate {
  const defined = values.filter((v) => !Number.isNaN(v));
  if (defined.length === 0) return { mean: null, low: null, high: null, n: 0 };
  const interval = bootstrapInterval(defined, mean);
  return { mean: mean(defined), low: interval.low, high: interval.high, n: defined.length };
}

export interface MethodSummary {
  method: Method;
  hyperparameters: Record<string, unknown>;
  quality: Estimate;
  regret: Estimate;
  bestFound: Estimate;
  evalsToBest: Estimate;
  nodes: Estimate;
  improvements: Estimate;
  cmpCorrelation: { weighted: Estimate; unweighted: Estimate };
  trueCmpCorrelation: { weighted: Estimate; unweighted: Estimate };
  /** Share of improvements started under each branch, over all seeds. */
  expansionShare: Record<string, number>;
  workHours: Estimate;
  /** This method's quality minus the first method's, paired by seed; null for the first. */
  qualityDifference: Estimate | null;
  /** Wall-clock seconds for all its seeds. */
  seconds: number;
  runs: RunScore[];
}

export interface SimulationOptions {
  scenario: Scenario;
  methods: readonly Method[];
  /** Seeds 0 .. seeds − 1. */
  seeds: number;
  T: number;
  W: number;
  hyperparameters?: MethodHyperparameters;
  signal?: AbortSignal;
  /** After each finished run. */
  onRun?: (method: Method, seed: number) => void;
}

export interface SimulationReport {
  scenario: { name: string; description: string; tasks: number; bestQuality: number };
  T: number;
  W: number;
  seeds: number;
  methods: MethodSummary[];
}

export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  const { scenario, methods, seeds, T, W } = options;
  const summaries: MethodSummary[] = [];
  for (const method of methods) {
    const started = performance.now();
    const runs: RunScore[] = [];
    let hyperparameters: Record<string, unknown> = {};
    for (let seed = 0; seed < seeds; seed++) {
      // A simulated search never waits on I/O: let signals (Ctrl-C) in between runs.
      await new Promise((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) throw options.signal.reason;
      const { result, policy } = await runSimulatedSearch({
        scenario,
        method,
        seed,
        T,
        W,
        ...(options.hyperparameters ? { hyperparameters: options.hyperparameters } : {}),
      });
      hyperparameters = policy.hyperparameters;
      runs.push(scoreRun(scenario, policy, result, seed));
      options.onRun?.(method, seed);
    }
    const first = summaries[0]?.runs;
    const expansionTotals: Record<string, number> = {};
    for (const run of runs) {
      for (const [branch, n] of Object.entries(run.expansions)) {
        expansionTotals[branch] = (expansionTotals[branch] ?? 0) + n;
      }
    }
    const allExpansions = Object.values(expansionTotals).reduce((s, n) => s + n, 0);
    summaries.push({
      method,
      hyperparameters,
      quality: estimate(runs.map((r) => r.quality)),
      regret: estimate(runs.map((r) => r.regret)),
      bestFound: estimate(runs.map((r) => r.bestFound)),
      evalsToBest: estimate(runs.map((r) => r.evalsToBest)),
      nodes: estimate(runs.map((r) => r.nodes)),
      improvements: estimate(runs.map((r) => r.improvements)),
      cmpCorrelation: {
        weighted: estimate(runs.map((r) => r.cmpCorrelation.weighted)),
        unweighted: estimate(runs.map((r) => r.cmpCorrelation.unweighted)),
      },
      trueCmpCorrelation: {
        weighted: estimate(runs.map((r) => r.trueCmpCorrelation.weighted)),
        unweighted: estimate(runs.map((r) => r.trueCmpCorrelation.unweighted)),
      },
      expansionShare: Object.fromEntries(
        Object.entries(expansionTotals)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([branch, n]) => [branch, allExpansions ? n / allExpansions : 0]),
      ),
      workHours: estimate(runs.map((r) => r.workHours)),
      qualityDifference: first
        ? estimate(runs.map((r, i) => r.quality - (first[i]?.quality ?? Number.NaN)))
        : null,
      seconds: (performance.now() - started) / 1000,
      runs,
    });
  }
  return {
    scenario: {
      name: scenario.name,
      description: scenario.description,
      tasks: scenario.tasks,
      bestQuality: bestQuality(scenario),
    },
    T,
    W,
    seeds,
    methods: summaries,
  };
}
