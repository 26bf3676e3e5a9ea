/**
 * Evaluation in stages, as the baselines (DGM, greedy, random) do it: a new child is owed a
 * number of tasks (its quota), evaluated in the task list's order before any further expansion
 * (DGM evaluates every child on the same fixed subsets); when the quota is met, the method either
 * raises it (the next stage) or declares the node complete. Only complete nodes can be parents.
 *
 * The state is rebuilt from the log's events (observe), so a resumed search knows each node's
 * stage exactly as the first attempt did.
 */
import type { SearchEvent } from "../../../store/search-log.js";
import { type NodeId, ROOT, type SearchNode, type SearchTree } from "../tree.js";

/** A node's next quota once it met its current one, or null when it is complete. */
export type NextStage = (node: SearchNode, quota: number, tree: SearchTree) => number | null;

export class StagedEvaluation {
  private readonly quota = new Map<NodeId, number>();
  private readonly complete = new Set<NodeId>();
  /** Nodes owed evaluations, in the order they were made. */
  private readonly owed: NodeId[] = [];

  constructor(
    private readonly firstQuota: (tree: SearchTree) => number,
    private readonly nextStage: NextStage,
  ) {}

  /** Complete nodes, in id order: the candidate parents. */
  completeNodes(tree: SearchTree): SearchNode[] {
    return [...this.complete].sort((a, b) => a - b).map((id) => tree.node(id));
  }

  isComplete(id: NodeId): boolean {
    return this.complete.has(id);
  }

  /** The first node owed an evaluation that can be dispatched now, and its next task. */
  nextEvaluation(tree: SearchTree): { node: NodeId; position: number } | null {
    for (const id of this.owed) {
      const node = tree.node(id);
      const given = node.s + node.f + node.abandoned + node.pending;
      if (given >= (this.quota.get(id) ?? 0) || node.openTasks === 0) continue;
      return { node: id, position: tree.firstOpenTask(id) };
    }
    return null;
  }

  observe(event: SearchEvent, tree: SearchTree): void {
    if (event.type === "improvement_finished") {
      this.quota.set(event.node, Math.min(this.firstQuota(tree), tree.tasks.length));
      this.owed.push(event.node);
      return;
    }
    if (event.type !== "evaluation_finished") return;
    if (event.node === ROOT) {
      // The engine evaluates the root on every task; it is complete once all have finished.
      const root = tree.node(ROOT);
      if (root.pending === 0 && root.openTasks === 0) this.complete.add(ROOT);
      return;
    }
    const node = tree.node(event.node);
    const quota = this.quota.get(node.id) ?? 0;
    const done = node.s + node.f + node.abandoned;
    const stuck = node.openTasks === 0; // every task dispatched: no further stage possible
    if (node.pending > 0 || (done < quota && !stuck)) return;
    const next = stuck ? null : this.nextStage(node, quota, tree);
    const raised = next === null ? quota : Math.min(next, tree.tasks.length);
    if (raised > quota) {
      this.quota.set(node.id, raised);
      return;
    }
    this.complete.add(node.id);
    const at = this.owed.indexOf(node.id);
    if (at >= 0) this.owed.splice(at, 1);
  }
}
