/**
 * The search tree: agents (nodes) with their own pass and fail counts, their clade's counts, and
 * which tasks each has been given. It changes only by applying the events of the search's log
 * (`apply`), so the tree after any prefix of the log is a fold of that prefix: a resumed search
 * rebuilds exactly the tree it stopped with.
 *
 * Own counts (`s`, `f`) are a node's own finished evaluations. Clade counts (`sC`, `fC`) add
 * those of every descendant and are kept incrementally: a finished evaluation adds one to its
 * node and to each ancestor's clade counter, O(depth). Clade counts live in fields of their own;
 * nothing that computes or reads them writes to `s` or `f` (the public HGM code appends
 * descendants' results to the node's own list; tests/improve/tree.test.ts proves this does not).
 */
import type { Rng } from "../../env/rng.js";
import type {
  EvaluationOutcome,
  JsonValue,
  SearchEvent,
  WorkUsage,
} from "../../store/search-log.js";

export type NodeId = number;

/** The root's id: the starting agent. */
export const ROOT: NodeId = 0;

/** A node as the policies and reports see it. */
export interface SearchNode {
  readonly id: NodeId;
  /** null for the root. */
  readonly parent: NodeId | null;
  readonly depth: number;
  readonly children: readonly NodeId[];
  /** The improver's record of this agent (a simulation's hidden state; later, its patch). */
  readonly data: JsonValue;
  /** The work number of the improvement that made it; null for the root. */
  readonly improvement: number | null;
  /** t (non-root evaluations dispatched) when it was made. */
  readonly createdAtT: number;
  /** Own finished evaluations: passes and fails. Errors are in neither. */
  readonly s: number;
  readonly f: number;
  /** Passes and fails of this node and all its descendants. */
  readonly sC: number;
  readonly fC: number;
  /** Evaluations of this node dispatched and not finished. */
  readonly pending: number;
  /** Improvements of this node (as parent) started and not finished. */
  readonly pendingImprovements: number;
  /** Improvements of this node (as parent) started, finished or not. */
  readonly expansions: number;
  /** Evaluations of this node that ended in an error (every attempt). */
  readonly errors: number;
  /** Tasks given up after `maxTaskAttempts` errors. */
  readonly abandoned: number;
  /** Tasks not given to this node yet (or given back after an error). */
  readonly openTasks: number;
}

const OPEN = 0;
const IN_FLIGHT = 1;
const DONE = 2;
const ABANDONED = 3;

/** Which of the search's tasks a node has been given; positions index the task list. */
class TaskSlots {
  readonly state: Uint8Array;
  readonly attempts: Uint8Array;
  /** Open positions, unordered (swap-remove), and each position's index there (-1: not open). */
  private readonly open: Int32Array;
  private readonly where: Int32Array;
  count: number;

  constructor(size: number) {
    this.state = new Uint8Array(size);
    this.attempts = new Uint8Array(size);
    this.open = new Int32Array(size);
    this.where = new Int32Array(size);
    for (let i = 0; i < size; i++) {
      this.open[i] = i;
      this.where[i] = i;
    }
    this.count = size;
  }

  take(position: number): void {
    const index = this.where[position] as number;
    const last = this.open[this.count - 1] as number;
    this.open[index] = last;
    this.where[last] = index;
    this.where[position] = -1;
    this.count -= 1;
    this.state[position] = IN_FLIGHT;
  }

  giveBack(position: number): void {
    this.open[this.count] = position;
    this.where[position] = this.count;
    this.count += 1;
    this.state[position] = OPEN;
  }

  random(rng: Rng): number {
    return this.open[rng.int(this.count)] as number;
  }

  first(): number {
    return this.state.indexOf(OPEN);
  }
}

/**
 * The counts policies scan on every decision, by node id, in typed arrays: a scan over 10,000
 * nodes reads a few contiguous arrays instead of chasing 10,000 objects. Read-only outside the
 * tree; arrays may be longer than the tree (use ids below `tree.size`).
 */
