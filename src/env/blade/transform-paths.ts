/**
 * From the ground truth's transform specs to the scripts BLADE runs (docs/blade-spec.md §2.1,
 * §4.6): the spec DAG built from `branches`, its leaf specs, one path graph per leaf and
 * combination of branch choices (graph_paths.py), the serialisation that rewires a spec with
 * several parents into a chain, the post_groupby rewrite, the execution order and the cumulative
 * scripts (every earlier node's code, groupby assignments renamed, then the node's own code).
 *
 * Orders follow networkx 3.x so that paths, execution order and expansion come out as in BLADE:
 * graphs keep insertion order of nodes and of each node's successors, and the topological order
 * is networkx's (Kahn's algorithm by generations, each generation in discovery order). Where
 * networkx iterates a Python set (a lowest common ancestor's starting point, subgraph views much
 * smaller than their graph) the order is arbitrary in BLADE too; clade uses graph order there.
 */
import { ROOT_SPEC_ID, type TransformSpec, type TransformVerb } from "./specs.js";

/** The ground truth or an analysis cannot be turned into BLADE's transform graphs. */
export class BladeTransformError extends Error {
  override name = "BladeTransformError";
}

/** Leaves with these verbs end no path (graph_paths.py: get_graphs_from_current_spec). */
const NON_LEAF_VERBS: readonly string[] = ["groupby", "join"];

// ---- A small directed graph with networkx's iteration orders ----

/**
 * A directed graph keyed by string ids, with node attributes N and edge attributes E. Node
 * order and each node's successor/predecessor order are insertion orders, as in networkx;
 * re-adding an existing edge updates its attributes in place.
 */
export class DiGraph<N extends object = Record<string, unknown>, E = undefined> {
  private readonly attrs = new Map<string, N>();
  private readonly succ = new Map<string, Map<string, E>>();
  private readonly pred = new Map<string, Map<string, E>>();

  get size(): number {
    return this.attrs.size;
  }

  hasNode(id: string): boolean {
    return this.attrs.has(id);
  }

  /** Adds a node, or merges `attrs` into an existing node's attributes. */
  addNode(id: string, attrs?: Partial<N>): void {
    const existing = this.attrs.get(id);
    if (existing) {
      if (attrs) Object.assign(existing, attrs);
      return;
    }
    this.attrs.set(id, { ...(attrs ?? {}) } as N);
    this.succ.set(id, new Map());
    this.pred.set(id, new Map());
  }

  /** The node's attributes (mutable); throws for an unknown node. */
  node(id: string): N {
    const attrs = this.attrs.get(id);
    if (!attrs) throw new BladeTransformError(`internal: no node ${id} in the graph`);
    return attrs;
  }

  nodes(): string[] {
    return [...this.attrs.keys()];
  }

  addEdge(from: string, to: string, attr?: E): void {
    this.addNode(from);
    this.addNode(to);
    (this.succ.get(from) as Map<string, E>).set(to, attr as E);
    (this.pred.get(to) as Map<string, E>).set(from, attr as E);
  }

  removeEdge(from: string, to: string): void {
    this.succ.get(from)?.delete(to);
    this.pred.get(to)?.delete(from);
  }

  hasEdge(from: string, to: string): boolean {
    return this.succ.get(from)?.has(to) ?? false;
  }

  edge(from: string, to: string): E | undefined {
    return this.succ.get(from)?.get(to);
  }

  /** Every edge as [from, to, attribute], in node then successor order. */
  edges(): [string, string, E][] {
    const out: [string, string, E][] = [];
    for (const [from, targets] of this.succ) {
      for (const [to, attr] of targets) out.push([from, to, attr]);
    }
    return out;
  }

  successors(id: string): string[] {
    return [...(this.succ.get(id)?.keys() ?? [])];
  }

  predecessors(id: string): string[] {
    return [...(this.pred.get(id)?.keys() ?? [])];
  }

  inDegree(id: string): number {
    return this.pred.get(id)?.size ?? 0;
  }

  outDegree(id: string): number {
    return this.succ.get(id)?.size ?? 0;
  }

