/**
 * Matching an agent's conceptual variables to the ground truth's (docs/blade-spec.md §6.2): the
 * role groups and text forms BLADE judges, the match record both matchers return, and the offline
 * matcher the environment's reward uses when no model judge is at hand.
 *
 * Role groups (BLADE's `get_cvars_by_type`): IV, DV, Control (a ground-truth control with
 * `interaction` false) and Moderator (a control with `interaction` true); agent controls are split
 * by `isModerator`. Only groups present in the ground truth are judged; agent variables of other
 * groups are neither judged nor counted (`agentJudgedCount`, BLADE's num_cvars2).
 *
 * The offline rule, deterministic, within one role group, for every (ground truth, agent) pair:
 * - the ground truth's columns are `columnsOrig ∪ columnsDerived`, the agent's are its `columns`,
 *   all compared lower-cased;
 * - two columns correspond when their names are equal, or when both are known by the original
 *   data columns they stand for and those sets are equal and non-empty. An original column stands
 *   for itself (ground truth: `columnsOrig`; agent: a name among the dataset's columns); a derived
 *   column stands for the original columns its lineage names, when the caller gives lineage
 *   (e.g. from the transform specs' mappings), and for nothing otherwise. So `log_income` derived
 *   from `income` corresponds to `income` and to `income_z` derived from `income`;
 * - similarity 10 when the two column-name sets are identical, 8 when some pair of columns
 *   corresponds, and no pair otherwise (a variable without columns matches nothing).
 * Both scores reach the judge's threshold (≥ 8), so every offline pair is a match. It judges the
 * operationalisation, not the concept: two variables on one column count as the same variable.
 */
import type { AgentCvars, ConceptualVarSpec } from "./specs.js";

/** BLADE's threshold: a pair matches at this similarity or above (calc_metrics.py). */
export const MATCH_THRESHOLD = 8;
/** The offline rule's similarity for identical column sets. */
export const OFFLINE_SAME_COLUMNS = 10;
/** The offline rule's similarity for overlapping (or equally derived) columns. */
export const OFFLINE_SHARED_COLUMNS = 8;

/** The role groups in the order they are judged and reported. */
export const CVAR_GROUPS = ["IV", "DV", "Control", "Moderator"] as const;
export type CvarGroup = (typeof CVAR_GROUPS)[number];

/** One related (ground truth, agent) pair within a role group. */
export interface CvarPair {
  /** Index into the ground truth's variable list as given. */
  gtIndex: number;
  /** Index into `agentCvarEntries(agent)`: ivs, then dv, then controls, in submission order. */
  agentIndex: number;
  role: CvarGroup;
  /** 5..10 from the judge; 8 or 10 from the offline rule. */
  similarity: number;
  rationale: string;
}

export interface CvarMatch {
  /** Every related pair, by role group, then ground-truth index, then agent index. */
  pairs: CvarPair[];
  /** Ground-truth text forms of the pairs at or above the threshold, each once, in pair order. */
  matchedGt: string[];
  /** Agent text forms of those pairs, each once, in pair order. */
  matchedAgent: string[];
  /** Agent variables in the ground truth's role groups (BLADE's num_cvars2). */
  agentJudgedCount: number;
  /** All ground-truth variables (BLADE's num_cvars1). */
  gtCount: number;
  /** The role groups judged: those present in the ground truth, in CVAR_GROUPS order. */
  roles: CvarGroup[];
  method: "judge" | "offline";
}

/** One agent variable, flattened out of AgentCvars. */
export interface AgentCvarEntry {
  index: number;
  role: CvarGroup;
  description: string;
  columns: string[];
  text: string;
}

/** Original columns each derived column stands for, by column name (any case). */
export type ColumnLineage = Record<string, string[]>;

export interface OfflineMatchOptions {
  lineage?: { gt?: ColumnLineage; agent?: ColumnLineage };
}

export function gtCvarRole(spec: ConceptualVarSpec): CvarGroup {
  return spec.role === "Control" && spec.interaction ? "Moderator" : spec.role;
}

/** BLADE's ConceptualVarSpec.__str__: no period after IV and DV, one after a control. */
export function gtCvarText(spec: ConceptualVarSpec): string {
  if (spec.role !== "Control") return `${spec.role}: ${spec.concept}`;
  return spec.interaction
    ? `Moderator: ${spec.concept} interacting with ${spec.on} variable`
    : `Control: ${spec.concept}.`;
}

/** BLADE's agent forms (IVarWithCol, DVarWithCol, ControlVarWithCol.__str__). */
export function agentCvarText(role: CvarGroup, description: string, moderatorOn = ""): string {
  return role === "Moderator"
    ? `Moderator: ${description} interacting with ${moderatorOn} variable`
    : `${role}: ${description}.`;
}

/** The agent's variables as one list: ivs, then the dv, then the controls. */
export function agentCvarEntries(agent: AgentCvars): AgentCvarEntry[] {
  const entries: AgentCvarEntry[] = [];
  const add = (role: CvarGroup, description: string, columns: string[], on = "") =>
    entries.push({
      index: entries.length,
      role,
      description,
      columns,
      text: agentCvarText(role, description, on),
    });
  for (const iv of agent.ivs) add("IV", iv.description, iv.columns);
  add("DV", agent.dv.description, agent.dv.columns);
  for (const control of agent.controls) {
    add(
      control.isModerator ? "Moderator" : "Control",
      control.description,
      control.columns,
      control.moderatorOn,
    );
  }
  return entries;
}

