/**
 * The Search page's API on a store written by clade's own writers: two simulated searches (HGM
 * and DGM, through `clade evolve --simulate`) and a search over an agent folder written event by
 * event through SearchStore's log, with its nodes' eval runs in the same file. The tree must be
 * the one `clade tree --json` prints (the same fold), the final choice `clade best`'s, and a
 * node must give back its diff, diagnosis, failed improvements and evaluations.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPolicy } from "../../src/improve/search/policies/index.js";
import { RunStore } from "../../src/store/run-store.js";
import { SearchStore } from "../../src/store/search-log.js";
import type { NodeResponse, SearchesResponse, SearchResponse } from "../../src/web/api/searches.js";
import { searchesApi } from "../../src/web/api/searches.js";
import type { ViewServer } from "../../src/web/server.js";
import { runCli } from "../fixtures/cli.js";
import { type AgentSearchScript, storeAgentSearch } from "./fixtures/agent-search.js";
import { api, scratchDir, startViewer } from "./support.js";

const PATCH = `--- a/src/prompts.ts
+++ b/src/prompts.ts
@@ -1,3 +1,3 @@
 export const SYSTEM_PROMPT =
-  "You play a text game. think about what to do";
+  "You play a text game. think about what to do (PLAN-EACH-STEP)";
 export const MAX_TURNS = 20;
`;

const PLAN = {
  log_summarization: "The agent turned left at every step and never finished the task.",
  potential_improvements: ["Ask the model to plan each step anew"],
  improvement_proposal: "Tell the model to plan each step from the latest observation.",
  implementation_suggestion: "Add an instruction to SYSTEM_PROMPT in src/prompts.ts.",
  problem_description: "The system prompt does not ask the model to plan each step.",
};

const TYPECHECK_REASON =
  "typecheck failed: src/agent.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.";

const usage = (costUsd: number) => ({ inputTokens: 100, outputTokens: 50, costUsd });

/**
 * The agent search: the root fails two tasks and errors on the third; one improvement fails its
 * typecheck, the next makes node 1 (a diff and a plan), which passes two of three; an
 * improvement of node 1 is in flight.
 */
const AGENT_SEARCH: AgentSearchScript = {
  root: ["fail", "fail", "error"],
  failed: { reason: TYPECHECK_REASON, usage: usage(0.2), durationMs: 30_000 },
  made: {
    data: {
      patch: PATCH,
      plan: PLAN,
      target: { kind: "task", task: 0 },
      summary: "Added a plan-each-step instruction to the system prompt.",
      stopReason: "done",
      steps: 4,
    },
    usage: usage(0.3),
    durationMs: 45_000,
  },
  child: ["pass", "pass", "fail"],
};

/** Two simulated searches (HGM and DGM on `trap`) stored by `clade evolve`, and the agent one. */
async function storeSearches(db: string): Promise<void> {
  for (const [method, id] of [
    ["hgm", "hgm1"],
    ["dgm", "dgm1"],
  ] as const) {
    const result = await runCli(
      ...["evolve", "--simulate", "trap", "--method", method, "--budget", "60"],
      ...["--workers", "2", "--run-id", id, "--db", db, "--json"],
    );
    expect(result.code, result.stderr).toBe(0);
  }
  storeAgentSearch(db, AGENT_SEARCH);
}

interface CliTree {
  best: number | null;
  nodes: {
    id: number;
    parent: number | null;
    s: number;
    f: number;
    cladeS: number;
    cladeF: number;
    cmp: number | null;
    costUsd: number | null;
    quality: number | null;
  }[];
}

let scratch: ReturnType<typeof scratchDir>;
let db: string;
let viewer: ViewServer;

beforeAll(async () => {
  scratch = scratchDir("searches-api");
  db = join(scratch.dir, "clade.db");
  await storeSearches(db);
  viewer = await startViewer(db);
});

afterAll(async () => {
  await viewer?.close();
  scratch?.remove();
});

