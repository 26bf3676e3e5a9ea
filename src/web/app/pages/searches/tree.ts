/**
 * A search tree drawn as SVG: d3-hierarchy lays it out (root on the left, each generation one
 * column to the right), the rest is plain preact. A node's fill is its own mean score (red 0 →
 * green 1, grey before its first evaluation), its size grows with its evaluations, a dashed
 * outline means work on it is in flight, and the final choice wears a gold ring. Improvements
 * that gave no child hang off their parent as one grey cross with their count. Clicking a node
 * (or its cross) opens it in the side panel.
 */
import { hierarchy, tree } from "d3-hierarchy";
import { useEffect, useMemo, useRef } from "preact/hooks";
import type { TreeNode } from "../../../api/searches.js";
import { html } from "../../html.js";
import { cost, rate } from "../../ui.js";

/** A drawn item: a node of the search, or the failed improvements of one parent. */
type Item =
  | { kind: "node"; node: TreeNode; children: Item[] }
  | { kind: "failed"; parent: TreeNode; children: Item[] };

const ROW = 22;
const COLUMN = 110;
const MARGIN = { top: 24, right: 90, bottom: 24, left: 24 };
/** Above this many nodes labels would overlap into noise: the tooltips still say everything. */
const LABELS_UP_TO = 400;

/** The fill for a mean score: hue from red (0) through yellow to green (1). */
function scoreColour(mean: number | null): string {
  if (mean === null) return "#c9cdd6";
  return `hsl(${Math.round(mean * 120)}, 62%, 46%)`;
}

function radius(node: TreeNode): number {
  return Math.min(11, 4 + 1.2 * Math.sqrt(node.s + node.f));
}

function tooltip(node: TreeNode): string {
  const n = node.s + node.f;
  return [
    `node ${node.id}${node.label ? ` (${node.label})` : ""}${node.chosen ? " — final choice" : ""}`,
    `own ${node.s}/${n} passed, mean ${rate(node.mean)}`,
    `clade ${node.cladeS}/${node.cladeS + node.cladeF}, CMP estimate ${rate(node.cmp)}`,
    `${node.status}${node.pending ? `, ${node.pending} evaluation(s) in flight` : ""}`,
    `cost ${cost(node.costUsd, node.unpriced)}`,
    ...(node.quality !== null ? [`true quality ${rate(node.quality)} (simulated)`] : []),
    ...(node.errors ? [`${node.errors} errored evaluation(s)`] : []),
    ...(node.failedImprovements ? [`${node.failedImprovements} failed improvement(s)`] : []),
  ].join("\n");
}

function items(nodes: readonly TreeNode[]): Item {
  const build = (node: TreeNode): Item => {
    const children: Item[] = node.children.flatMap((id) => {
      const child = nodes[id];
      return child ? [build(child)] : [];
    });
    if (node.failedImprovements > 0) children.push({ kind: "failed", parent: node, children: [] });
    return { kind: "node", node, children };
  };
  return build(nodes[0] as TreeNode);
}

