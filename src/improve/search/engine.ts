/**
 * The search engine: W workers that ask a policy what to do next, do it through an `Improver`
 * (parent → child or no child) or an `Evaluator` (node, task → pass | fail | error), and write
 * every step to an append-only log. The tree is a fold of that log (tree.ts), so a search that
 * was killed resumes from its log: the tree is rebuilt, the work that was in flight is dispatched
 * again (same node, same task, same parent), and the search goes on. Each decision's random draws
 * are fixed by (seed, work number), so with one worker a resumed search equals an uninterrupted one.
 *
 * What the engine does for every method alike:
 * - the root is evaluated on every task first, in the task list's order (it does not count in t);
 * - the budget T counts evaluations of non-root nodes, at dispatch (t); once t ≥ T, nothing new
 *   is dispatched, and work in flight finishes;
 * - `budgetUsd` stops dispatching once the work's recorded cost reaches it (work whose models
 *   have no price records only its priced part: the CLI refuses a dollar budget for such models);
 * - an evaluation that errors is recorded with its reason, never as a fail, and its task goes
 *   back to the node's open tasks, `maxTaskAttempts` times at most (an errored dispatch counts
 *   in t: the budget was spent);
 * - an improvement that throws, or returns no child, is recorded as failed with its reason;
 *   after `maxFailedImprovementsInARow` of them with no evaluation or child in between, nothing
 *   new is dispatched until the work in flight finishes, and with none in flight the search stops
 *   ("improvements-failing"): failed improvements spend none of T, so a parent that can never be
 *   improved (nothing to fix, a broken model) would otherwise be expanded forever.
 * Decisions are synchronous: JavaScript's single thread is the paper's lock.
 */
import type {
  EvaluationOutcome,
  JsonValue,
  SearchEvent,
  SearchLog,
  WorkUsage,
} from "../../store/search-log.js";
import { createBetaSampler } from "./beta.js";
import { createFastRng } from "./fast-rng.js";
import type { SearchPolicy } from "./policy.js";
import { type InFlight, type NodeId, ROOT, type SearchNode, SearchTree } from "./tree.js";

/** What an improvement gave: a child (the improver's record of it) or none, with the reason. */
export type ImprovementResult =
  | { child: { data: JsonValue }; usage?: Partial<WorkUsage>; durationMs?: number }
  | { child: null; reason: string; usage?: Partial<WorkUsage>; durationMs?: number };

export interface EvaluationResult {
  outcome: EvaluationOutcome;
  /** Why it errored (required sense for "error"; ignored otherwise). */
  reason?: string;
  usage?: Partial<WorkUsage>;
  /** How long it took, when the evaluator knows better than the wall clock (a simulation). */
  durationMs?: number;
}

export interface WorkContext {
  /** The work number: unique in the search, fixed at dispatch, the same when redispatched. */
  work: number;
  /** Aborted when the search is interrupted: stop and throw; nothing is recorded. */
  signal: AbortSignal;
}

/** Makes a child of an agent (HGM: a self-modification). */
export interface Improver {
  /**
   * `ordinal`: how many improvements of this parent were started before this one (0 for its
   * first), failed ones included: fixed by the log, so a redispatched improvement gets the same.
   */
  improve(
    parent: SearchNode,
    context: WorkContext & { ordinal: number },
  ): Promise<ImprovementResult>;
}

/** Runs one task on one agent. */
export interface Evaluator {
  evaluate(
    node: SearchNode,
    task: number,
    context: WorkContext & { attempt: number },
  ): Promise<EvaluationResult>;
}

