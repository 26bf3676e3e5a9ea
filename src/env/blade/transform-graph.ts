/**
 * BLADE's transform states (docs/blade-spec.md §2–3): run the transforms, expand every spec into
 * one unit per output column (expand_graph.py: get_expand_g), build the column graphs with and
 * without input edges (get_col_g), attach to every column node the value and categorical hash
 * of its column in the spec's frame, and group the columns' ancestor subgraphs by labelled
 * isomorphism (dataflow.py: __graph_hash_from_cols_g). The ground truth runs every path of its
 * spec DAG (transform-paths.ts); an agent's transform units form one chain after ROOT
 * (dataflow.py: build_state_data_from_transform_return).
 *
 * Execution is injected (`run` runs scripts in a runtime and returns what each left; `hash`
 * hashes a frame's columns), so this module is pure apart from those two.
 */
import { createHash } from "node:crypto";
import type { ColumnHashes, Frame } from "./frame.js";
import type { ScriptOutcome } from "./runtime/types.js";
import {
  type BladeDataset,
  ROOT_SPEC_ID,
  rootTransformSpec,
  type TransformSpec,
  type TransformUnit,
  type TransformVerb,
} from "./specs.js";
import {
  BladeTransformError,
  DiGraph,
  pathScripts,
  rewritePostGroupby,
  type ScriptLanguage,
  type TransformPath,
  transformPaths,
} from "./transform-paths.js";

/** Verbs after which a column's history starts afresh (verbs.py: VERBS_AFFECTING_WHOLE_DF). */
const VERBS_AFFECTING_WHOLE_DF: readonly string[] = ["groupby", "filter", "other_impact_rows"];
/** Verbs whose spec stays one node holding every column (expand_graph.py). */
export const WHOLE_FRAME_VERBS: readonly string[] = ["groupby", "filter"];
/** networkx's weisfeiler_lehman_graph_hash default. */
const WL_ITERATIONS = 3;
/**
 * Search steps one isomorphism test may take before it counts as "not isomorphic": a rough
 * stand-in for BLADE's 10-second timeout around networkx's VF2 (which explores on the order of
 * 10^5 states a second in CPython).
 */
export const ISOMORPHISM_STEP_BUDGET = 1_000_000;
/** The agent's unit mapping word for "every column". */
const ALL_COLUMNS = "ALL";

export type RunScripts = (scripts: readonly string[]) => Promise<ScriptOutcome[]>;
export type HashFrame = (frame: Frame) => ColumnHashes[];

/**
 * The name of one output of an expanded spec (BLADE's `<verb>_<column>`), as the record of a
 * match lists it; filter and groupby specs keep their own names.
 */
export function expandedUnitName(verb: string, output: string): string {
  return `${verb}_${output}`;
}

/**
 * The names a ground-truth spec's expanded units have in the record of a match: a whole-frame
 * spec (filter, groupby) keeps its own name, any other has one unit per output; the root (no
 * verb: the data as loaded) has no unit of its own.
 */
export function expandedUnitNames(
  spec: Pick<TransformSpec, "specName" | "verb" | "mapping">,
): string[] {
  const { verb } = spec;
  if (verb === undefined) return [];
  if (WHOLE_FRAME_VERBS.includes(verb)) return [spec.specName];
  return spec.mapping.map(([, output]) => expandedUnitName(verb, output));
}

/** One unit of BLADE's expanded graph: a spec restricted to one output column (or a whole-frame spec). */
export interface ExpandedSpec {
  /** `<spec id>__<verb>_<output>`, or the spec's id for filter/groupby and ROOT. */
  id: string;
  /** `<verb>_<output>` (built before an empty output is replaced: e.g. `impute_`), or the spec's name. */
  name: string;
  specId: string;
  /** The name of the spec it came from. */
  specName: string;
  verb: TransformVerb | undefined;
  mapping: [string[], string][];
  code: string;
}

export interface ColumnNodeAttrs {
  col: string;
  expandedId: string;
  expandedName: string;
  /** The node's label: the node id for original columns, else the verb. */
  val: string;
}

/** A column graph; edge attributes are the edge types "data", "input" or "input + data". */
export type ColumnGraph = DiGraph<ColumnNodeAttrs, string>;