  /** networkx's topological_sort: generations of Kahn's algorithm, each in discovery order. */
  topologicalSort(): string[] {
    const indegree = new Map<string, number>();
    let generation: string[] = [];
    for (const id of this.attrs.keys()) {
      const d = this.inDegree(id);
      if (d > 0) indegree.set(id, d);
      else generation.push(id);
    }
    const order: string[] = [];
    while (generation.length > 0) {
      const next: string[] = [];
      for (const id of generation) {
        for (const child of this.successors(id)) {
          const left = (indegree.get(child) ?? 0) - 1;
          if (left === 0) {
            next.push(child);
            indegree.delete(child);
          } else {
            indegree.set(child, left);
          }
        }
      }
      order.push(...generation);
      generation = next;
    }
    if (indegree.size > 0) {
      throw new BladeTransformError(`the graph has a cycle through ${[...indegree.keys()][0]}`);
    }
    return order;
  }

  /** Every node from which `id` can be reached (not `id` itself). */
  ancestors(id: string): Set<string> {
    const seen = new Set<string>();
    const stack = [id];
    while (stack.length > 0) {
      const current = stack.pop() as string;
      for (const parent of this.predecessors(current)) {
        if (!seen.has(parent)) {
          seen.add(parent);
          stack.push(parent);
        }
      }
    }
    seen.delete(id);
    return seen;
  }

  /** Whether `to` can be reached from `from` (true when they are the same node). */
  hasPath(from: string, to: string): boolean {
    if (from === to) return true;
    const seen = new Set<string>([from]);
    const stack = [from];
    while (stack.length > 0) {
      for (const child of this.successors(stack.pop() as string)) {
        if (child === to) return true;
        if (!seen.has(child)) {
          seen.add(child);
          stack.push(child);
        }
      }
    }
    return false;
  }

  /** The subgraph induced by `ids`, in this graph's node and edge order, attributes copied. */
  subgraph(ids: Iterable<string>): DiGraph<N, E> {
    const keep = new Set(ids);
    const out = new DiGraph<N, E>();
    for (const [id, attrs] of this.attrs) if (keep.has(id)) out.addNode(id, attrs);
    for (const [from, targets] of this.succ) {
      if (!keep.has(from)) continue;
      for (const [to, attr] of targets) if (keep.has(to)) out.addEdge(from, to, attr);
    }
    return out;
  }

  copy(): DiGraph<N, E> {
    return this.subgraph(this.attrs.keys());
  }
}

// ---- Branch conditions (parser/condition.py) ----

/** A multi-branch spec's choice on a path: its chosen dependencies' names and the branch index. */
export interface BranchChoice {
  deps: string[];
  index: number;
}

type CondToken =
  | { kind: "var"; name: string }
  | { kind: "index"; name: string }
  | { kind: "string"; value: string }
  | { kind: "number"; value: number }
  | { kind: "op"; text: string }
  | { kind: "kw"; text: string };

type CondValue = string[] | string | number | boolean;

/** The condition cannot be evaluated; BLADE's eval would raise and count it as not satisfied. */
class ConditionFailure extends Error {}

const KEYWORDS = new Set(["and", "or", "in", "not"]);
const OPERATORS = ["==", "!=", "<=", ">=", "<", ">", "(", ")"];

/**
 * BLADE's condition tokenizer: names of specs chosen so far (`allowed`), `name.index`, quoted
 * strings, numbers, operator characters and the keywords and/or/in/not. Returns "unknown" when a
 * name is not an allowed spec name (BLADE then counts the condition as satisfied) and "error" for
 * any other problem (not satisfied).
 */
