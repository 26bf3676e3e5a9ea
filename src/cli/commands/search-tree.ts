/**
 * `clade tree RUN` and `clade best RUN`: a stored search (docs/search.md) read back from its event
 * log. The tree is the fold of the log, so both show exactly what the engine saw: own and clade
 * counts, the CMP estimate sC / (sC + fC), each agent's status and cost, and the final choice (the
 * largest ε-quantile of Beta(1 + s, 1 + f) on own counts, as the engine chooses it).
 *
 * `best --out DIR` writes the chosen agent's folder: the root's files from the search's
 * configuration, then each node's diff down to the chosen one. For a search over training
 * branches (`evolve --policy`), each node is a policy file in the search's folder and its recipe
 * is shown; `best --out FILE` copies the chosen one's weights. A simulated search has no sources,
 * so it is refused.
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { writeAgentFolder } from "../../agent/folder/files.js";
import { branchFileOf, type Recipe, recipeOf, recipeText } from "../../improve/rl/branches.js";
import { isMethod, type Method } from "../../improve/search/policies/index.js";
import { lowerQuantile, type SearchPolicy } from "../../improve/search/policy.js";
import type { Scenario } from "../../improve/search/simulation/scenario.js";
import {
  costFields,
  foldStoredSearch,
  type NodeCost,
  nodeSpending,
  pathTo,
  storedSearchKind,
} from "../../improve/search/stored.js";
import { cladeMean, type NodeId, ROOT, type SearchTree } from "../../improve/search/tree.js";
import { rootFilesOf } from "../../improve/selfmod/evolution.js";
import { AgentLineage } from "../../improve/selfmod/lineage.js";
import { type SearchEvent, type SearchRow, SearchStore, workCost } from "../../store/search-log.js";
import { type CliIo, UsageError } from "../io.js";
import { formatCost } from "../report.js";

export interface SearchReadOptions {
  db: string;
  json?: boolean;
}

export interface BestOptions extends SearchReadOptions {
  out?: string;
}

/** A stored search folded back into its tree, with what the reports need. */
interface LoadedSearch {
  row: SearchRow;
  method: Method;
  scenario: Scenario | null;
  epsilon: number;
  tree: SearchTree;
  events: readonly SearchEvent[];
  chosen: NodeId | null;
}

function loadSearch(runId: string, db: string): LoadedSearch {
  const unknown = () => new UsageError(`no search "${runId}" in ${db}`);
  if (!existsSync(db)) throw unknown();
  const store = SearchStore.open(db, { readonly: true });
  try {
    const row = store.getSearch(runId);
    if (!row) throw unknown();
    const { config } = row;
    if (!isMethod(String(config.method))) {
      throw new UsageError(`search "${runId}" has an unknown method "${String(config.method)}"`);
    }
    if (storedSearchKind(config) === null) {
      throw new UsageError(`search "${runId}" is of an unknown kind "${String(config.kind)}"`);
    }
    const events = store.events(runId);
    const folded = foldStoredSearch(config, events);
    const policy = folded.policy as SearchPolicy;
    return {
      row,
      method: folded.method as Method,
      scenario: folded.scenario,
      epsilon: Number(policy.hyperparameters.epsilon),
      tree: folded.tree,
      events,
      chosen: folded.chosen,
    };
  } finally {
    store.close();
  }
}

const round = (value: number, digits = 4) => Number(value.toFixed(digits));

/** An agent's true pass probability, where the search is simulated (its hidden state). */
function trueQuality(search: LoadedSearch, id: NodeId): number | null {
  if (!search.scenario) return null;
  const p = (search.tree.node(id).data as { p?: unknown } | null)?.p;
  return typeof p === "number" ? round(p) : null;
}

export interface TreeNodeJson {
  id: number;
  parent: number | null;
  depth: number;
  s: number;
  f: number;
  cladeS: number;
  cladeF: number;
  cmp: number | null;
  status: "evaluated" | "pending" | "unevaluated";
  pending: number;
  errors: number;
  failedImprovements: number;
  /** The priced part; null when none of its work had a price (see CostFields). */
  costUsd: number | null;
  /** Some of its work's models had no price. */
  unpriced?: true;
  createdAtT: number;
  quality: number | null;
  /** A search over training branches: the recipe its parent was trained with (null: the root). */
  recipe?: Recipe | null;
  chosen: boolean;
}