/** The hashes of one column node (BLADE's SingleColState). */
export interface ColumnState {
  nodeId: string;
  col: string;
  /** The spec whose run produced the frame. */
  specId: string;
  expandedId: string;
  value: string;
  categorical: string;
  /** Index into TransformStates.paths. */
  pathIndex: number;
  /** The bucket key of the column's ancestor subgraph (Weisfeiler-Lehman hash). */
  graphKey: string;
}

export interface PathColumns {
  leafId: string;
  /** Execution order of the path's specs. */
  order: string[];
  /** The column graph without input edges (value matching marks ancestors here). */
  graph: ColumnGraph;
  /** With input edges (graph matching). */
  graphWithInput: ColumnGraph;
  states: Map<string, ColumnState>;
}

/** Column states whose ancestor subgraphs are isomorphic, with one such subgraph. */
export interface GraphGroup {
  key: string;
  graph: ColumnGraph;
  states: ColumnState[];
}

/** BLADE's TransformDatasetState. */
export interface TransformStates {
  /** Every expanded spec over all paths, ROOT included, by id in order of first appearance. */
  expanded: Map<string, ExpandedSpec>;
  paths: PathColumns[];
  valueHashes: Map<string, ColumnState[]>;
  categoricalHashes: Map<string, ColumnState[]>;
  /** Per key, the last group only (BLADE's dict comprehension keeps the last; §3 Quirk). */
  graphGroups: Map<string, GraphGroup>;
}

export interface TransformGraphOptions {
  /** Which code the specs run: `code` (pandas) or `code_sql` (the embedded engine). */
  language?: ScriptLanguage;
  isomorphismStepBudget?: number;
}

/** What one spec's run left behind (BLADE's TransformState). */
interface SpecState {
  specId: string;
  columns: string[];
  /** Hashes by column; null when the result was a grouped object (no frame, no states). */
  hashes: Map<string, ColumnHashes> | null;
}

interface SpecView {
  specId: string;
  name: string;
  verb: TransformVerb | undefined;
  mapping: [string[], string][];
  code: string;
}

function specState(specId: string, outcome: ScriptOutcome, hash: HashFrame): SpecState | undefined {
  if (!outcome.ok) return undefined;
  if (outcome.kind === "frame") {
    const hashes = new Map(hash(outcome.frame).map((h) => [h.name, h]));
    return { specId, columns: outcome.frame.columns.map((c) => c.name), hashes };
  }
  if (outcome.kind === "groupby") return { specId, columns: [...outcome.columns], hashes: null };
  return undefined;
}

/** BLADE's get_transform_state_from_cols: the state kept for some of its columns. */
function restrict(state: SpecState, columns: string[], who: string): SpecState {
  for (const col of columns) {
    if (!state.columns.includes(col)) {
      throw new BladeTransformError(`${who}: column "${col}" is not in the frame its code leaves`);
    }
  }
  return { ...state, columns };
}

// ---- Expansion (expand_graph.py: get_expand_g) ----

interface ExpandedNodeAttrs {
  dataOutputCols?: Set<string>;
}

interface Expansion {
  graph: DiGraph<ExpandedNodeAttrs>;
  specs: Map<string, ExpandedSpec>;
  states: Map<string, SpecState>;
}

function outputColsOf(graph: DiGraph<ExpandedNodeAttrs>, id: string): Set<string> {
  const cols = graph.node(id).dataOutputCols;
  if (!cols)
    throw new BladeTransformError(
      `the expanded graph has no column set for ${id} (BLADE fails here)`,
    );
  return cols;
}