export class NodeCounts {
  s = new Int32Array(64);
  f = new Int32Array(64);
  sC = new Int32Array(64);
  fC = new Int32Array(64);
  pending = new Int32Array(64);
  /** Tasks not given to the node yet (or given back after an error). */
  open = new Int32Array(64);

  /** Makes room for ids below `size`, doubling. */
  reserve(size: number): void {
    if (size <= this.s.length) return;
    let capacity = this.s.length;
    while (capacity < size) capacity *= 2;
    const grow = (array: Int32Array) => {
      const bigger = new Int32Array(capacity);
      bigger.set(array);
      return bigger;
    };
    this.s = grow(this.s);
    this.f = grow(this.f);
    this.sC = grow(this.sC);
    this.fC = grow(this.fC);
    this.pending = grow(this.pending);
    this.open = grow(this.open);
  }
}

class NodeState implements SearchNode {
  readonly children: NodeId[] = [];
  pendingImprovements = 0;
  expansions = 0;
  errors = 0;
  abandoned = 0;
  /** Created on the first dispatch: most nodes of a large tree have none yet. */
  slots: TaskSlots | undefined;

  constructor(
    readonly id: NodeId,
    readonly parent: NodeId | null,
    readonly depth: number,
    readonly data: JsonValue,
    readonly improvement: number | null,
    readonly createdAtT: number,
    private readonly counts: NodeCounts,
    private readonly taskCount: number,
  ) {
    counts.reserve(id + 1);
    counts.open[id] = taskCount;
  }

  get s(): number {
    return this.counts.s[this.id] as number;
  }
  get f(): number {
    return this.counts.f[this.id] as number;
  }
  get sC(): number {
    return this.counts.sC[this.id] as number;
  }
  get fC(): number {
    return this.counts.fC[this.id] as number;
  }
  get pending(): number {
    return this.counts.pending[this.id] as number;
  }
  get openTasks(): number {
    return this.counts.open[this.id] as number;
  }

  taskSlots(): TaskSlots {
    if (!this.slots) this.slots = new TaskSlots(this.taskCount);
    return this.slots;
  }
}

/** An evaluation or improvement dispatched and not finished. */
export type InFlight =
  | { kind: "evaluate"; work: number; node: NodeId; task: number; attempt: number }
  /** `ordinal`: the parent's improvements started before this one (failed ones included). */
  | { kind: "expand"; work: number; parent: NodeId; ordinal: number };

export class SearchTree {
  /** Every node, by id; the root first. */
  private readonly all: NodeState[] = [];
  /** Own and clade counts, in flight and open tasks, by node id (policies scan these). */
  readonly counts = new NodeCounts();
  private readonly positions = new Map<number, number>();
  private readonly inFlight = new Map<number, InFlight>();
  /** t: evaluations of non-root nodes dispatched (errored ones included), the budget's unit. */
  t = 0;
  /** The next work number to hand out: every dispatch (evaluation or improvement) takes one. */
  nextWork = 0;
  /** Improvements started, and those that made a child or none. */
  improvementsStarted = 0;
  improvementsFinished = 0;
  improvementsFailed = 0;
  /** Improvements in flight, over all parents. */
  pendingImprovements = 0;
  /** Evaluations in flight, and finished ones by outcome (errors counted per attempt). */
  pendingEvaluations = 0;
  passes = 0;
  fails = 0;
  errors = 0;
  /** The finished work's usage, summed; `unpriced` once any of it had a model without a price. */
  usage: WorkUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  /** Summed durations of finished work (improvements and evaluations), ms. */
  workMs = 0;

  /**
   * `tasks`: the search's task indices; `maxTaskAttempts`: how often a task may error on one
   * node before it is given up for that node; `rootData`: the improver's record of the root.
   */
  constructor(
    readonly tasks: readonly number[],
    readonly maxTaskAttempts = 3,
    rootData: JsonValue = null,
  ) {
    if (tasks.length === 0) throw new RangeError("a search needs at least one task");
    tasks.forEach((task, position) => {
      if (this.positions.has(task)) throw new RangeError(`task ${task} is listed twice`);
      this.positions.set(task, position);
    });
    this.all.push(new NodeState(ROOT, null, 0, rootData, null, 0, this.counts, tasks.length));
  }