function tokenizeCondition(
  line: string,
  allowed: ReadonlySet<string>,
): CondToken[] | "unknown" | "error" {
  const tokens: CondToken[] = [];
  let decisions = 0; // BLADE's parsed_decs: names, strings and numbers
  // Checked after the whole line is read, as BLADE's _recon runs after its parse.
  let misplacedNumber = false;
  let i = 0;
  while (i < line.length) {
    const ch = line[i] as string;
    if (ch === " " || ch === "\t" || ch === "\n") {
      i++;
    } else if (/[a-zA-Z]/.test(ch)) {
      let word = "";
      while (i < line.length && /[_a-zA-Z0-9]/.test(line[i] as string)) word += line[i++];
      if (KEYWORDS.has(word)) {
        tokens.push({ kind: "kw", text: word });
        continue;
      }
      if (!allowed.has(word)) return "unknown";
      let kind: "var" | "index" = "var";
      // `.index` is read only in a comparison's left-hand position (an even decision count).
      if (decisions % 2 === 0 && line[i] === ".") {
        i++;
        let attr = "";
        while (i < line.length && /[_a-zA-Z0-9]/.test(line[i] as string)) attr += line[i++];
        if (attr !== "index") return "error";
        kind = "index";
      }
      tokens.push({ kind, name: word });
      decisions++;
    } else if (ch === '"' || ch === "'") {
      const close = line.indexOf(ch, i + 1);
      if (close < 0) return "error";
      tokens.push({ kind: "string", value: line.slice(i + 1, close) });
      i = close + 1;
      decisions++;
    } else if (/[0-9]/.test(ch)) {
      const match = /^[0-9]+(?:\.[0-9]*)?/.exec(line.slice(i)) as RegExpExecArray;
      // A number on a comparison's right needs an index on its left (condition.py: _recon).
      const previous = tokens.findLast((t) => t.kind !== "op" && t.kind !== "kw");
      if (decisions % 2 === 1 && previous?.kind !== "index") misplacedNumber = true;
      tokens.push({ kind: "number", value: Number(match[0]) });
      i += match[0].length;
      decisions++;
    } else if ("=()!<>".includes(ch)) {
      let run = "";
      while (i < line.length && "=()!<>".includes(line[i] as string)) run += line[i++];
      // Python's tokenizer splits the run greedily.
      while (run.length > 0) {
        const op = OPERATORS.find((candidate) => run.startsWith(candidate));
        if (!op) return "error";
        tokens.push({ kind: "op", text: op });
        run = run.slice(op.length);
      }
    } else {
      return "error";
    }
  }
  return misplacedNumber ? "error" : tokens;
}

function truthy(value: CondValue): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "string") return value.length > 0;
  if (typeof value === "number") return value !== 0;
  return value;
}

function numeric(value: CondValue): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  return undefined;
}

/** Python's == on the values a condition can hold. */
function pyEqual(a: CondValue, b: CondValue): boolean {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined)
    return na !== undefined && nb !== undefined && na === nb;
  if (typeof a === "string" || typeof b === "string") return a === b;
  const la = a as string[];
  const lb = b as string[];
  return la.length === lb.length && la.every((item, i) => item === lb[i]);
}

/** Python's ordering (-1, 0, 1); mixed types raise TypeError as in Python 3. */
function pyCompare(a: CondValue, b: CondValue): number {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return Math.sign(na - nb);
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = pyCompare(a[i] as string, b[i] as string);
      if (c !== 0) return c;
    }
    return Math.sign(a.length - b.length);
  }
  throw new ConditionFailure("TypeError: unorderable types");
}

function pyIn(item: CondValue, container: CondValue): boolean {
  if (Array.isArray(container)) return container.some((element) => pyEqual(item, element));
  if (typeof container === "string") {
    if (typeof item !== "string") throw new ConditionFailure("TypeError: 'in <string>'");
    return container.includes(item);
  }
  throw new ConditionFailure("TypeError: argument is not iterable");
}