describe("GET /searches", () => {
  it("lists every search, newest first, with its method, kind, counts and final choice", async () => {
    const { status, body } = await api<SearchesResponse>(viewer, "/searches");
    expect(status).toBe(200);
    expect(body.nextCursor).toBeNull();
    expect(body.items.map((s) => s.id)).toEqual(["agent1", "dgm1", "hgm1"]);
    const [agent, dgm, hgm] = body.items;
    expect(agent).toMatchObject({
      method: "hgm",
      kind: "agent",
      subject: "demo on gridworld",
      status: "running",
      nodes: 1,
      t: 3,
      budget: 10,
      evaluations: { passes: 2, fails: 3, errors: 1, pending: 0 },
      finalChoice: 1,
      bestMean: 0.6667,
      costUsd: 0.56,
    });
    expect(dgm).toMatchObject({ method: "dgm", kind: "simulation", subject: "trap (simulated)" });
    expect(hgm).toMatchObject({ method: "hgm", kind: "simulation", status: "complete" });
    expect(hgm?.t).toBe(60);
  });

  it("pages with a cursor, and answers a bad cursor or limit with one line", async () => {
    const first = await api<SearchesResponse>(viewer, "/searches?limit=2");
    expect(first.body.items.map((s) => s.id)).toEqual(["agent1", "dgm1"]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await api<SearchesResponse>(
      viewer,
      `/searches?limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(second.body.items.map((s) => s.id)).toEqual(["hgm1"]);
    expect(second.body.nextCursor).toBeNull();
    const bad = await api<{ error: string }>(viewer, "/searches?cursor=nope");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/cursor/);
    const tooMany = await api<{ error: string }>(viewer, "/searches?limit=100000");
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatch(/^query\.limit/);
  });
});

describe("GET /searches/:id", () => {
  it("is the fold `clade tree` prints, with the final choice `clade best` makes", async () => {
    const { status, body } = await api<SearchResponse>(viewer, "/searches/hgm1");
    expect(status).toBe(200);
    const cli = JSON.parse((await runCli("tree", "hgm1", "--db", db, "--json")).stdout) as CliTree;
    expect(body.nodes).toHaveLength(cli.nodes.length);
    expect(body.nodes.length).toBe(body.summary.nodes + 1);
    for (const [i, node] of body.nodes.entries()) {
      const theirs = cli.nodes[i];
      expect(node).toMatchObject({
        id: theirs?.id,
        parent: theirs?.parent,
        s: theirs?.s,
        f: theirs?.f,
        cladeS: theirs?.cladeS,
        cladeF: theirs?.cladeF,
        cmp: theirs?.cmp,
        quality: theirs?.quality,
      });
      expect(node.costUsd).toBeCloseTo(theirs?.costUsd ?? 0, 6);
      expect(node.chosen).toBe(node.id === cli.best);
      for (const child of node.children) expect(body.nodes[child]?.parent).toBe(node.id);
    }
    const best = JSON.parse((await runCli("best", "hgm1", "--db", db, "--json")).stdout);
    expect(body.finalChoice).toMatchObject({
      node: best.best.node,
      epsilon: 1,
      path: best.best.path,
    });
    expect(body.finalChoice?.lowerQuantile).toBeCloseTo(best.best.lowerQuantile, 4);
    expect(body.finalChoice?.rule).toMatch(/quantile of Beta\(1 \+ s, 1 \+ f\)/);
    // Failed improvements: as many as the log's, each on an existing parent.
    const events = SearchStore.open(db, { readonly: true });
    const failedInLog = events.events("hgm1").filter((e) => e.type === "improvement_failed");
    events.close();
    expect(body.failed).toHaveLength(failedInLog.length);
    expect(body.totals.improvements.failed).toBe(failedInLog.length);
  });

  it("shows an agent search's statuses, failed improvement and configuration without sources", async () => {
    const { body } = await api<SearchResponse>(viewer, "/searches/agent1");
    expect(body.nodes.map((n) => [n.id, n.status, n.s, n.f, n.cmp, n.label])).toEqual([
      [0, "evaluated", 0, 2, 0.4, null],
      [1, "expanding", 2, 1, 0.6667, "task 0"],
    ]);
    expect(body.nodes[0]).toMatchObject({ errors: 1, failedImprovements: 1, cladeS: 2, cladeF: 3 });
    expect(body.failed).toEqual([
      { work: 3, parent: 0, reason: TYPECHECK_REASON, durationMs: 30_000, costUsd: 0.2 },
    ]);
    expect(body.finalChoice?.node).toBe(1);
    expect(body.finalChoice?.path).toEqual([0, 1]);
    expect((body.config.agent as { files: unknown }).files).toEqual(["src/prompts.ts"]);
    expect(body.totals.improvements).toEqual({ started: 3, finished: 1, failed: 1, pending: 1 });
  });

  it("answers an unknown search with 404 and one line", async () => {
    const { status, body } = await api<{ error: string }>(viewer, "/searches/nope");
    expect(status).toBe(404);
    expect(body).toEqual({ error: 'no search "nope" in this store' });
  });
});

describe("GET /searches/:id/nodes/:node", () => {
  it("gives a node's diff, diagnosis and evaluations with their episodes", async () => {
    const { status, body } = await api<NodeResponse>(viewer, "/searches/agent1/nodes/1");
    expect(status).toBe(200);
    expect(body.patch).toBe(PATCH);
    expect(body.diagnosis).toEqual(PLAN);
    expect(body.target).toEqual({ kind: "task", task: 0 });
    expect(body.summary).toMatch(/plan-each-step/);
    expect(body.made).toMatchObject({ work: 4, parent: 0, costUsd: 0.3, durationMs: 45_000 });
    expect(body.path).toEqual([0, 1]);
    expect(body.evalRun).toBe("agent1.n1");
    expect(body.evaluations.map((e) => [e.task, e.outcome])).toEqual([
      [0, "pass"],
      [1, "pass"],
      [2, "fail"],
    ]);
    const runs = RunStore.open(db, { readonly: true });
    const episodes = runs.episodes("agent1.n1");
    runs.close();
    for (const evaluation of body.evaluations) {
      expect(evaluation.episodeId).toBe(episodes.find((e) => e.taskIndex === evaluation.task)?.id);
    }
  });

  it("gives the root's failed improvement with its reason, and its errored evaluation", async () => {
    const { body } = await api<NodeResponse>(viewer, "/searches/agent1/nodes/0");
    expect(body.patch).toBeNull();
    expect(body.diagnosis).toBeNull();
    expect(body.failedImprovements.map((f) => f.reason)).toEqual([TYPECHECK_REASON]);
    expect(body.evaluations.find((e) => e.task === 2)).toMatchObject({
      outcome: "error",
      reason: "timeout: the episode took too long",
    });
  });

  it("gives a simulated node's hidden state as its record", async () => {
    const { body } = await api<NodeResponse>(viewer, "/searches/hgm1/nodes/1");
    expect(body.record).toMatchObject({ type: expect.any(String), p: expect.any(Number) });
    expect(body.evalRun).toBeNull();
    const finished = body.evaluations.filter((e) => e.outcome === "pass" || e.outcome === "fail");
    expect(finished.length).toBe(body.node.s + body.node.f);
  });

  it("answers a node that is not there, or not a number, in one line", async () => {
    const missing = await api<{ error: string }>(viewer, "/searches/agent1/nodes/7");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('search "agent1" has no node 7 (it has 2)');
    const bad = await api<{ error: string }>(viewer, "/searches/agent1/nodes/x");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^param\.node/);
  });
});

describe("a search over training branches", () => {
  it("labels each node with its recipe and names the starting policy", async () => {
    const searches = SearchStore.open(db);
    const { log } = searches.beginSearch("branches1", {
      kind: "policy",
      method: "greedy",
      hyperparameters: createPolicy("greedy").hyperparameters,
      seed: 0,
      budget: 4,
      workers: 1,
      env: "gridworld",
      tasks: "0-1",
      policy: { path: "/policies/g1.safetensors", sha256: "0" },
      dir: "/evolve/branches1",
    });
    const free = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
    const recipe = { algo: "grpo", lr: 0.003, schedule: "fixed:8", steps: 2, seed: 7 };
    log.append({ type: "evaluation_dispatched", work: 0, node: 0, task: 0, attempt: 1 });
    log.append({
      type: "evaluation_finished",
      work: 0,
      node: 0,
      task: 0,
      outcome: "pass",
      reason: null,
      usage: free,
      durationMs: 3,
    });
    log.append({ type: "improvement_started", work: 1, parent: 0 });
    log.append({
      type: "improvement_finished",
      work: 1,
      parent: 0,
      node: 1,
      data: { file: "work-1.safetensors", recipe },
      usage: free,
      durationMs: 9,
    });
    searches.close();
    const { body } = await api<SearchResponse>(viewer, "/searches/branches1");
    expect(body.summary).toMatchObject({
      kind: "policy",
      subject: "training branches of g1.safetensors on gridworld",
    });
    expect(body.nodes.map((n) => n.label)).toEqual([
      "the starting policy",
      "grpo lr 0.003, fixed:8 x 2 steps",
    ]);
    expect(body.finalChoice?.node).toBe(0);
    const node = await api<NodeResponse>(viewer, "/searches/branches1/nodes/1");
    expect(node.body.record).toEqual({ file: "work-1.safetensors", recipe });
    expect(node.body.patch).toBeNull();
  });
});

describe("a damaged log", () => {
  it("leaves the list readable, and answers the search itself with 409 and one line", async () => {
    const searches = SearchStore.open(db);
    searches.beginSearch("broken1", { kind: "agent", method: "hgm", tasks: "0-1" });
    // An improvement that finishes without having started: the fold refuses it.
    searches.db
      .prepare(
        `INSERT INTO search_events (search_id, seq, type, work, parent, node, input_tokens,
           output_tokens, cost_usd, duration_ms, data, unpriced, at)
         VALUES ('broken1', 0, 'improvement_finished', 0, 0, 1, 0, 0, 0, 1, '{}', 0, 'now')`,
      )
      .run();
    try {
      const list = await api<SearchesResponse>(viewer, "/searches");
      expect(list.status).toBe(200);
      expect(list.body.items.find((s) => s.id === "broken1")).toMatchObject({
        error: 'search "broken1": work 0 finished but was not a dispatched expand',
        nodes: 0,
      });
      expect(list.body.items.find((s) => s.id === "hgm1")?.error).toBeUndefined();
      const one = await api<{ error: string }>(viewer, "/searches/broken1");
      expect(one.status).toBe(409);
      expect(one.body).toEqual({
        error: 'search "broken1": work 0 finished but was not a dispatched expand',
      });
    } finally {
      searches.db.prepare("DELETE FROM searches WHERE id = 'broken1'").run();
      searches.close();
    }
  });
});

describe("bundle", () => {
  it("names the list, the chosen search and each of its nodes, and every address answers", async () => {
    const store = RunStore.open(db, { readonly: true });
    const chosen = searchesApi.bundle?.(store.db, new Set(["agent1", "some-run"])) ?? [];
    const all = searchesApi.bundle?.(store.db, "all") ?? [];
    store.close();
    expect(chosen).toEqual([
      "/searches",
      "/searches/agent1",
      "/searches/agent1/nodes/0",
      "/searches/agent1/nodes/1",
    ]);
    const { body } = await api<SearchResponse>(viewer, "/searches/hgm1");
    expect(all.filter((a) => a.startsWith("/searches/hgm1/nodes/"))).toHaveLength(
      body.nodes.length,
    );
    for (const address of all) expect((await api(viewer, address)).status, address).toBe(200);
  });
});