  /** The tree after the given events. */
  static fold(
    tasks: readonly number[],
    events: readonly SearchEvent[],
    maxTaskAttempts = 3,
    rootData: JsonValue = null,
  ): SearchTree {
    const tree = new SearchTree(tasks, maxTaskAttempts, rootData);
    for (const event of events) tree.apply(event);
    return tree;
  }

  get size(): number {
    return this.all.length;
  }

  get nodes(): readonly SearchNode[] {
    return this.all;
  }

  node(id: NodeId): SearchNode {
    const node = this.all[id];
    if (!node) throw new RangeError(`no node ${id}`);
    return node;
  }

  /** Work dispatched and not finished, in dispatch order. */
  inFlightWork(): InFlight[] {
    return [...this.inFlight.values()].sort((a, b) => a.work - b.work);
  }

  /** The task index at a position of the task list. */
  taskAt(position: number): number {
    return this.tasks[position] as number;
  }

  /** A uniformly chosen open task of a node (its position), or -1 when it has none. */
  randomOpenTask(id: NodeId, rng: Rng): number {
    const node = this.state(id);
    if (node.openTasks === 0) return -1;
    return node.slots ? node.slots.random(rng) : rng.int(this.tasks.length);
  }

  /** A node's first open task in the task list's order (its position), or -1 when none. */
  firstOpenTask(id: NodeId): number {
    const node = this.state(id);
    if (node.openTasks === 0) return -1;
    return node.slots ? node.slots.first() : 0;
  }

  /** Whether the task at this position has been evaluated on the node (pass or fail). */
  evaluated(id: NodeId, position: number): boolean {
    return this.state(id).slots?.state[position] === DONE;
  }

  /**
   * Applies one event of the log. Events must come in the order they were written; one that
   * does not fit (out of order, unknown node or task) throws and changes nothing.
   */
  apply(event: SearchEvent): void {
    switch (event.type) {
      case "improvement_started": {
        const parent = this.state(event.parent);
        this.claimWork(event.work);
        const ordinal = parent.expansions;
        parent.expansions += 1;
        parent.pendingImprovements += 1;
        this.pendingImprovements += 1;
        this.improvementsStarted += 1;
        this.inFlight.set(event.work, {
          kind: "expand",
          work: event.work,
          parent: parent.id,
          ordinal,
        });
        return;
      }
      case "improvement_finished":
      case "improvement_failed": {
        const parent = this.state(event.parent);
        if (event.type === "improvement_finished" && event.node !== this.all.length) {
          throw new RangeError(
            `improvement ${event.work} made node ${event.node}, expected ${this.all.length}`,
          );
        }
        this.finishWork(event.work, "expand");
        parent.pendingImprovements -= 1;
        this.pendingImprovements -= 1;
        this.spend(event.usage, event.durationMs);
        if (event.type === "improvement_failed") {
          this.improvementsFailed += 1;
          return;
        }
        this.improvementsFinished += 1;
        const child = new NodeState(
          event.node,
          parent.id,
          parent.depth + 1,
          event.data,
          event.work,
          this.t,
          this.counts,
          this.tasks.length,
        );
        this.all.push(child);
        parent.children.push(child.id);
        return;
      }
      case "evaluation_dispatched": {
        const node = this.state(event.node);
        const position = this.position(event.task);
        if (node.slots && node.slots.state[position] !== OPEN) {
          throw new RangeError(`task ${event.task} is not open on node ${event.node}`);
        }
        this.claimWork(event.work);
        const slots = node.taskSlots();
        slots.take(position);
        this.counts.open[node.id] = slots.count;
        bump(this.counts.pending, node.id, 1);
        this.pendingEvaluations += 1;
        if (node.id !== ROOT) this.t += 1;
        this.inFlight.set(event.work, {
          kind: "evaluate",
          work: event.work,
          node: node.id,
          task: event.task,
          attempt: event.attempt,
        });
        return;
      }
      case "evaluation_finished": {
        const node = this.state(event.node);
        const position = this.position(event.task);
        const inFlight = this.inFlight.get(event.work);
        if (
          inFlight?.kind === "evaluate" &&
          (inFlight.node !== node.id || inFlight.task !== event.task)
        ) {
          throw new RangeError(`evaluation ${event.work} finished on another node or task`);
        }
        this.finishWork(event.work, "evaluate");
        const slots = node.taskSlots();
        bump(this.counts.pending, node.id, -1);
        this.pendingEvaluations -= 1;
        this.spend(event.usage, event.durationMs);
        this.record(node, slots, position, event.outcome);
        return;
      }
    }
  }