export interface SearchOptions {
  policy: SearchPolicy;
  improver: Improver;
  evaluator: Evaluator;
  /** The task indices evaluations draw from. */
  tasks: readonly number[];
  /** T: the budget, in task evaluations of non-root nodes. */
  T: number;
  /** W: workers, i.e. improvements and evaluations in flight at once. */
  W: number;
  /** Fixes every random draw of the policy. */
  seed: number;
  /** Stop dispatching once the recorded cost reaches this many dollars. */
  budgetUsd?: number;
  /** Attempts per (node, task) before a task that keeps erroring is given up for that node. */
  maxTaskAttempts?: number;
  /** Failed improvements in a row (no evaluation or child between them) that stop the search. */
  maxFailedImprovementsInARow?: number;
  /** The improver's record of the root (e.g. a simulation's hidden state). */
  rootData?: JsonValue;
  /** Where events go; in memory when absent. A log with events resumes that search. */
  log?: SearchLog;
  signal?: AbortSignal;
  /** Called after every event, once the tree has applied it. */
  onEvent?: (event: SearchEvent, tree: SearchTree) => void;
}

export type StopReason = "budget" | "budget-usd" | "exhausted" | "improvements-failing" | "signal";

export interface SearchResult {
  tree: SearchTree;
  /** The final choice, or null when no node has a finished evaluation. */
  chosen: NodeId | null;
  stopReason: StopReason;
  /** The log held events already: this call resumed the search. */
  resumed: boolean;
  /** Work that was in flight in the log and was dispatched again. */
  redispatched: number;
  log: SearchLog;
}

/** Draws of a decision: keyed by (seed, work number, this tag). */
const DECISION_DRAWS = 0xdec1;
const DEFAULT_MAX_TASK_ATTEMPTS = 3;
const DEFAULT_MAX_FAILED_IMPROVEMENTS_IN_A_ROW = 50;

/** A log in memory (a simulation's). */
export function memoryLog(events: SearchEvent[] = []): SearchLog {
  return { read: () => events, append: (event) => void events.push(event) };
}

function fullUsage(usage: Partial<WorkUsage> | undefined): WorkUsage {
  return {
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    costUsd: usage?.costUsd ?? 0,
    ...(usage?.unpriced ? { unpriced: true } : {}),
  };
}