/** Evaluates the tokens as the Python expression BLADE reconstructs and evals. */
function evaluateCondition(
  tokens: CondToken[],
  history: ReadonlyMap<string, BranchChoice>,
): CondValue {
  let pos = 0;
  const peek = () => tokens[pos];
  const isOp = (text: string) => {
    const t = peek();
    return (t?.kind === "op" || t?.kind === "kw") && t.text === text;
  };
  const atom = (): CondValue => {
    const t = tokens[pos++];
    if (!t) throw new ConditionFailure("SyntaxError: unexpected end");
    if (t.kind === "var") return (history.get(t.name) as BranchChoice).deps;
    if (t.kind === "index") return (history.get(t.name) as BranchChoice).index;
    if (t.kind === "string" || t.kind === "number") return t.value;
    if (t.kind === "op" && t.text === "(") {
      const value = orTest();
      if (!isOp(")")) throw new ConditionFailure("SyntaxError: missing )");
      pos++;
      return value;
    }
    throw new ConditionFailure("SyntaxError: unexpected token");
  };
  const comparison = (): CondValue => {
    let left = atom();
    let result: CondValue = left;
    let allTrue = true;
    let compared = false;
    for (;;) {
      let op: string | undefined;
      const t = peek();
      if (t?.kind === "op" && ["==", "!=", "<", ">", "<=", ">="].includes(t.text)) op = t.text;
      else if (t?.kind === "kw" && t.text === "in") op = "in";
      else if (t?.kind === "kw" && t.text === "not" && tokens[pos + 1]?.kind === "kw") {
        const after = tokens[pos + 1] as { text: string };
        if (after.text === "in") {
          op = "not in";
          pos++;
        }
      }
      if (!op) break;
      pos++;
      const right = atom();
      // Chained comparisons stop at the first false link, as in Python.
      if (allTrue) {
        const holds =
          op === "=="
            ? pyEqual(left, right)
            : op === "!="
              ? !pyEqual(left, right)
              : op === "in"
                ? pyIn(left, right)
                : op === "not in"
                  ? !pyIn(left, right)
                  : op === "<"
                    ? pyCompare(left, right) < 0
                    : op === ">"
                      ? pyCompare(left, right) > 0
                      : op === "<="
                        ? pyCompare(left, right) <= 0
                        : pyCompare(left, right) >= 0;
        allTrue = holds;
      }
      compared = true;
      left = right;
    }
    if (compared) result = allTrue;
    return result;
  };
  const notTest = (): CondValue => {
    if (isOp("not")) {
      pos++;
      return !truthy(notTest());
    }
    return comparison();
  };
  const andTest = (): CondValue => {
    let value = notTest();
    while (isOp("and")) {
      pos++;
      const right = notTest();
      if (truthy(value)) value = right;
    }
    return value;
  };
  const orTest = (): CondValue => {
    let value = andTest();
    while (isOp("or")) {
      pos++;
      const right = andTest();
      if (!truthy(value)) value = right;
    }
    return value;
  };
  const value = orTest();
  if (pos !== tokens.length) throw new ConditionFailure("SyntaxError: trailing tokens");
  return value;
}

/**
 * Whether a branch condition holds for the branch choices made so far (keyed by spec name).
 * Spec ids in the condition are first replaced by spec names; a name that is not a spec with
 * several branches chosen earlier makes the condition hold; any other parse or evaluation
 * error makes it fail (graph_paths.py: __check_condition). Note that `name == 'x'` compares a
 * list with a string and is therefore always false in BLADE; `'x' in name` is the useful form.
 */
export function conditionHolds(
  condition: string,
  history: ReadonlyMap<string, BranchChoice>,
  specs: readonly TransformSpec[] = [],
): boolean {
  let line = condition;
  for (const spec of specs) line = line.split(spec.specId).join(spec.specName);
  const tokens = tokenizeCondition(line, new Set(history.keys()));
  if (tokens === "unknown") return true;
  if (tokens === "error") return false;
  try {
    return truthy(evaluateCondition(tokens, history));
  } catch (error) {
    if (error instanceof ConditionFailure) return false;
    throw error;
  }
}

// ---- Path graphs (graph_paths.py) ----

/** What a path graph records per spec: the branch taken (specs with several) and its condition. */
export interface PathNodeAttrs {
  branchInd?: number;
  condition?: string;
}

export type PathGraph = DiGraph<PathNodeAttrs>;

/** One execution path: a leaf spec with one choice per multi-branch ancestor, serialised. */
export interface TransformPath {
  leafId: string;
  /** The serialised path graph (BLADE runs and expands this one). */
  graph: PathGraph;
  /** networkx's topological order of `graph`: the execution order. */
  order: string[];
  /** Spec id → branch index, for every spec with several branches on this path. */
  branchChoices: Map<string, number>;
}

function specMap(transforms: readonly TransformSpec[]): Map<string, TransformSpec> {
  return new Map(transforms.map((spec) => [spec.specId, spec]));
}

function specOf(specs: ReadonlyMap<string, TransformSpec>, id: string): TransformSpec {
  const spec = specs.get(id);
  if (!spec) throw new BladeTransformError(`no transform spec has the id "${id}"`);
  return spec;
}

/** The spec DAG: an edge from every dependency of every branch (dataflow.py: build_graph_from_specs). */
export function specGraph(transforms: readonly TransformSpec[]): DiGraph {
  const graph = new DiGraph();
  for (const spec of transforms) {
    graph.addNode(spec.specId);
    for (const branch of spec.branches) {
      for (const dep of branch.dependencies) graph.addEdge(dep, spec.specId);
    }
  }
  return graph;
}

/** Specs nothing depends on that depend on something (an isolated ROOT is no leaf), in graph order. */
export function leafSpecIds(transforms: readonly TransformSpec[]): string[] {
  const graph = specGraph(transforms);
  return graph.nodes().filter((id) => graph.outDegree(id) === 0 && graph.inDegree(id) > 0);
}

