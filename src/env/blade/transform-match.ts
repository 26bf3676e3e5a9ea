/**
 * Matching the agent's transforms to the ground truth's (docs/blade-spec.md §2.5, §3, §8;
 * eval/match/transform.py: TransformMatcher.match_w_tsdata). By value: every column hash found
 * on both sides marks, on each side, the expanded specs of every column node with that hash and
 * of all its ancestors in the column graph without input edges. By graph: for every graph key
 * found on both sides, if the two groups' subgraphs are isomorphic (verbs, original columns by
 * name and edge types; values and derived names ignored), every column of both groups and all
 * their ancestors in the column graph with input edges are marked. The categorical hashes are
 * matched the same way as the values; BLADE reports them but no headline metric uses them.
 */
import { ROOT_SPEC_ID, type TransformVerb } from "./specs.js";
import {
  type ColumnGraph,
  type ColumnState,
  ISOMORPHISM_STEP_BUDGET,
  isIsomorphic,
  type TransformStates,
} from "./transform-graph.js";

/** BLADE's name of the root spec, excluded from every matched list. */
const ROOT_SPEC_NAME = "ROOT";

/** How one expanded spec of one side fared. */
export interface SpecMatchDetail {
  id: string;
  name: string;
  specId: string;
  verb: TransformVerb | undefined;
  matchedByValue: boolean;
  matchedByGraph: boolean;
  matchedByCategorical: boolean;
  /** The shared value hashes that marked it (through one of its columns or a descendant's). */
  valueHashes: string[];
  /** The shared graph keys whose isomorphic groups marked it. */
  graphKeys: string[];
}

export interface TransformMatch {
  /** Names of the matched ground-truth expanded specs (ROOT excluded); coverage counts these. */
  matchedValueGt: Set<string>;
  matchedGraphGt: Set<string>;
  matchedCategoricalGt: Set<string>;
  /** Names of the matched agent expanded specs, one per spec (names may repeat); hit rates count these. */
  matchedValueAgent: string[];
  matchedGraphAgent: string[];
  matchedCategoricalAgent: string[];
  /** Expanded ground-truth specs minus ROOT (BLADE's num_tspecs1). */
  gtCount: number;
  /** Expanded agent specs minus ROOT (num_tspecs2). */
  agentCount: number;
  /** Every expanded spec of each side, ROOT included, in order of first appearance. */
  gt: SpecMatchDetail[];
  agent: SpecMatchDetail[];
}

export interface TransformMatchOptions {
  isomorphismStepBudget?: number;
}

type Marks = Map<string, Set<string>>; // expanded spec id → hashes (or keys) that marked it

function mark(marks: Marks, id: string, why: string): void {
  const set = marks.get(id);
  if (set) set.add(why);
  else marks.set(id, new Set([why]));
}

/** A column node's expanded spec and those of all its ancestors (__get_matched_col_nids_from_nid). */
function markAncestors(graph: ColumnGraph, state: ColumnState, marks: Marks, why: string): void {
  for (const id of [...graph.ancestors(state.nodeId), state.nodeId]) {
    mark(marks, graph.node(id).expandedId, why);
  }
}

function matchByHash(
  sides: [TransformStates, TransformStates],
  hashesOf: (side: TransformStates) => Map<string, ColumnState[]>,
): [Marks, Marks] {
  const [gt, agent] = sides;
  const marks: [Marks, Marks] = [new Map(), new Map()];
  const agentHashes = hashesOf(agent);
  for (const [hash, gtStates] of hashesOf(gt)) {
    const agentStates = agentHashes.get(hash);
    if (!agentStates) continue;
    for (const state of gtStates)
      markAncestors(gt.paths[state.pathIndex]?.graph as ColumnGraph, state, marks[0], hash);
    for (const state of agentStates) {
      markAncestors(agent.paths[state.pathIndex]?.graph as ColumnGraph, state, marks[1], hash);
    }
  }
  return marks;
}

function matchByGraph(gt: TransformStates, agent: TransformStates, budget: number): [Marks, Marks] {
  const marks: [Marks, Marks] = [new Map(), new Map()];
  for (const [key, gtGroup] of gt.graphGroups) {
    const agentGroup = agent.graphGroups.get(key);
    if (!agentGroup || !isIsomorphic(gtGroup.graph, agentGroup.graph, budget)) continue;
    for (const state of gtGroup.states) {
      markAncestors(gt.paths[state.pathIndex]?.graphWithInput as ColumnGraph, state, marks[0], key);
    }
    for (const state of agentGroup.states) {
      markAncestors(
        agent.paths[state.pathIndex]?.graphWithInput as ColumnGraph,
        state,
        marks[1],
        key,
      );
    }
  }
  return marks;
}

function isRootSpec(id: string, name: string): boolean {
  return id === ROOT_SPEC_ID || name === ROOT_SPEC_NAME;
}

function details(
  side: TransformStates,
  value: Marks,
  graph: Marks,
  categorical: Marks,
): SpecMatchDetail[] {
  return [...side.expanded.values()].map((spec) => ({
    id: spec.id,
    name: spec.name,
    specId: spec.specId,
    verb: spec.verb,
    matchedByValue: value.has(spec.id),
    matchedByGraph: graph.has(spec.id),
    matchedByCategorical: categorical.has(spec.id),
    valueHashes: [...(value.get(spec.id) ?? [])],
    graphKeys: [...(graph.get(spec.id) ?? [])],
  }));
}

function matchedNames(list: SpecMatchDetail[], by: (d: SpecMatchDetail) => boolean): string[] {
  return list.filter((d) => by(d) && !isRootSpec(d.id, d.name)).map((d) => d.name);
}

/** Matches the agent's transform states to the ground truth's (BLADE's MatchedTSpecs and counts). */
export function matchTransforms(
  gt: TransformStates,
  agent: TransformStates,
  options: TransformMatchOptions = {},
): TransformMatch {
  const [valueGt, valueAgent] = matchByHash([gt, agent], (side) => side.valueHashes);
  const [catGt, catAgent] = matchByHash([gt, agent], (side) => side.categoricalHashes);
  const [graphGt, graphAgent] = matchByGraph(
    gt,
    agent,
    options.isomorphismStepBudget ?? ISOMORPHISM_STEP_BUDGET,
  );
  const gtDetails = details(gt, valueGt, graphGt, catGt);
  const agentDetails = details(agent, valueAgent, graphAgent, catAgent);
  return {
    matchedValueGt: new Set(matchedNames(gtDetails, (d) => d.matchedByValue)),
    matchedGraphGt: new Set(matchedNames(gtDetails, (d) => d.matchedByGraph)),
    matchedCategoricalGt: new Set(matchedNames(gtDetails, (d) => d.matchedByCategorical)),
    matchedValueAgent: matchedNames(agentDetails, (d) => d.matchedByValue),
    matchedGraphAgent: matchedNames(agentDetails, (d) => d.matchedByGraph),
    matchedCategoricalAgent: matchedNames(agentDetails, (d) => d.matchedByCategorical),
    gtCount: Math.max(gt.expanded.size - 1, 0),
    agentCount: Math.max(agent.expanded.size - 1, 0),
    gt: gtDetails,
    agent: agentDetails,
  };
}
