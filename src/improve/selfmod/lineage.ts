/**
 * Which agent each node of a self-modification search is. The root is a folder's files (kept in
 * the search's configuration); every other node is its parent plus one unified diff (its
 * `improvement_finished` event's `data.patch`), so a node is materialised by applying the chain
 * of diffs from the root. The lineage reads the search's log, stored and live, so that it knows
 * every node whatever the engine is doing (a resumed search replays its log without callbacks).
 */
import type { AgentFiles } from "../../agent/folder/files.js";
import type { JsonValue, SearchEvent, SearchLog } from "../../store/search-log.js";
import { applyPatch } from "./patch.js";

interface Link {
  parent: number;
  patch: string;
}

/** A child's `data` as the improver writes it: at least its patch from the parent. */
export function patchOf(data: JsonValue): string {
  const patch =
    data !== null && typeof data === "object" && !Array.isArray(data) ? data.patch : undefined;
  if (typeof patch !== "string") throw new Error("the node's record holds no patch");
  return patch;
}

export class AgentLineage {
  private readonly links = new Map<number, Link>();
  private readonly materialised = new Map<number, AgentFiles>();

  constructor(readonly root: AgentFiles) {
    this.materialised.set(0, root);
  }

  /** Wraps a search log so that every improvement it holds or receives is known here. */
  track(log: SearchLog): SearchLog {
    for (const event of log.read()) this.observe(event);
    return {
      read: () => log.read(),
      append: (event) => {
        log.append(event);
        this.observe(event);
      },
    };
  }

  observe(event: SearchEvent): void {
    if (event.type !== "improvement_finished") return;
    this.links.set(event.node, { parent: event.parent, patch: patchOf(event.data) });
  }

  /** The node's parent, or null for the root (and for a node the log does not hold). */
  parentOf(node: number): number | null {
    return this.links.get(node)?.parent ?? null;
  }

  /** The patches from the root down to the node, in order. */
  chain(node: number): string[] {
    const patches: string[] = [];
    for (let at = node; at !== 0; ) {
      const link = this.links.get(at);
      if (!link) throw new Error(`node ${node} is not in this search (no node ${at})`);
      patches.push(link.patch);
      at = link.parent;
    }
    return patches.reverse();
  }

  /** The node's files: its parent's with its patch applied (memoised). */
  files(node: number): AgentFiles {
    const known = this.materialised.get(node);
    if (known) return known;
    const link = this.links.get(node);
    if (!link) throw new Error(`node ${node} is not in this search`);
    const files = applyPatch(this.files(link.parent), link.patch);
    this.materialised.set(node, files);
    return files;
  }
}