/**
 * BLADE's recursive construction of unserialised graphs from a leaf (__build_graph_recur): a
 * depth-first walk up the dependencies; a spec with n branches continues with branch 0 and
 * starts n−1 copies of the graph so far, each completed recursively (and listed first).
 */
function unserialisedGraphs(
  leafId: string,
  specs: ReadonlyMap<string, TransformSpec>,
): PathGraph[] {
  const graphs: PathGraph[] = [];
  const build = (graph: PathGraph, stack: string[]) => {
    const addDeps = (deps: string[], g: PathGraph, s: string[], node: string) => {
      for (const dep of deps) {
        if (!g.hasNode(dep)) s.push(dep);
        g.addEdge(dep, node);
      }
    };
    while (stack.length > 0) {
      const node = stack.pop() as string;
      const spec = specOf(specs, node);
      graph.addNode(node);
      const several = spec.branches.length > 1;
      const before = several ? graph.copy() : undefined;
      const stackBefore = several ? [...stack] : [];
      spec.branches.forEach((branch, i) => {
        if (i === 0) {
          addDeps(branch.dependencies, graph, stack, node);
          if (several) graph.node(node).branchInd = 0;
          graph.node(node).condition = branch.condition;
        } else {
          const branchGraph = (before as PathGraph).copy();
          const branchStack = [...stackBefore];
          branchGraph.node(node).branchInd = i;
          branchGraph.node(node).condition = branch.condition;
          addDeps(branch.dependencies, branchGraph, branchStack, node);
          build(branchGraph, branchStack);
        }
      });
    }
    graphs.push(graph);
  };
  build(new DiGraph<PathNodeAttrs>(), [leafId]);
  return graphs;
}

/** networkx's lowest_common_ancestor, starting from the first common ancestor in graph order. */
function lowestCommonAncestor(graph: PathGraph, a: string, b: string): string | undefined {
  const ofA = graph.ancestors(a).add(a);
  const ofB = graph.ancestors(b).add(b);
  let current = graph.nodes().find((id) => ofA.has(id) && ofB.has(id));
  if (current === undefined) return undefined;
  for (;;) {
    const lower: string | undefined = graph
      .successors(current)
      .find((id) => ofA.has(id) && ofB.has(id));
    if (lower === undefined) return current;
    current = lower;
  }
}

/**
 * BLADE's serialisation of a spec with several parents (reconnect_nodes_for_serilization): the
 * parents, sorted by id, are chained — each parent's branch is moved in front of the next
 * parent's branch below their lowest common ancestor. Mutates `graph`.
 */
function reconnectParents(graph: PathGraph, node: string): void {
  const parents = graph.predecessors(node).sort();
  for (let i = 0; i + 1 < parents.length; i++) {
    const parent = parents[i] as string;
    const next = parents[i + 1] as string;
    graph.removeEdge(parent, node);
    const shared = lowestCommonAncestor(graph, parent, next);
    if (shared === undefined) {
      throw new BladeTransformError(
        `specs ${parent} and ${next} (both parents of ${node}) share no ancestor`,
      );
    }
    const below = graph.successors(shared).filter((id) => graph.hasPath(id, next));
    if (below.length !== 1) {
      throw new BladeTransformError(
        `cannot serialise the parents of ${node}: ${below.length} paths lead from ${shared} to ${next}`,
      );
    }
    graph.removeEdge(shared, below[0] as string);
    graph.addEdge(parent, below[0] as string);
  }
}

/**
 * BLADE's serialize_graph with ret_partial: walks the graph in topological order checking
 * conditions (a failing one truncates the path before that spec) and chaining multi-parent
 * specs. Returns the nodes kept and the leaf (the last node without successors), or undefined
 * for an empty graph.
 */
function serialise(
  graph: PathGraph,
  specs: ReadonlyMap<string, TransformSpec>,
  transforms: readonly TransformSpec[],
): { nodes: string[]; leaf: string } | undefined {
  const order = graph.topologicalSort();
  const history = new Map<string, BranchChoice>();
  let leaf: string | undefined;
  for (const [i, id] of order.entries()) {
    const attrs = graph.node(id);
    if (attrs.condition && !conditionHolds(attrs.condition, history, transforms)) {
      // BLADE serialises a copy of the part before this spec; the original stays as mutated so far.
      const kept = serialise(graph.subgraph(order.slice(0, i)), specs, transforms);
      return kept;
    }
    if (attrs.branchInd !== undefined) {
      const spec = specOf(specs, id);
      const deps = spec.branches[attrs.branchInd]?.dependencies ?? [];
      history.set(spec.specName, {
        deps: deps.map((dep) => specOf(specs, dep).specName),
        index: attrs.branchInd,
      });
    }
    if (graph.inDegree(id) > 1) reconnectParents(graph, id);
    if (graph.outDegree(id) === 0) leaf = id;
  }
  return leaf === undefined ? undefined : { nodes: graph.nodes(), leaf };
}