  private record(
    node: NodeState,
    slots: TaskSlots,
    position: number,
    outcome: EvaluationOutcome,
  ): void {
    if (outcome === "error") {
      // Never a fail: the task goes back to the node's open tasks, a bounded number of times.
      node.errors += 1;
      this.errors += 1;
      slots.attempts[position] = (slots.attempts[position] as number) + 1;
      if ((slots.attempts[position] as number) < this.maxTaskAttempts) {
        slots.giveBack(position);
        this.counts.open[node.id] = slots.count;
      } else {
        slots.state[position] = ABANDONED;
        node.abandoned += 1;
      }
      return;
    }
    slots.state[position] = DONE;
    const { counts } = this;
    const own = outcome === "pass" ? counts.s : counts.f;
    const clade = outcome === "pass" ? counts.sC : counts.fC;
    if (outcome === "pass") this.passes += 1;
    else this.fails += 1;
    bump(own, node.id, 1);
    // The clade counters of the node and every ancestor: O(depth). Own counts stay as they are.
    for (let at: NodeState | undefined = node; at; at = this.parentOf(at)) bump(clade, at.id, 1);
  }

  /** The attempt number the next dispatch of this task to this node would be (1 = first). */
  nextAttempt(id: NodeId, position: number): number {
    return (this.state(id).slots?.attempts[position] ?? 0) + 1;
  }

  private parentOf(node: NodeState): NodeState | undefined {
    return node.parent === null ? undefined : this.all[node.parent];
  }

  private spend(usage: WorkUsage, durationMs: number): void {
    this.usage.inputTokens += usage.inputTokens;
    this.usage.outputTokens += usage.outputTokens;
    this.usage.costUsd += usage.costUsd;
    if (usage.unpriced) this.usage.unpriced = true;
    if (Number.isFinite(durationMs)) this.workMs += durationMs;
  }

  private claimWork(work: number): void {
    if (work !== this.nextWork)
      throw new RangeError(`work ${work} out of order (expected ${this.nextWork})`);
    this.nextWork += 1;
  }

  private finishWork(work: number, kind: InFlight["kind"]): void {
    if (this.inFlight.get(work)?.kind !== kind) {
      throw new RangeError(`work ${work} finished but was not a dispatched ${kind}`);
    }
    this.inFlight.delete(work);
  }

  private state(id: NodeId): NodeState {
    const node = this.all[id];
    if (!node) throw new RangeError(`no node ${id}`);
    return node;
  }

  private position(task: number): number {
    const position = this.positions.get(task);
    if (position === undefined) throw new RangeError(`task ${task} is not one of the search's`);
    return position;
  }
}

function bump(array: Int32Array, id: number, delta: number): void {
  array[id] = (array[id] as number) + delta;
}

/** A node's own mean, or NaN before its first finished evaluation. */
export function ownMean(node: SearchNode): number {
  const n = node.s + node.f;
  return n === 0 ? Number.NaN : node.s / n;
}

/** The CMP estimate of the HGM paper: sC / (sC + fC), or NaN before any evaluation in the clade. */
export function cladeMean(node: SearchNode): number {
  const n = node.sC + node.fC;
  return n === 0 ? Number.NaN : node.sC / n;
}