function expand(
  path: TransformPath,
  specOf: (id: string) => SpecView,
  specStates: Map<string, SpecState>,
  dataColumns: readonly string[],
): Expansion {
  const [rootId, ...rest] = path.order;
  if (rootId === undefined) throw new BladeTransformError("an empty transform path");
  const graph = new DiGraph<ExpandedNodeAttrs>();
  const root = specOf(rootId);
  graph.addNode(rootId, { dataOutputCols: new Set(dataColumns) });
  const owner = new Map<string, string>(dataColumns.map((col) => [col, rootId]));
  const specs = new Map<string, ExpandedSpec>([
    [rootId, { ...root, id: rootId, specName: root.name }],
  ]);
  const states = new Map<string, SpecState>();
  const who = (spec: SpecView) => `transform spec ${spec.name} (${spec.specId})`;

  for (const id of rest) {
    const spec = specOf(id);
    const verb = spec.verb;
    const state = specStates.get(id);
    /** One expanded unit of this spec: it now owns its output column. */
    const addUnit = (exId: string, name: string, inputs: string[], output: string) => {
      owner.set(output, exId);
      specs.set(exId, {
        ...spec,
        id: exId,
        name,
        specName: spec.name,
        mapping: [[inputs, output]],
      });
    };
    if (verb === undefined) throw new BladeTransformError(`${who(spec)} has no verb`);
    if (WHOLE_FRAME_VERBS.includes(verb)) {
      const leaves = graph.nodes().filter((n) => graph.outDegree(n) === 0);
      let cols = new Set(dataColumns);
      for (const leaf of leaves) {
        graph.addEdge(leaf, id);
        for (const col of outputColsOf(graph, leaf)) cols.add(col);
      }
      if (verb === "groupby") {
        for (const col of spec.mapping.flatMap(([inputs]) => inputs)) {
          if (!cols.delete(col)) {
            throw new BladeTransformError(
              `${who(spec)} groups by "${col}", which no earlier step holds`,
            );
          }
        }
      } else {
        for (const col of cols) owner.set(col, id);
      }
      if (state) {
        cols = new Set([...cols].filter((col) => state.columns.includes(col)));
        states.set(id, restrict(state, [...cols], who(spec)));
      }
      specs.set(id, { ...spec, id, specName: spec.name });
      graph.node(id).dataOutputCols = cols;
      continue;
    }
    if (verb === "post_groupby") {
      for (const parent of path.graph.predecessors(id)) {
        for (const [inputs, output] of spec.mapping) {
          const name = expandedUnitName("post_groupby", output);
          const exId = `${id}__${name}`;
          graph.addEdge(parent, exId);
          addUnit(exId, name, inputs, output);
          graph.node(exId).dataOutputCols = new Set([output]);
          if (state) states.set(exId, restrict(state, [output], who(spec)));
        }
      }
      continue;
    }
    const parents = path.graph.predecessors(id);
    const onlyParent = parents.length === 1 ? (parents[0] as string) : undefined;
    if (
      onlyParent !== undefined &&
      onlyParent !== ROOT_SPEC_ID &&
      specOf(onlyParent).verb === "filter"
    ) {
      // A spec whose only parent is a filter hangs off the filter, whatever its inputs.
      for (const [inputs, output] of spec.mapping) {
        const name = expandedUnitName(verb, output);
        const exId = `${id}__${name}`;
        graph.addEdge(onlyParent, exId);
        addUnit(exId, name, inputs, output);
        let cols = outputColsOf(graph, onlyParent);
        if (state) {
          cols = new Set([...cols].filter((col) => state.columns.includes(col)));
          states.set(exId, restrict(state, [output], who(spec)));
        }
        graph.node(exId).dataOutputCols = new Set([output, ...cols]);
      }
      continue;
    }
    for (const [inputs, given] of spec.mapping) {
      const name = expandedUnitName(verb, given);
      const output = given === "" ? inputs[0] : given;
      if (output === undefined) {
        throw new BladeTransformError(`${who(spec)} maps no input columns to an empty output`);
      }
      if (inputs.length === 0) {
        throw new BladeTransformError(
          `${who(spec)} derives "${output}" from no input columns (BLADE fails here)`,
        );
      }
      const exId = `${id}__${name}`;
      let cols = new Set<string>();
      for (const input of inputs) {
        const from = owner.get(input);
        if (from === undefined) {
          throw new BladeTransformError(
            `${who(spec)} reads column "${input}", which no earlier step holds`,
          );
        }
        graph.addEdge(from, exId);
        for (const col of outputColsOf(graph, from)) cols.add(col);
      }
      cols.add(output);
      addUnit(exId, name, inputs, output);
      if (state) {
        cols = new Set([...cols].filter((col) => state.columns.includes(col)));
        states.set(exId, restrict(state, [output], who(spec)));
      }
      graph.node(exId).dataOutputCols = cols;
    }
  }
  return { graph, specs, states };
}

// ---- Column graphs (expand_graph.py: get_col_g) ----

type PartialState = Omit<ColumnState, "pathIndex" | "graphKey">;

function columnState(
  ex: Expansion,
  exId: string,
  col: string,
  nodeId: string,
): PartialState | undefined {
  const state = ex.states.get(exId);
  if (!state?.hashes) return undefined;
  const hashes = state.hashes.get(col);
  if (!hashes) return undefined;
  return {
    nodeId,
    col,
    specId: state.specId,
    expandedId: exId,
    value: hashes.value,
    categorical: hashes.categorical,
  };
}