function treeNodes(search: LoadedSearch): TreeNodeJson[] {
  const { tree, events } = search;
  const { spent, failed } = nodeSpending(tree, events);
  return tree.nodes.map((node) => {
    const cmp = cladeMean(node);
    return {
      id: node.id,
      parent: node.parent,
      depth: node.depth,
      s: node.s,
      f: node.f,
      cladeS: node.sC,
      cladeF: node.fC,
      cmp: Number.isNaN(cmp) ? null : round(cmp),
      status: node.pending > 0 ? "pending" : node.s + node.f > 0 ? "evaluated" : "unevaluated",
      pending: node.pending,
      errors: node.errors,
      failedImprovements: failed[node.id] as number,
      ...costFields(spent[node.id] as NodeCost),
      createdAtT: node.createdAtT,
      quality: trueQuality(search, node.id),
      ...(isTraining(search) ? { recipe: recipeOf(node.data) } : {}),
      chosen: node.id === search.chosen,
    };
  });
}

/** Node ids depth first, children in the order they were made. */
function preorder(tree: SearchTree): NodeId[] {
  const order: NodeId[] = [];
  const stack: NodeId[] = [ROOT];
  while (stack.length > 0) {
    const id = stack.pop() as NodeId;
    order.push(id);
    const children = tree.node(id).children;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as NodeId);
  }
  return order;
}

/** A search over training branches of a policy (`evolve --policy`). */
const isTraining = (search: LoadedSearch) => search.row.config.kind === "policy";

/** The folder of a search over training branches: its nodes' policy files. */
const trainingDir = (search: LoadedSearch) => String(search.row.config.dir);

/** " of AGENT on ENV" for a search over real agents (or training branches of a policy). */
function agentLabel(row: SearchRow): string {
  if (row.config.kind === "policy") {
    const policy = row.config.policy as { path?: string } | null;
    const name = policy?.path ? basename(policy.path) : "a policy";
    return ` over training branches of ${name} on ${String(row.config.env)}`;
  }
  const agent = row.config.agent as { name?: string } | null;
  const sandbox = row.config.sandbox === "none" ? " (sandbox none)" : "";
  return ` of ${agent?.name ?? "an agent"} on ${String(row.config.env)}${sandbox}`;
}

function headline(search: LoadedSearch): string {
  const { row, method, scenario, tree } = search;
  const budget = row.config.budget;
  const status = row.stopReason ? `${row.status}, ${row.stopReason}` : row.status;
  return (
    `search ${row.id}: ${method}${scenario ? ` on ${scenario.name} (simulated)` : agentLabel(row)}, ` +
    `seed ${String(row.config.seed)}; ${status}; ${tree.t}/${String(budget)} evaluations, ` +
    `${tree.size - 1} ${isTraining(search) ? "branches trained" : "agents made"}` +
    // Training branches use no model: there is no cost to show.
    (isTraining(search) ? "" : `, ${formatCost(workCost(tree.usage))}`)
  );
}

export function treeCommand(runId: string, options: SearchReadOptions, io: CliIo): number {
  const search = loadSearch(runId, options.db);
  const nodes = treeNodes(search);
  if (options.json) {
    io.stdout(
      `${JSON.stringify({
        schema: "clade.tree/1",
        run: runId,
        method: search.method,
        scenario: search.scenario?.name ?? null,
        status: search.row.status,
        stopReason: search.row.stopReason,
        epsilon: search.epsilon,
        t: search.tree.t,
        ...costFields(search.tree.usage),
        nodes: nodes.map(({ chosen: _, ...node }) => node),
        best: search.chosen,
      })}\n`,
    );
    return 0;
  }
  const lines = [
    headline(search),
    "own and clade counts are passes/fails; CMP = clade passes / clade evaluations" +
      (search.scenario ? "; true = hidden pass probability" : "") +
      (isTraining(search) ? "; each node is its parent trained further with its recipe" : ""),
  ];
  for (const id of preorder(search.tree)) {
    const n = nodes[id] as TreeNodeJson;
    const parts = [
      `node ${n.id}`,
      `own ${n.s}/${n.f}`,
      `clade ${n.cladeS}/${n.cladeF}`,
      `CMP ${n.cmp === null ? "n/a" : n.cmp.toFixed(3)}`,
      n.status === "pending" ? `pending (${n.pending} in flight)` : n.status,
    ];
    if (n.recipe !== undefined) parts.push(recipeText(n.recipe));
    else parts.push(formatCost(n));
    if (n.quality !== null) parts.push(`true ${n.quality.toFixed(3)}`);
    if (n.errors > 0) parts.push(`${n.errors} errored`);
    if (n.failedImprovements > 0) {
      parts.push(
        `${n.failedImprovements} failed improvement${n.failedImprovements === 1 ? "" : "s"}`,
      );
    }
    if (n.chosen) parts.push("<- final choice");
    lines.push(`${"  ".repeat(n.depth + 1)}${parts.join("  ")}`);
  }
  if (search.chosen === null) lines.push("final choice: none (no agent has a finished evaluation)");
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}