export function SearchTree({
  nodes,
  selected,
  onSelect,
}: {
  nodes: readonly TreeNode[];
  selected: number | undefined;
  onSelect: (id: number) => void;
}) {
  const layout = useMemo(() => {
    const root = tree<Item>().nodeSize([ROW, COLUMN])(hierarchy(items(nodes), (d) => d.children));
    let low = 0;
    let high = 0;
    let deepest = 0;
    for (const d of root.descendants()) {
      low = Math.min(low, d.x);
      high = Math.max(high, d.x);
      deepest = Math.max(deepest, d.y);
    }
    return {
      root,
      low,
      width: deepest + MARGIN.left + MARGIN.right,
      height: high - low + MARGIN.top + MARGIN.bottom,
    };
  }, [nodes]);
  const { root, low } = layout;
  const box = useRef<HTMLDivElement>(null);
  // Bring the open node (else the final choice) into view when it changes, not on every refresh,
  // so a live tree does not pull the view away from where the reader scrolled.
  const focus = selected ?? nodes.find((n) => n.chosen)?.id;
  useEffect(() => {
    const container = box.current;
    const mark = container?.querySelector(`[data-node="${focus}"]`);
    if (!container || !mark) return;
    const seen = container.getBoundingClientRect();
    const at = mark.getBoundingClientRect();
    const inside =
      at.top >= seen.top &&
      at.bottom <= seen.bottom &&
      at.left >= seen.left &&
      at.right <= seen.right;
    if (!inside) {
      container.scrollTop += at.top - seen.top - container.clientHeight / 2;
      container.scrollLeft += at.left - seen.left - container.clientWidth / 3;
    }
  }, [focus]);
  // d3 lays out breadth on x and depth on y; drawn sideways, depth runs to the right.
  const at = (d: { x: number; y: number }) => ({ x: d.y + MARGIN.left, y: d.x - low + MARGIN.top });
  const labels = nodes.length <= LABELS_UP_TO;
  const links = root.links().map(({ source, target }) => {
    const a = at(source);
    const b = at(target);
    const middle = (a.x + b.x) / 2;
    const failed = target.data.kind === "failed";
    return html`<path class=${failed ? "link failed" : "link"} d=${`M${a.x},${a.y}C${middle},${a.y} ${middle},${b.y} ${b.x},${b.y}`} />`;
  });
  const marks = root.descendants().map((d) => {
    const { x, y } = at(d);
    const item = d.data;
    if (item.kind === "failed") {
      const parent = item.parent;
      return html`<g class="failed-mark" transform=${`translate(${x},${y})`} data-testid="failed-mark"
        data-parent=${parent.id} onClick=${() => onSelect(parent.id)}>
        <title>${`${parent.failedImprovements} improvement(s) of node ${parent.id} gave no child (click for the reasons)`}</title>
        <path d="M-4,-4L4,4M-4,4L4,-4" />
        ${labels ? html`<text x="8" dy="0.32em">×${parent.failedImprovements}</text>` : null}
      </g>`;
    }
    const node = item.node;
    const r = radius(node);
    const classes = [
      "node",
      `status-${node.status}`,
      node.chosen ? "chosen" : "",
      node.id === selected ? "selected" : "",
    ].join(" ");
    return html`<g class=${classes} transform=${`translate(${x},${y})`} data-testid="tree-node"
      data-node=${node.id} data-status=${node.status} data-chosen=${node.chosen ? "true" : undefined}
      onClick=${() => onSelect(node.id)}>
      <title>${tooltip(node)}</title>
      ${node.chosen ? html`<circle class="ring" r=${r + 4} data-testid="final-choice" />` : null}
      <circle class="dot" r=${r} fill=${scoreColour(node.mean)} />
      ${
        labels
          ? html`<text x=${r + 4} dy="0.32em">${node.id}<tspan class="counts"> ${node.s}/${node.s + node.f}</tspan></text>`
          : null
      }
    </g>`;
  });
  return html`<div class="search-tree" data-testid="search-tree" ref=${box}>
    <svg width=${layout.width} height=${layout.height} role="img" aria-label="search tree">
      <g>${links}</g><g>${marks}</g>
    </svg>
  </div>`;
}

export function TreeLegend() {
  const stops = [0, 0.25, 0.5, 0.75, 1];
  return html`<div class="tree-legend" data-testid="tree-legend">
    <span class="scale">own mean 0 ${stops.map((m) => html`<span class="swatch" style=${`background:${scoreColour(m)}`} title=${rate(m, 2)}></span>`)} 1</span>
    <span><span class="swatch" style=${`background:${scoreColour(null)}`}></span> not evaluated</span>
    <span><svg width="18" height="18"><circle cx="9" cy="9" r="5" fill="#c9cdd6" /><circle class="legend-ring" cx="9" cy="9" r="8" /></svg> final choice</span>
    <span><svg width="18" height="18"><circle class="legend-pending" cx="9" cy="9" r="6" /></svg> work in flight</span>
    <span><svg width="14" height="14"><path class="legend-failed" d="M3,3L11,11M3,11L11,3" /></svg> improvements that gave no child</span>
    <span class="muted">size: own evaluations · label: node own passes/evaluations</span>
  </div>`;
}