function columnGraph(
  ex: Expansion,
  withInputEdges: boolean,
): { graph: ColumnGraph; states: Map<string, PartialState> } {
  const order = ex.graph.topologicalSort();
  const position = new Map(order.map((id, i) => [id, i]));
  const graph: ColumnGraph = new DiGraph();
  const states = new Map<string, PartialState>();
  const colsOf = new Map<string, Map<string, string>>(); // expanded id → column → node id
  const colsAt = (id: string) => {
    let map = colsOf.get(id);
    if (!map) {
      map = new Map();
      colsOf.set(id, map);
    }
    return map;
  };
  const verbOf = (id: string) => ex.specs.get(id)?.verb;
  const [rootId, ...rest] = order as [string, ...string[]];
  const root = ex.specs.get(rootId) as ExpandedSpec;
  for (const col of outputColsOf(ex.graph, rootId)) {
    const nid = `${col}__${rootId}`;
    graph.addNode(nid, { col, expandedId: rootId, expandedName: root.name, val: nid });
    colsAt(rootId).set(col, nid);
  }
  for (const id of rest) {
    const spec = ex.specs.get(id);
    if (!spec) {
      throw new BladeTransformError(
        `the expanded graph holds ${id}, which is no expanded spec (BLADE fails here)`,
      );
    }
    const verb = spec.verb as TransformVerb;
    if (WHOLE_FRAME_VERBS.includes(verb)) {
      // Ancestors latest first; a column comes from the nearest one holding it, looking no
      // further than a groupby or past a verb that affects the whole frame.
      const parents = ex.graph.subgraph(ex.graph.ancestors(id)).topologicalSort().reverse();
      for (const col of outputColsOf(ex.graph, id)) {
        const nid = `${col}__${id}`;
        for (const parent of parents) {
          const parentVerb = verbOf(parent);
          if (parentVerb === "groupby") break;
          const from = colsOf.get(parent)?.get(col);
          if (from !== undefined && !graph.hasNode(nid)) {
            graph.addNode(nid, { col, expandedId: id, expandedName: spec.name, val: verb });
            graph.addEdge(from, nid, "data");
            colsAt(id).set(col, nid);
            const state = columnState(ex, id, col, nid);
            if (state) states.set(nid, state);
          }
          if (parentVerb !== undefined && VERBS_AFFECTING_WHOLE_DF.includes(parentVerb)) break;
        }
      }
      if (withInputEdges) {
        const direct = ex.graph.predecessors(id);
        const inputs = new Set(spec.mapping.flatMap(([cols]) => cols));
        const allCols = new Set(
          direct.flatMap((parent) => [...(colsOf.get(parent)?.keys() ?? [])]),
        );
        for (const parent of direct) {
          for (const [col, from] of colsOf.get(parent) ?? []) {
            if (!inputs.has(col)) continue;
            for (const out of allCols) {
              const target = `${out}__${id}`;
              // BLADE also adds edges to column nodes the spec never created; nothing descends
              // from those, so they can never enter a column's ancestor subgraph: skipped here.
              if (!graph.hasNode(target)) continue;
              graph.addEdge(from, target, graph.hasEdge(from, target) ? "input + data" : "input");
            }
          }
        }
      }
      continue;
    }
    const [inputs, output] = spec.mapping[0] as [string[], string];
    const nid = `${output}__${id}`;
    graph.addNode(nid, { col: output, expandedId: id, expandedName: spec.name, val: verb });
    const parents = ex.graph
      .predecessors(id)
      .sort((a, b) => (position.get(b) as number) - (position.get(a) as number));
    for (const col of inputs) {
      const from = parents
        .map((parent) => colsOf.get(parent)?.get(col))
        .find((n) => n !== undefined);
      if (from !== undefined) graph.addEdge(from, nid, "data");
    }
    colsAt(id).set(output, nid);
    if (ex.states.size > 0) {
      const state = ex.states.get(id);
      if (!state) {
        throw new BladeTransformError(
          `transform spec ${spec.specName} (${spec.specId}) left no data frame (BLADE fails here)`,
        );
      }
      if (!state.hashes) {
        throw new BladeTransformError(
          `transform spec ${spec.specName} (${spec.specId}) left a grouped object, not a frame (BLADE fails here)`,
        );
      }
      const hashed = columnState(ex, id, output, nid);
      if (hashed) states.set(nid, hashed);
    }
  }
  return { graph, states };
}

