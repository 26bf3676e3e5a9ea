/**
 * `clade evolve --policy FILE` as a user runs it: a tiny policy, a search over its training
 * branches stored in the event log with each node's weights under the search's folder, read back
 * by `tree` (recipes) and `best --out` (a policy file `clade eval --agent policy:FILE` plays).
 * The same command resumes: a finished search is read back with no new work, and a search whose
 * log was cut where a kill would cut it goes on from there to the log an uninterrupted search
 * writes. A policy for another environment, or another configuration under the same id, is
 * refused in one line.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILTIN_ENV_INFOS } from "../../src/env/infos.js";
import { createPolicyModel, savePolicy } from "../../src/improve/rl/policy/index.js";
import { type SearchEvent, SearchStore } from "../../src/store/search-log.js";
import { runCli } from "../fixtures/cli.js";

let dir: string;
let gridworld: string;
let maze: string;

/** A tiny policy for an environment, as `clade train` would write one. */
async function tinyPolicy(env: string): Promise<string> {
  const info = BUILTIN_ENV_INFOS.find((i) => i.name === env);
  const model = createPolicyModel({
    ...{ env, envVersion: info?.version ?? "", seed: 0 },
    ...{ features: { dim: 1024 }, hidden: 16, valueHidden: 4 },
  });
  const file = join(dir, `${env}.safetensors`);
  await savePolicy(file, model);
  return file;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-evolve-policy-"));
  gridworld = await tinyPolicy("gridworld");
  maze = await tinyPolicy("maze");
});

afterAll(() => {
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
});

const searchArgs = (runId: string, db: string, budget = 8, policy = gridworld) => [
  ...["evolve", "--policy", policy, "--env", "gridworld", "--tasks", "0-3"],
  ...["--budget", String(budget), "--workers", "1", "--run-id", runId, "--db", db],
];

function eventsOf(db: string, runId: string): SearchEvent[] {
  const store = SearchStore.open(db, { readonly: true });
  try {
    return store.events(runId);
  } finally {
    store.close();
  }
}

/** The events without their timings (the only part of a log that differs between runs). */
const untimed = (events: readonly SearchEvent[]) =>
  events.map((event) => {
    const { durationMs: _, ...rest } = event as SearchEvent & { durationMs?: number };
    return rest;
  });