/** The role groups present in the ground truth, in CVAR_GROUPS order. */
export function gtRoles(gt: readonly ConceptualVarSpec[]): CvarGroup[] {
  const present = new Set(gt.map(gtCvarRole));
  return CVAR_GROUPS.filter((role) => present.has(role));
}

function byRoleThenIndex(a: CvarPair, b: CvarPair): number {
  return (
    CVAR_GROUPS.indexOf(a.role) - CVAR_GROUPS.indexOf(b.role) ||
    a.gtIndex - b.gtIndex ||
    a.agentIndex - b.agentIndex
  );
}

/**
 * The match record from a matcher's pairs: the same counting whichever matcher produced them.
 * Pairs of groups absent from the ground truth must not be passed (matchers never make them).
 */
export function buildCvarMatch(
  gt: readonly ConceptualVarSpec[],
  agent: AgentCvars,
  pairs: readonly CvarPair[],
  method: CvarMatch["method"],
): CvarMatch {
  const roles = gtRoles(gt);
  const entries = agentCvarEntries(agent);
  const sorted = [...pairs].sort(byRoleThenIndex);
  const matchedGt = new Set<string>();
  const matchedAgent = new Set<string>();
  for (const pair of sorted) {
    if (pair.similarity < MATCH_THRESHOLD) continue;
    matchedGt.add(gtCvarText(gt[pair.gtIndex] as ConceptualVarSpec));
    matchedAgent.add((entries[pair.agentIndex] as AgentCvarEntry).text);
  }
  return {
    pairs: sorted,
    matchedGt: [...matchedGt],
    matchedAgent: [...matchedAgent],
    agentJudgedCount: entries.filter((entry) => roles.includes(entry.role)).length,
    gtCount: gt.length,
    roles,
    method,
  };
}

/** A column as the offline rule compares it: its name and the original columns it stands for. */
interface ComparedColumn {
  name: string;
  origins: Set<string>;
}

function lower(names: Iterable<string>): Set<string> {
  return new Set([...names].map((name) => name.toLowerCase()));
}

function lowerLineage(lineage: ColumnLineage | undefined): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const [column, origins] of Object.entries(lineage ?? {})) {
    map.set(column.toLowerCase(), lower(origins));
  }
  return map;
}

function compared(
  name: string,
  isOriginal: boolean,
  lineage: Map<string, Set<string>>,
): ComparedColumn {
  const key = name.toLowerCase();
  const origins = lineage.get(key) ?? (isOriginal ? new Set([key]) : new Set<string>());
  return { name: key, origins };
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((item) => b.has(item));
}

function offlinePair(
  gtColumns: ComparedColumn[],
  agentColumns: ComparedColumn[],
): { similarity: number; rationale: string } | undefined {
  const gtNames = new Set(gtColumns.map((c) => c.name));
  const agentNames = new Set(agentColumns.map((c) => c.name));
  if (gtNames.size > 0 && sameSet(gtNames, agentNames)) {
    return {
      similarity: OFFLINE_SAME_COLUMNS,
      rationale: `offline: the same columns (${[...gtNames].join(", ")})`,
    };
  }
  const shared = [...gtNames].filter((name) => agentNames.has(name));
  const derived: string[] = [];
  for (const g of gtColumns) {
    for (const a of agentColumns) {
      if (g.name === a.name || g.origins.size === 0 || !sameSet(g.origins, a.origins)) continue;
      derived.push(`${g.name} ~ ${a.name} (from ${[...g.origins].join(", ")})`);
    }
  }
  if (shared.length === 0 && derived.length === 0) return undefined;
  const reasons = [
    ...(shared.length > 0 ? [`shared columns (${shared.join(", ")})`] : []),
    ...(derived.length > 0 ? [`columns from the same data columns: ${derived.join("; ")}`] : []),
  ];
  return { similarity: OFFLINE_SHARED_COLUMNS, rationale: `offline: ${reasons.join("; ")}` };
}

/** The offline matcher (see the module header for the rule). */
export function matchCvarsOffline(
  gt: readonly ConceptualVarSpec[],
  agent: AgentCvars,
  dataColumns: readonly string[],
  options: OfflineMatchOptions = {},
): CvarMatch {
  const dataNames = lower(dataColumns);
  const gtLineage = lowerLineage(options.lineage?.gt);
  const agentLineage = lowerLineage(options.lineage?.agent);
  const gtCompared = gt.map((spec) => [
    ...spec.columnsOrig.map((c) => compared(c, true, gtLineage)),
    ...spec.columnsDerived.map((c) => compared(c, false, gtLineage)),
  ]);
  const entries = agentCvarEntries(agent);
  const agentCompared = entries.map((entry) =>
    entry.columns.map((c) => compared(c, dataNames.has(c.toLowerCase()), agentLineage)),
  );
  const pairs: CvarPair[] = [];
  for (const [gtIndex, spec] of gt.entries()) {
    const role = gtCvarRole(spec);
    for (const entry of entries) {
      if (entry.role !== role) continue;
      const found = offlinePair(
        gtCompared[gtIndex] as ComparedColumn[],
        agentCompared[entry.index] as ComparedColumn[],
      );
      if (found) pairs.push({ gtIndex, agentIndex: entry.index, role, ...found });
    }
  }
  return buildCvarMatch(gt, agent, pairs, "offline");
}