// ---- Graph keys and isomorphism ----

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

/**
 * An isomorphism-invariant key of a labelled column graph: networkx 3.3's
 * weisfeiler_lehman_graph_hash(node_attr="val", edge_attr="type") procedure (3 rounds over
 * successors, each label the hash of the node's label and its successors' edge-type-prefixed
 * labels in sorted order; the key hashes every round's sorted label counts), with SHA-256 in
 * place of blake2b. The digests differ from BLADE's, the buckets are the same (barring hash
 * collisions). networkx ≥ 3.5 also aggregates predecessors; BLADE's era (3.3) did not.
 */
export function graphKey(graph: ColumnGraph): string {
  let labels = new Map(graph.nodes().map((id) => [id, String(graph.node(id).val)]));
  const rounds: string[] = [];
  for (let round = 0; round < WL_ITERATIONS; round++) {
    const next = new Map<string, string>();
    for (const id of graph.nodes()) {
      const around = graph
        .successors(id)
        .map((s) => String(graph.edge(id, s)) + (labels.get(s) as string))
        .sort();
      next.set(id, digest((labels.get(id) as string) + around.join("")));
    }
    labels = next;
    const counts = new Map<string, number>();
    for (const label of labels.values()) counts.set(label, (counts.get(label) ?? 0) + 1);
    rounds.push(
      [...counts.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([label, count]) => `${label}:${count}`)
        .join(","),
    );
  }
  return digest(rounds.join(";"));
}

/** Colour refinement over both graphs at once, so colours are comparable between them. */
function refineColours(a: ColumnGraph, b: ColumnGraph): [Map<string, string>, Map<string, string>] {
  const init = (g: ColumnGraph) =>
    new Map(g.nodes().map((id) => [id, digest(`v:${g.node(id).val}`)]));
  let ca = init(a);
  let cb = init(b);
  const classes = () => new Set([...ca.values(), ...cb.values()]).size;
  let count = classes();
  const step = (g: ColumnGraph, colours: Map<string, string>) =>
    new Map(
      g.nodes().map((id) => {
        const out = g
          .successors(id)
          .map((s) => `${g.edge(id, s)}>${colours.get(s)}`)
          .sort();
        const inn = g
          .predecessors(id)
          .map((p) => `${g.edge(p, id)}<${colours.get(p)}`)
          .sort();
        return [id, digest(`${colours.get(id)}|${out.join(",")}|${inn.join(",")}`)];
      }),
    );
  for (;;) {
    const na = step(a, ca);
    const nb = step(b, cb);
    ca = na;
    cb = nb;
    const now = classes();
    if (now === count) return [ca, cb];
    count = now;
  }
}

function histogram(colours: Map<string, string>): string {
  return [...colours.values()].sort().join(",");
}

/**
 * Exact isomorphism of two column graphs with equal `val` on nodes and equal `type` on edges
 * (networkx.is_isomorphic with BLADE's node_match/edge_match). Backtracking over candidates of
 * equal refined colour; returns false as well when `budget` search steps do not settle it
 * (BLADE counts its timeout as "not isomorphic").
 */