describe("clade evolve --policy", () => {
  const db = () => join(dir, "a", "clade.db");

  it("stores a search over training branches; tree, best --out and eval read it", async () => {
    const result = await runCli(...searchArgs("p1", db()), "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    const searchDir = join(dir, "a", "evolve", "p1");
    expect(summary).toMatchObject({
      schema: "clade.evolve-policy/1",
      runId: "p1",
      env: "gridworld",
      tasks: "0-3",
      policy: gridworld,
      dir: searchDir,
      budget: 8,
      resumed: false,
      stopReason: "budget",
      t: 8,
      exitCode: 0,
    });
    expect(summary.nodes).toBeGreaterThan(0);
    expect(summary.root.s + summary.root.f).toBe(4);
    expect(summary.chosen).not.toBeNull();

    // Every node's weights are in the search's folder, its recipe in its record.
    const events = eventsOf(db(), "p1");
    const made = events.filter((e) => e.type === "improvement_finished");
    expect(made).toHaveLength(summary.nodes);
    for (const event of made) {
      const data = event.data as { file: string; recipe: { algo: string; lr: number } };
      expect(existsSync(join(searchDir, data.file))).toBe(true);
      expect(data.recipe.lr).toEqual(expect.any(Number));
    }
    expect(existsSync(join(searchDir, "root.safetensors"))).toBe(true);

    // The same command again: read back, nothing new done; the text names the final choice.
    const again = await runCli(...searchArgs("p1", db()), "--quiet");
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /^search p1: hgm over training branches of gridworld\.safetensors/,
    );
    expect(again.stdout).toContain("(resumed; 0 in flight done again)");
    expect(again.stdout).toContain(`final choice: node ${summary.chosen.node} `);
    expect(again.stdout).toMatch(/^ {2}0 +the starting policy +\d\/4 /m);
    expect(eventsOf(db(), "p1")).toHaveLength(events.length);

    // tree: every node with its recipe.
    const tree = await runCli("tree", "p1", "--db", db());
    expect(tree.code).toBe(0);
    const lines = tree.stdout.split("\n").filter((line) => /^\s+node \d+ /.test(line));
    expect(lines).toHaveLength(summary.nodes + 1);
    expect(lines[0]).toContain("the starting policy");
    for (const line of lines.slice(1)) {
      expect(line).toMatch(/(grpo|rloo|reinforce\+\+|ppo) lr [\d.]+, \S+ x \d steps/);
    }
    expect(tree.stdout).not.toContain("$");
    const treeJson = JSON.parse((await runCli("tree", "p1", "--db", db(), "--json")).stdout);
    expect(treeJson.best).toBe(summary.chosen.node);
    expect(treeJson.nodes[0].recipe).toBeNull();

    // best --out: the chosen node's weights, which clade eval plays.
    const out = join(dir, "best", "chosen.safetensors");
    const best = await runCli("best", "p1", "--db", db(), "--out", out, "--json");
    expect(best.code).toBe(0);
    expect(JSON.parse(best.stdout)).toMatchObject({
      out,
      best: { node: summary.chosen.node, file: summary.chosen.file },
    });
    expect(readFileSync(out)).toEqual(readFileSync(summary.chosen.file));
    const evaluated = await runCli(
      ...["eval", "--agent", `policy:${out}`, "--env", "gridworld", "--tasks", "0-1"],
      ...["--run-id", "chosen", "--db", db(), "--json"],
    );
    expect(evaluated.code).toBe(0);
    expect(JSON.parse(evaluated.stdout).metrics).toMatchObject({ finished: 2 });
  }, 120_000);

  it("a search cut where a kill cuts it resumes with the same command to the same log", async () => {
    // The log of the search above, up to an improvement in flight, as a killed run leaves it:
    // its events, and the weights of the nodes they made.
    const full = eventsOf(db(), "p1");
    const started = full.flatMap((e, i) => (e.type === "improvement_started" ? [i] : []));
    const cut = (started[1] ?? started[0]) as number;
    const prefix = full.slice(0, cut + 1);
    const source = SearchStore.open(db(), { readonly: true });
    const config = source.getSearch("p1")?.config ?? {};
    source.close();
    const db2 = join(dir, "b", "clade.db");
    const dir2 = join(dir, "b", "evolve", "p1");
    mkdirSync(dir2, { recursive: true });
    const store = SearchStore.open(db2);
    const { log } = store.beginSearch("p1", { ...config, dir: dir2 });
    for (const event of prefix) log.append(event);
    store.close();
    const files = ["root.safetensors"];
    for (const event of prefix) {
      if (event.type === "improvement_finished") files.push((event.data as { file: string }).file);
    }
    for (const file of files) copyFileSync(join(config.dir as string, file), join(dir2, file));

    const resumed = await runCli(...searchArgs("p1", db2), "--json");
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      resumed: true,
      redispatched: 1,
      t: 8,
      stopReason: "budget",
    });
    // One worker: the resumed search writes exactly the log of the uninterrupted one.
    expect(untimed(eventsOf(db2, "p1"))).toEqual(untimed(full));
  }, 120_000);

  it("refuses a policy for another environment in one line, writing nothing", async () => {
    const db3 = join(dir, "c", "clade.db");
    const result = await runCli(...searchArgs("m1", db3, 8, maze));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^clade: error: policy file .*maze\.safetensors was trained on maze v[\d.]+, but --env is gridworld v[\d.]+: .*\n$/,
    );
    expect(existsSync(join(dir, "c"))).toBe(false);
  });

  it("refuses another configuration under the same id, and a new search in a used folder", async () => {
    const other = await runCli(...searchArgs("p1", db(), 9));
    expect(other.code).toBe(2);
    expect(other.stdout).toBe("");
    expect(other.stderr).toBe(
      'clade: error: search "p1" already exists with a different configuration (budget); choose another --run-id\n',
    );
    const used = await runCli(
      ...searchArgs("p9", db()),
      ...["--dir", join(dir, "a", "evolve", "p1")],
    );
    expect(used.code).toBe(2);
    expect(used.stderr).toMatch(/^clade: error: --dir .* already holds files .*\n$/);
    const store = SearchStore.open(db(), { readonly: true });
    expect(store.getSearch("p9")).toBeUndefined();
    store.close();
    // Into a store that does not exist yet: the refusal creates none.
    const fresh = join(dir, "fresh", "clade.db");
    const refused = await runCli(
      ...searchArgs("p9", fresh),
      ...["--dir", join(dir, "a", "evolve", "p1")],
    );
    expect(refused.code).toBe(2);
    expect(existsSync(fresh)).toBe(false);
  });
});