/**
 * Every execution path of the ground truth (dataflow.py: get_path_graphs_from_leaf_specs): per
 * leaf spec in graph order, per combination of branch choices, the serialised path graph.
 * Paths whose leaf is a groupby (or join) are dropped, as are paths a failing condition cuts
 * back to ROOT alone (BLADE would fail on those: its ROOT has no branch to report).
 */
export function transformPaths(transforms: readonly TransformSpec[]): TransformPath[] {
  const specs = specMap(transforms);
  const paths: TransformPath[] = [];
  for (const leafId of leafSpecIds(transforms)) {
    for (const graph of unserialisedGraphs(leafId, specs)) {
      const serialised = serialise(graph, specs, transforms);
      if (!serialised) continue;
      const leafSpec = specOf(specs, serialised.leaf);
      const index = graph.hasNode(serialised.leaf)
        ? (graph.node(serialised.leaf).branchInd ?? 0)
        : 0;
      if (leafSpec.branches[index] === undefined) continue;
      if (leafSpec.verb !== undefined && NON_LEAF_VERBS.includes(leafSpec.verb)) continue;
      const path = graph.subgraph(serialised.nodes);
      const branchChoices = new Map<string, number>();
      for (const id of path.nodes()) {
        const choice = path.node(id).branchInd;
        if (choice !== undefined) branchChoices.set(id, choice);
      }
      paths.push({ leafId, graph: path, order: path.topologicalSort(), branchChoices });
    }
  }
  return paths;
}

/**
 * BLADE's update_post_groupby_transverb: every spec on the path with a groupby parent becomes
 * post_groupby. `verbs` (spec id → verb) is updated in place and, as in BLADE (which rewrites
 * its shared spec objects), the rewrite carries over to the paths processed after this one.
 */
export function rewritePostGroupby(
  path: TransformPath,
  verbs: Map<string, TransformVerb | undefined>,
): void {
  for (const id of path.graph.nodes()) {
    if (path.graph.predecessors(id).some((parent) => verbs.get(parent) === "groupby")) {
      verbs.set(id, "post_groupby");
    }
  }
}

// ---- Code ----

/** Splits Python code into simple statements: [start, end) spans outside strings and brackets. */
function simpleStatements(code: string): [number, number][] {
  const spans: [number, number][] = [];
  let start = 0;
  let depth = 0;
  let i = 0;
  const cut = (end: number) => {
    spans.push([start, end]);
    start = end + 1;
  };
  while (i < code.length) {
    const ch = code[i] as string;
    if (ch === "#") {
      while (i < code.length && code[i] !== "\n") i++;
      continue;
    }
    if (ch === "'" || ch === '"') {
      const triple = code.startsWith(ch.repeat(3), i);
      const quote = triple ? ch.repeat(3) : ch;
      i += quote.length;
      while (i < code.length && !code.startsWith(quote, i)) {
        if (code[i] === "\\") i++;
        else if (!triple && code[i] === "\n") break;
        i++;
      }
      i += quote.length;
      continue;
    }
    if (ch === "\\" && code[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth = Math.max(depth - 1, 0);
    else if (depth === 0 && (ch === "\n" || ch === ";")) cut(i);
    i++;
  }
  spans.push([start, code.length]);
  return spans;
}

/** The index of the bracket closing the one at `text[0]` (strings skipped), or text.length. */
function closingBracket(text: string): number {
  let depth = 0;
  for (let j = 0; j < text.length; j++) {
    const c = text[j] as string;
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, j + 1);
      if (close < 0) return text.length;
      j = close;
    } else if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    if (depth === 0) return j;
  }
  return text.length;
}