const message = (error: unknown) =>
  (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";

export async function runSearch(options: SearchOptions): Promise<SearchResult> {
  const { policy, improver, evaluator, tasks, T, W, seed } = options;
  if (!(Number.isInteger(T) && T >= 0))
    throw new RangeError(`T must be a whole number ≥ 0, got ${T}`);
  if (!(Number.isInteger(W) && W >= 1))
    throw new RangeError(`W must be a whole number ≥ 1, got ${W}`);
  const log = options.log ?? memoryLog();
  const tree = new SearchTree(
    tasks,
    options.maxTaskAttempts ?? DEFAULT_MAX_TASK_ATTEMPTS,
    options.rootData ?? null,
  );
  const stored = log.read();
  const resumed = stored.length > 0;
  for (const event of stored) {
    tree.apply(event);
    policy.observe(event, tree);
  }
  const resumedWork = tree.inFlightWork();
  const redispatched = resumedWork.length;
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });

  let stopReason: StopReason | null = null;
  // Workers with nothing to do wait for the next change (a finish, or the stop).
  let waiting: (() => void)[] = [];
  const changed = () => new Promise<void>((resolve) => waiting.push(resolve));
  const notify = () => {
    if (waiting.length === 0) return;
    const wake = waiting;
    waiting = [];
    for (const resolve of wake) resolve();
  };
  const stop = (reason: StopReason) => {
    stopReason ??= reason;
    notify();
  };

  const maxFailedInARow =
    options.maxFailedImprovementsInARow ?? DEFAULT_MAX_FAILED_IMPROVEMENTS_IN_A_ROW;
  let failedInARow = 0;
  const record = (event: SearchEvent) => {
    if (event.type === "improvement_failed") failedInARow++;
    else if (event.type === "improvement_finished" || event.type === "evaluation_finished") {
      failedInARow = 0;
    }
    log.append(event);
    tree.apply(event);
    policy.observe(event, tree);
    options.onEvent?.(event, tree);
  };

  /** The next work to dispatch (its event written), or what to do instead. */
  const dispatchNext = (): InFlight | "wait" | "stop" => {
    if (stopReason) return "stop";
    if (controller.signal.aborted) return stopWith("signal");
    if (options.budgetUsd !== undefined && tree.usage.costUsd >= options.budgetUsd) {
      return stopWith("budget-usd");
    }
    if (failedInARow >= maxFailedInARow) {
      // Work in flight may change what improvements see (a finished evaluation): wait for it.
      return tree.pendingEvaluations + tree.pendingImprovements > 0
        ? "wait"
        : stopWith("improvements-failing");
    }
    const work = tree.nextWork;
    const rootTask = tree.firstOpenTask(ROOT);
    if (rootTask >= 0) return dispatchEvaluation(work, ROOT, rootTask);
    if (tree.node(ROOT).pending === 0 && tree.t >= T) return stopWith("budget");
    if (tree.t >= T) return "wait"; // the root's last evaluations are still running
    const rng = createFastRng(seed, work, DECISION_DRAWS);
    const decision = policy.decide({ tree, T, W, rng, sampler: createBetaSampler(rng) });
    switch (decision.kind) {
      case "expand":
        record({ type: "improvement_started", work, parent: decision.parent });
        return tree.inFlightWork().find((item) => item.work === work) as InFlight;
      case "evaluate":
        return dispatchEvaluation(work, decision.node, decision.position);
      case "wait":
        return tree.pendingEvaluations + tree.pendingImprovements > 0
          ? "wait"
          : stopWith("exhausted");
    }
  };

  const stopWith = (reason: StopReason): "stop" => {
    stop(reason);
    return "stop";
  };

  const dispatchEvaluation = (work: number, node: NodeId, position: number): InFlight => {
    const task = tree.taskAt(position);
    const attempt = tree.nextAttempt(node, position);
    record({ type: "evaluation_dispatched", work, node, task, attempt });
    return { kind: "evaluate", work, node, task, attempt };
  };

  /** Does one piece of work and records how it ended (unless the search was interrupted). */
  const perform = async (item: InFlight): Promise<void> => {
    const context = { work: item.work, signal: controller.signal };
    const started = performance.now();
    if (item.kind === "expand") {
      const parent = tree.node(item.parent);
      let result: ImprovementResult;
      try {
        result = await improver.improve(parent, { ...context, ordinal: item.ordinal });
      } catch (error) {
        if (controller.signal.aborted) return;
        result = { child: null, reason: `error: ${message(error)}` };
      }
      if (controller.signal.aborted) return;
      const durationMs = result.durationMs ?? performance.now() - started;
      const usage = fullUsage(result.usage);
      const base = { work: item.work, parent: item.parent, usage, durationMs };
      if (result.child === null) {
        record({ type: "improvement_failed", ...base, reason: result.reason });
      } else {
        record({ type: "improvement_finished", ...base, node: tree.size, data: result.child.data });
      }
      return;
    }
    let result: EvaluationResult;
    try {
      result = await evaluator.evaluate(tree.node(item.node), item.task, {
        ...context,
        attempt: item.attempt,
      });
    } catch (error) {
      if (controller.signal.aborted) return;
      result = { outcome: "error", reason: message(error) };
    }
    if (controller.signal.aborted) return;
    record({
      type: "evaluation_finished",
      work: item.work,
      node: item.node,
      task: item.task,
      outcome: result.outcome,
      reason: result.outcome === "error" ? (result.reason ?? "error") : null,
      usage: fullUsage(result.usage),
      durationMs: result.durationMs ?? performance.now() - started,
    });
  };

  const worker = async (): Promise<void> => {
    for (;;) {
      if (controller.signal.aborted) stop("signal");
      // Work a killed run left in flight goes first, as it was dispatched.
      const item = stopReason ? "stop" : (resumedWork.shift() ?? dispatchNext());
      if (item === "stop") return;
      if (item === "wait") {
        await changed();
        continue;
      }
      await perform(item);
      notify();
    }
  };

  try {
    await Promise.all(Array.from({ length: W }, worker));
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  return {
    tree,
    chosen: policy.finalChoice(tree),
    stopReason: stopReason ?? "exhausted",
    resumed,
    redispatched,
    log,
  };
}