export function isIsomorphic(
  a: ColumnGraph,
  b: ColumnGraph,
  budget = ISOMORPHISM_STEP_BUDGET,
): boolean {
  if (a.size !== b.size) return false;
  const edgesA = a.edges();
  const edgesB = b.edges();
  if (edgesA.length !== edgesB.length) return false;
  const [ca, cb] = refineColours(a, b);
  if (histogram(ca) !== histogram(cb)) return false;
  const byColour = new Map<string, string[]>();
  for (const [id, colour] of cb) byColour.set(colour, [...(byColour.get(colour) ?? []), id]);

  // Order a's nodes: rarest colour first, then always a node tied to the ones already placed.
  const rarity = (id: string) => (byColour.get(ca.get(id) as string) ?? []).length;
  const remaining = new Set(a.nodes());
  const order: string[] = [];
  const placed = new Set<string>();
  while (remaining.size > 0) {
    let best: string | undefined;
    let bestScore = -1;
    for (const id of remaining) {
      const ties = [...a.successors(id), ...a.predecessors(id)].filter((n) => placed.has(n)).length;
      const score = ties * 1_000_000 - rarity(id);
      if (best === undefined || score > bestScore) {
        best = id;
        bestScore = score;
      }
    }
    order.push(best as string);
    placed.add(best as string);
    remaining.delete(best as string);
  }

  const map = new Map<string, string>();
  const used = new Set<string>();
  let steps = 0;
  const consistent = (u: string, v: string): boolean => {
    for (const [x, y] of map) {
      const ab = a.hasEdge(u, x);
      if (ab !== b.hasEdge(v, y) || (ab && a.edge(u, x) !== b.edge(v, y))) return false;
      const ba = a.hasEdge(x, u);
      if (ba !== b.hasEdge(y, v) || (ba && a.edge(x, u) !== b.edge(y, v))) return false;
    }
    return true;
  };
  const search = (depth: number): boolean | "budget" => {
    if (depth === order.length) return true;
    const u = order[depth] as string;
    for (const v of byColour.get(ca.get(u) as string) ?? []) {
      if (used.has(v)) continue;
      if (++steps > budget) return "budget";
      if (!consistent(u, v)) continue;
      map.set(u, v);
      used.add(v);
      const found = search(depth + 1);
      if (found !== false) return found;
      map.delete(u);
      used.delete(v);
    }
    return false;
  };
  return search(0) === true;
}

// ---- Building the states of one side ----

class StatesBuilder {
  private readonly expanded = new Map<string, ExpandedSpec>();
  private readonly paths: PathColumns[] = [];
  private readonly valueHashes = new Map<string, ColumnState[]>();
  private readonly categoricalHashes = new Map<string, ColumnState[]>();
  private readonly groups = new Map<string, GraphGroup[]>();

  constructor(
    private readonly dataColumns: readonly string[],
    private readonly budget: number,
  ) {}

  addPath(
    path: TransformPath,
    specOf: (id: string) => SpecView,
    specStates: Map<string, SpecState>,
  ): void {
    const ex = expand(path, specOf, specStates, this.dataColumns);
    const plain = columnGraph(ex, false);
    const withInput = columnGraph(ex, true);
    for (const [id, spec] of ex.specs) this.expanded.set(id, spec);
    const pathIndex = this.paths.length;
    const states = new Map<string, ColumnState>();
    for (const [nid, partial] of plain.states)
      states.set(nid, { ...partial, pathIndex, graphKey: "" });
    this.paths.push({
      leafId: path.leafId,
      order: path.order,
      graph: plain.graph,
      graphWithInput: withInput.graph,
      states,
    });
    for (const state of states.values()) {
      push(this.valueHashes, state.value, state);
      push(this.categoricalHashes, state.categorical, state);
    }
    for (const nid of withInput.graph.nodes()) {
      const state = states.get(nid);
      if (!state) continue;
      const sub = withInput.graph.subgraph([...withInput.graph.ancestors(nid), nid]);
      state.graphKey = graphKey(sub);
      const groups = this.groups.get(state.graphKey);
      const group = groups?.find((g) => isIsomorphic(g.graph, sub, this.budget));
      if (group) group.states.push(state);
      else push(this.groups, state.graphKey, { key: state.graphKey, graph: sub, states: [state] });
    }
  }