export function bestCommand(runId: string, options: BestOptions, io: CliIo): number {
  const search = loadSearch(runId, options.db);
  if (options.out !== undefined && search.scenario) {
    throw new UsageError(
      `--out writes a real agent's folder; search "${runId}" is simulated and has no agent sources`,
    );
  }
  const { tree, chosen, epsilon } = search;
  let written: string | null = null;
  if (options.out !== undefined) {
    if (chosen === null) {
      throw new UsageError(`search "${runId}" has no final choice yet: nothing to write`);
    }
    written = isTraining(search)
      ? writeChosenPolicy(search, chosen, options.out)
      : writeChosenAgent(search, chosen, options.out);
  }
  let best: Record<string, unknown> | null = null;
  if (chosen !== null) {
    const node = tree.node(chosen);
    best = {
      node: chosen,
      s: node.s,
      f: node.f,
      lowerQuantile: round(lowerQuantile(node, epsilon)),
      mean: round((1 + node.s) / (2 + node.s + node.f)),
      depth: node.depth,
      path: pathTo(tree, chosen),
      quality: trueQuality(search, chosen),
      ...(isTraining(search)
        ? { recipe: recipeOf(node.data), file: branchFileOf(node.data, trainingDir(search)) }
        : {}),
    };
  }
  if (options.json) {
    io.stdout(
      `${JSON.stringify({
        schema: "clade.best/1",
        run: runId,
        method: search.method,
        scenario: search.scenario?.name ?? null,
        epsilon,
        best,
        out: written,
      })}\n`,
    );
    return 0;
  }
  if (best === null) {
    io.stdout(`search ${runId}: no final choice (no agent has a finished evaluation)\n`);
    return 0;
  }
  const lines = [
    `search ${runId} (${search.method}): final choice node ${chosen}`,
    `  own ${String(best.s)} passed, ${String(best.f)} failed; ${epsilon} % quantile ` +
      `${(best.lowerQuantile as number).toFixed(3)}, mean ${(best.mean as number).toFixed(3)} ` +
      "(of Beta(1 + s, 1 + f))",
    `  path from the root: ${(best.path as NodeId[]).join(" > ")}`,
  ];
  if (best.quality !== null) {
    lines.push(`  true quality ${(best.quality as number).toFixed(3)} (simulated)`);
  }
  if (isTraining(search)) {
    lines.push(
      `  recipe: ${recipeText(best.recipe as Recipe | null)} (from its parent's weights)`,
      `  weights: ${String(best.file)}`,
    );
  }
  if (written !== null && isTraining(search)) {
    lines.push(
      `  written to ${written} (clade eval --agent policy:${written} ` +
        `--env ${String(search.row.config.env)} ...)`,
    );
  } else if (written !== null) {
    lines.push(`  written to ${written} (clade eval --agent ${written} ...)`);
  }
  io.stdout(`${lines.join("\n")}\n`);
  return 0;
}

/** Materialises the chosen agent (the root's files, then each diff down to it) into `out`. */
function writeChosenAgent(search: LoadedSearch, chosen: NodeId, out: string): string {
  const lineage = new AgentLineage(rootFilesOf(search.row.config));
  for (const event of search.events) lineage.observe(event);
  const target = resolve(out);
  try {
    writeAgentFolder(target, lineage.files(chosen));
  } catch (error) {
    throw new UsageError(`--out ${out}: ${(error as Error).message.split("\n")[0]}`);
  }
  return target;
}

/**
 * Copies the chosen training branch's policy file to `out`, atomically (a temporary file beside
 * it, renamed over it), so that `out` is either the whole file or untouched.
 */
function writeChosenPolicy(search: LoadedSearch, chosen: NodeId, out: string): string {
  const source = branchFileOf(search.tree.node(chosen).data, trainingDir(search));
  if (source === null || !existsSync(source)) {
    throw new UsageError(
      `--out ${out}: the weights of node ${chosen} (${source ?? "no file named"}) are missing`,
    );
  }
  const target = resolve(out);
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(source, temporary);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new UsageError(`--out ${out}: ${(error as Error).message.split("\n")[0]}`);
  }
  return target;
}