/** `text` with every bracketed group and string literal replaced by its empty brackets / "". */
function skeleton(text: string): string | undefined {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === "#") break;
    if (ch === "'" || ch === '"') {
      const close = text.indexOf(ch, i + 1);
      if (close < 0) return undefined;
      out += '""';
      i = close + 1;
    } else if ("([{".includes(ch)) {
      const closer = ch === "(" ? ")" : ch === "[" ? "]" : "}";
      const j = i + closingBracket(text.slice(i));
      if (j >= text.length) return undefined;
      out += ch + closer;
      i = j + 1;
    } else {
      out += ch;
      i++;
    }
  }
  return out.replace(/\s+/g, "");
}

/** A right-hand side that is a call of `.groupby(...)` on a name or attribute chain. */
const GROUPBY_CALL = /^(?:[A-Za-z_]\w*|\(\))(?:\.[A-Za-z_]\w*|\(\)|\[\])*\.groupby\(\)$/;
/** The assignment targets of a simple statement: `name = name = ... = value`. */
const ASSIGN_TARGETS = /^(\s*)((?:[A-Za-z_]\w*[ \t]*=(?!=)[ \t]*)+)/;

/** Whether an expression is a `.groupby(...)` call (redundant outer parentheses allowed). */
function isGroupbyCall(value: string): boolean {
  let text = value.trim();
  for (;;) {
    const shape = skeleton(text);
    if (shape === undefined) return false;
    if (shape !== "()") return GROUPBY_CALL.test(shape);
    text = text.slice(1, closingBracket(text)).trim();
  }
}

/**
 * BLADE's process_groupby_code (parse_code.py) for pandas code: in every assignment whose value
 * is a `.groupby(...)` call, each plain-name target that starts with `df` and does not end in
 * `_grp` gets `_grp` appended, so that later code can reach the grouped object under that name
 * while `df` stays a frame. BLADE re-emits the code with ast.unparse (same meaning, other
 * layout); clade edits the text in place. Limits: statements are found by a scanner, not a
 * Python parser — targets in tuples, annotated or augmented assignments are left alone (as in
 * BLADE), and a value is recognised only as a chain of names, attributes, calls and subscripts
 * ending in `.groupby(...)`.
 */
export function processGroupbyCode(code: string): string {
  let out = "";
  let last = 0;
  for (const [start, end] of simpleStatements(code)) {
    const statement = code.slice(start, end);
    const match = ASSIGN_TARGETS.exec(statement);
    if (!match) continue;
    if (!isGroupbyCall(statement.slice(match[0].length))) continue;
    const targets = (match[2] as string).replace(/([A-Za-z_]\w*)(?=[ \t]*=)/g, (name) =>
      name.startsWith("df") && !name.endsWith("_grp") ? `${name}_grp` : name,
    );
    out += code.slice(last, start) + (match[1] as string) + targets;
    last = start + match[0].length;
  }
  return out + code.slice(last);
}

export type ScriptLanguage = "python" | "sql";

/** One script BLADE runs for a path: every earlier spec's code, then this spec's. */
export interface PathScript {
  specId: string;
  script: string;
}

/** The code a spec runs in the given language ("" for none, e.g. ROOT). */
export function specCode(spec: TransformSpec, language: ScriptLanguage): string {
  if (language === "python") return spec.code;
  if (spec.codeSql === undefined) {
    if (spec.code.trim() === "") return "";
    throw new BladeTransformError(
      `transform spec ${spec.specName} (${spec.specId}) has no code_sql`,
    );
  }
  return spec.codeSql.trim().replace(/;+\s*$/, "");
}

/**
 * The cumulative scripts of a path in execution order (dataflow.py: __get_transform_states):
 * specs without code are skipped; in Python the earlier code passes through
 * processGroupbyCode and is joined by newlines; in SQL the SELECT statements are joined by ";\n"
 * (the runtime runs them in order, each result becoming the next `df`).
 */
export function pathScripts(
  path: TransformPath,
  transforms: readonly TransformSpec[],
  language: ScriptLanguage = "python",
): PathScript[] {
  const specs = specMap(transforms);
  const scripts: PathScript[] = [];
  let before = "";
  for (const id of path.order) {
    const code = specCode(specOf(specs, id), language);
    if (!code) continue;
    scripts.push({ specId: id, script: before + code });
    before += language === "python" ? `${processGroupbyCode(code)}\n` : `${code};\n`;
  }
  return scripts;
}

/** Whether a spec id is BLADE's root (the data as read). */
export function isRoot(id: string): boolean {
  return id === ROOT_SPEC_ID;
}