  result(): TransformStates {
    const graphGroups = new Map<string, GraphGroup>();
    for (const [key, groups] of this.groups)
      graphGroups.set(key, groups[groups.length - 1] as GraphGroup);
    return {
      expanded: this.expanded,
      paths: this.paths,
      valueHashes: this.valueHashes,
      categoricalHashes: this.categoricalHashes,
      graphGroups,
    };
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

// ---- Ground truth ----

/**
 * The ground truth's transform states: every path's cumulative scripts are run (identical
 * scripts once), each path is expanded and its column graphs built, in path order — with
 * BLADE's post_groupby rewrite carrying over from path to path. A failing script is a
 * BladeTransformError naming the spec.
 */
export async function groundTruthTransforms(
  dataset: BladeDataset,
  run: RunScripts,
  hash: HashFrame,
  options: TransformGraphOptions = {},
): Promise<TransformStates> {
  const language = options.language ?? "python";
  const transforms = dataset.groundTruth.transforms;
  const byId = new Map(transforms.map((spec) => [spec.specId, spec]));
  const paths = transformPaths(transforms);
  const scriptsByPath = paths.map((path) => pathScripts(path, transforms, language));
  const unique = [...new Set(scriptsByPath.flatMap((scripts) => scripts.map((s) => s.script)))];
  const outcomes = await run(unique);
  const outcomeOf = new Map(unique.map((script, i) => [script, outcomes[i]]));

  const verbs = new Map<string, TransformVerb | undefined>(
    transforms.map((s) => [s.specId, s.verb]),
  );
  const view = (id: string): SpecView => {
    const spec = byId.get(id) as TransformSpec;
    return {
      specId: id,
      name: spec.specName,
      verb: verbs.get(id),
      mapping: spec.mapping,
      code: spec.code,
    };
  };
  const builder = new StatesBuilder(
    dataset.fieldNames,
    options.isomorphismStepBudget ?? ISOMORPHISM_STEP_BUDGET,
  );
  paths.forEach((path, i) => {
    rewritePostGroupby(path, verbs);
    const specStates = new Map<string, SpecState>();
    for (const { specId, script } of scriptsByPath[i] as { specId: string; script: string }[]) {
      const outcome = outcomeOf.get(script);
      const spec = byId.get(specId) as TransformSpec;
      if (!outcome)
        throw new BladeTransformError(
          `the runtime returned no outcome for spec ${spec.specName} (${specId})`,
        );
      if (!outcome.ok) {
        const why = outcome.timedOut ? "timed out" : outcome.error;
        throw new BladeTransformError(
          `ground-truth transform spec ${spec.specName} (${specId}) failed: ${why}`,
        );
      }
      const state = specState(specId, outcome, hash);
      if (state) specStates.set(specId, state);
    }
    builder.addPath(path, view, specStates);
  });
  return builder.result();
}

// ---- The agent's units ----

/** BLADE's run statuses for a transform stage that did not produce states. */
export type AgentTransformStatus =
  | "LM_SUBMISSION_EXECUTION_FAILED"
  | "LM_SUBMISSION_CONVERSION_FAILED"
  | "LM_SUBMISSION_TRANSFORM_CODE_EMPTY";

export type AgentTransformsResult =
  | { ok: true; states: TransformStates; specs: TransformSpec[] }
  | { ok: false; status: AgentTransformStatus; error: string };

function chainSpec(
  id: string,
  verb: TransformVerb,
  mapping: [string[], string][],
  code: string,
  parent: string,
): TransformSpec {
  return {
    specId: id,
    specName: id,
    specification: "",
    verb,
    code,
    rationale: "",
    mapping,
    branches: [{ dependencies: [parent], condition: "" }],
    annotator: "",
  };
}

/**
 * A unit's mapping as BLADE holds it: a dict keyed by the input column set, so entries with the
 * same inputs collapse (the last output wins, at the first entry's place).
 */
function unitMapping(unit: TransformUnit): [string[], string][] {
  const byInputs = new Map<string, [string[], string]>();
  for (const [inputs, output] of unit.mapping) {
    const key = JSON.stringify([...new Set(inputs)].sort());
    const existing = byInputs.get(key);
    if (existing) existing[1] = output;
    else byInputs.set(key, [[...new Set(inputs)], output]);
  }
  return [...byInputs.values()];
}

/**
 * The agent's transform states from its units (§2.2 step 4): unit i's script is the code of
 * units 0..i joined (newlines in Python, ";\n" between SELECTs in SQL), and its frame is hashed
 * in full. The units become a chain after ROOT named `node_<i>_<verb>`; a groupby unit (or one
 * with groupby columns) becomes `node_<i>_groupby` (no code, no state) and
 * `node_<i>_post_groupby`; an `ALL` output is "" for filter and post_groupby and one entry per
 * frame column otherwise. A unit that fails or leaves no frame is LM_SUBMISSION_EXECUTION_FAILED;
 * a mapped output missing from the unit's frame, or units BLADE cannot expand, are
 * LM_SUBMISSION_CONVERSION_FAILED (BLADE's converted-code checks and state building); no units
 * at all is LM_SUBMISSION_TRANSFORM_CODE_EMPTY.
 */
export async function agentTransforms(
  units: readonly TransformUnit[],
  run: RunScripts,
  hash: HashFrame,
  dataColumns: readonly string[],
  options: TransformGraphOptions = {},
): Promise<AgentTransformsResult> {
  if (units.length === 0) {
    return { ok: false, status: "LM_SUBMISSION_TRANSFORM_CODE_EMPTY", error: "no transform units" };
  }
  const language = options.language ?? "python";
  const codes = units.map((unit) =>
    language === "sql" ? unit.code.trim().replace(/;+\s*$/, "") : unit.code,
  );
  const joiner = language === "sql" ? ";\n" : "\n";
  const scripts = codes.map((_, i) => codes.slice(0, i + 1).join(joiner));
  const outcomes = await run(scripts);

  const frames: Frame[] = [];
  for (const [i, unit] of units.entries()) {
    const outcome: ScriptOutcome = outcomes[i] ?? {
      ok: false,
      error: "the runtime returned no outcome",
    };
    const label = `transform unit ${i} (${unit.verb})`;
    if (!outcome.ok) {
      const why = outcome.timedOut ? "timed out" : outcome.error;
      return {
        ok: false,
        status: "LM_SUBMISSION_EXECUTION_FAILED",
        error: `${label} failed: ${why}`,
      };
    }
    if (outcome.kind !== "frame") {
      const what = outcome.kind === "groupby" ? "a grouped object" : `a ${outcome.type}`;
      return {
        ok: false,
        status: "LM_SUBMISSION_EXECUTION_FAILED",
        error: `${label} leaves ${what}, not a data frame`,
      };
    }
    const names = new Set(outcome.frame.columns.map((c) => c.name));
    for (const [, output] of unit.mapping) {
      if (output !== ALL_COLUMNS && !names.has(output)) {
        return {
          ok: false,
          status: "LM_SUBMISSION_CONVERSION_FAILED",
          error: `${label} maps to column "${output}", which is not in the frame it leaves`,
        };
      }
    }
    frames.push(outcome.frame);
  }

  const specs: TransformSpec[] = [rootTransformSpec()];
  const specStates = new Map<string, SpecState>();
  const stateOf = (id: string, frame: Frame): SpecState => ({
    specId: id,
    columns: frame.columns.map((c) => c.name),
    hashes: new Map(hash(frame).map((h) => [h.name, h])),
  });
  for (const [i, unit] of units.entries()) {
    const frame = frames[i] as Frame;
    const mapping = unitMapping(unit);
    const parent = (specs[specs.length - 1] as TransformSpec).specId;
    if (unit.verb === "groupby" || unit.groupbyCols.length > 0) {
      const groupId = `node_${i}_groupby`;
      specs.push(chainSpec(groupId, "groupby", [[[...unit.groupbyCols], ""]], "", parent));
      const postId = `node_${i}_post_groupby`;
      const postMapping = mapping.map(
        ([inputs, output]) => [inputs, output === ALL_COLUMNS ? "" : output] as [string[], string],
      );
      specs.push(chainSpec(postId, "post_groupby", postMapping, unit.code, groupId));
      specStates.set(postId, stateOf(postId, frame));
      continue;
    }
    let entries: [string[], string][];
    if (unit.verb === "filter") {
      entries = mapping.map(([inputs, output]) => [inputs, output === ALL_COLUMNS ? "" : output]);
    } else {
      // A set of (input set, output) pairs; ALL stands for every column of the unit's frame.
      const seen = new Map<string, [string[], string]>();
      for (const [inputs, output] of mapping) {
        const outputs = output === ALL_COLUMNS ? frame.columns.map((c) => c.name) : [output];
        for (const out of outputs)
          seen.set(JSON.stringify([[...inputs].sort(), out]), [inputs, out]);
      }
      entries = [...seen.values()];
    }
    const id = `node_${i}_${unit.verb}`;
    specs.push(chainSpec(id, unit.verb, entries, unit.code, parent));
    specStates.set(id, stateOf(id, frame));
  }

  try {
    const byId = new Map(specs.map((spec) => [spec.specId, spec]));
    const view = (id: string): SpecView => {
      const spec = byId.get(id) as TransformSpec;
      return {
        specId: id,
        name: spec.specName,
        verb: spec.verb,
        mapping: spec.mapping,
        code: spec.code,
      };
    };
    const builder = new StatesBuilder(
      dataColumns,
      options.isomorphismStepBudget ?? ISOMORPHISM_STEP_BUDGET,
    );
    for (const path of transformPaths(specs)) builder.addPath(path, view, specStates);
    return { ok: true, states: builder.result(), specs };
  } catch (error) {
    if (!(error instanceof BladeTransformError)) throw error;
    return { ok: false, status: "LM_SUBMISSION_CONVERSION_FAILED", error: error.message };
  }
}
