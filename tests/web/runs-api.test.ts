/**
 * The runs API over a store written by real runs (the maze's reference and random agents) and by
 * RunStore (errors, episodes not run, parse errors, a damaged row, a run killed mid-way):
 * filters, sorting and keyset pages of the list, one run's totals, metrics and error groups,
 * per-task outcomes, the episode filters, the comparison's flipped tasks, bundle addresses, bad
 * requests, and the query plans that keep the first pages fast on 100,000 episodes.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { RunStore } from "../../src/store/run-store.js";
import {
  type CompareResponse,
  type EpisodePage,
  episodePageSql,
  type RunListResponse,
  type RunMetricsResponse,
  type RunResponse,
  runsApi,
  type TaskPage,
} from "../../src/web/api/runs.js";
import { apiPath } from "../../src/web/api-path.js";
import type { ViewServer } from "../../src/web/server.js";
import { markOwnerGone, mazeEpisode, storeMazeRuns } from "./fixtures/maze-runs.js";
import { api, scratchDir, startViewer } from "./support.js";

/**
 * ref and rand: real maze runs, tasks 0-5 × 2 samples (the reference passes all, random with 3
 * turns fails all). mixed: the same tasks, per task 0 pass/pass, 1 pass/fail, 2 fail/fail,
 * 3 error/pass, 4 fail/fail with parse errors, 5 not run; stopped by its budget. killed: left
 * running by a process that is gone. live: running, owned by this process.
 */
async function buildRunsStore(db: string): Promise<void> {
  await storeMazeRuns(db, "0-5");
  const store = RunStore.open(db);
  try {
    const envVersion = store.getRun("ref")?.envVersion as string;
    const header = (id: string, agent: string) => ({
      id,
      env: "maze",
      envVersion,
      agent,
      config: { tasks: "0-5", samples: 2, seed: 0, note: `fixture ${id}` },
    });
    store.startRun(header("mixed", "llm"));
    store.saveEpisodes("mixed", [
      mazeEpisode(0, 0, "success"),
      mazeEpisode(0, 1, "success"),
      mazeEpisode(1, 0, "success"),
      mazeEpisode(1, 1, "failure"),
      mazeEpisode(2, 0, "failure"),
      mazeEpisode(2, 1, "failure"),
      mazeEpisode(3, 0, "error", { error: "tool timeout after 30012 ms" }),
      mazeEpisode(3, 1, "success"),
      mazeEpisode(4, 0, "failure", { parseErrors: 2 }),
      mazeEpisode(4, 1, "failure", { parseErrors: 1 }),
    ]);
    store.markNotRun("mixed", [
      { taskIndex: 5, sampleIndex: 0, seed: 0 },
      { taskIndex: 5, sampleIndex: 1, seed: 1 },
    ]);
    store.setStatus("mixed", "interrupted", "budget");

    store.startRun(header("killed", "reference"));
    store.saveEpisodes("killed", [
      mazeEpisode(0, 0, "success"),
      mazeEpisode(1, 0, "error", { error: "tool timeout after 30007 ms" }),
      mazeEpisode(2, 0, "error", { error: "env crashed" }),
    ]);
    store.startRun(header("live", "random"));
    store.saveEpisodes("live", [mazeEpisode(0, 0, "failure")]);
  } finally {
    store.close();
  }
  // The killed run's owner: a process that has exited. A damaged row in the killed run.
  markOwnerGone(db, "killed");
  const raw = openDatabase(db);
  raw
    .prepare(
      `UPDATE trajectories SET steps = 'not json' WHERE episode_id =
         (SELECT id FROM episodes WHERE run_id = 'killed' AND task_index = 0)`,
    )
    .run();
  raw.close();
}

describe("runs API", () => {
  let scratch: ReturnType<typeof scratchDir>;
  let viewer: ViewServer;
  let db: string;

  beforeAll(async () => {
    scratch = scratchDir("runs-api");
    db = join(scratch.dir, "clade.db");
    await buildRunsStore(db);
    viewer = await startViewer(db);
  });

  afterAll(async () => {
    await viewer?.close();
    scratch?.remove();
  });

  const get = <T>(address: string) => api<T>(viewer, address);
  const ids = (body: RunListResponse) => body.items.map((r) => r.id);

  it("lists runs with their status, counts, success rate and interval", async () => {
    const { status, body } = await get<RunListResponse>("/runs");
    expect(status).toBe(200);
    // Newest first by default.
    expect([...ids(body)].sort()).toEqual(["killed", "live", "mixed", "rand", "ref"]);
    const created = body.items.map((r) => r.createdAt);
    expect(created).toEqual([...created].sort().reverse());
    const by = Object.fromEntries(body.items.map((r) => [r.id, r]));
    expect(by.killed?.status).toBe("killed (resumable)");
    expect(by.killed?.state).toBe("killed");
    expect(by.live?.status).toBe("running");
    expect(by.mixed?.status).toBe("interrupted (budget)");
    expect(by.ref?.status).toBe("complete");
    expect(by.mixed?.counts).toEqual({ episodes: 12, success: 4, failure: 5, error: 1, notRun: 2 });
    // Errors and not-run episodes are in no denominator: 4 / (4 + 5).
    expect(by.mixed?.successRate.value).toBeCloseTo(4 / 9);
    const ci = by.mixed?.successRate.interval;
    expect(ci?.low).toBeLessThanOrEqual(4 / 9);
    expect(ci?.high).toBeGreaterThanOrEqual(4 / 9);
    expect(by.ref?.successRate).toEqual({ value: 1, interval: { low: 1, high: 1 } });
    expect(by.rand?.successRate.value).toBe(0);
    expect(body.envs).toEqual(["maze"]);
    expect(body.agents).toEqual(["llm", "random", "reference"]);
  });

  it("the list's interval is the run page's (same bootstrap, same seed)", async () => {
    const list = await get<RunListResponse>("/runs?q=mixed");
    const metrics = await get<RunMetricsResponse>("/runs/mixed/metrics");
    expect(list.body.items[0]?.successRate.interval).toEqual(
      metrics.body.metrics.successRateInterval,
    );
  });

  it("filters by status, env, agent and text", async () => {
    expect(ids((await get<RunListResponse>("/runs?status=killed")).body)).toEqual(["killed"]);
    expect(ids((await get<RunListResponse>("/runs?status=running")).body)).toEqual(["live"]);
    expect(ids((await get<RunListResponse>("/runs?status=interrupted")).body)).toEqual(["mixed"]);
    expect(ids((await get<RunListResponse>("/runs?agent=reference")).body)).toEqual([
      "killed",
      "ref",
    ]);
    expect((await get<RunListResponse>("/runs?env=wordle")).body.items).toEqual([]);
    // Text search looks in the configuration too.
    expect(ids((await get<RunListResponse>("/runs?q=FIXTURE%20MIX")).body)).toEqual(["mixed"]);
    const { status, body } = await get<{ error: string }>("/runs?status=dead");
    expect(status).toBe(400);
    expect(body.error).toMatch(/^query\.status: expected one of running/);
  });

  it("sorts by success rate (runs with none finished last) and by episodes", async () => {
    const desc = await get<RunListResponse>("/runs?sort=success&dir=desc");
    // killed counts its (damaged) success here: the list does not read trajectories.
    expect(ids(desc.body)).toEqual(["ref", "killed", "mixed", "rand", "live"]);
    const asc = await get<RunListResponse>("/runs?sort=success&dir=asc");
    expect(ids(asc.body)).toEqual(["live", "rand", "mixed", "killed", "ref"]);
    const fewest = await get<RunListResponse>("/runs?sort=episodes&dir=asc");
    expect(fewest.body.items.map((r) => r.counts.episodes)).toEqual([1, 3, 12, 12, 12]);
  });

  it("pages the list with a keyset cursor", async () => {
    const first = await get<RunListResponse>("/runs?sort=success&limit=2");
    expect(first.body.items).toHaveLength(2);
    expect(first.body.matched).toBe(5);
    const seen = [...ids(first.body)];
    let cursor = first.body.nextCursor;
    while (cursor) {
      const next = await get<RunListResponse>(
        apiPath("/runs", { sort: "success", limit: 2, cursor }),
      );
      seen.push(...ids(next.body));
      cursor = next.body.nextCursor;
    }
    expect(seen).toEqual(ids((await get<RunListResponse>("/runs?sort=success")).body));
    expect((await get("/runs?cursor=nonsense")).status).toBe(400);
  });

  it("shows one run: header, totals, errors grouped apart from failures, cost", async () => {
    const { status, body } = await get<RunResponse>("/runs/mixed");
    expect(status).toBe(200);
    expect(body.run).toMatchObject({ id: "mixed", status: "interrupted (budget)", agent: "llm" });
    expect(body.run.config.note).toBe("fixture mixed");
    expect(body.totals).toEqual({
      episodes: 12,
      success: 4,
      failure: 5,
      error: 1,
      notRun: 2,
      withParseErrors: 2,
      parseErrors: 3,
    });
    expect(body.errors.total).toBe(1);
    expect(body.errors.groups[0]).toMatchObject({ pattern: "tool timeout after # ms", count: 1 });
    expect(body.cost.costUsd).toBeNull();
    // Two messages that differ only in a number are one group.
    const killed = await get<RunResponse>("/runs/killed");
    expect(killed.body.run.state).toBe("killed");
    expect(killed.body.errors.groups.map((g) => [g.pattern, g.count])).toEqual([
      ["env crashed", 1],
      ["tool timeout after # ms", 1],
    ]);
    expect((await get<{ error: string }>("/runs/nope")).status).toBe(404);
  });

  it("gives the metrics clade show computes, with definitions, and counts damaged rows", async () => {
    const { body } = await get<RunMetricsResponse>("/runs/mixed/metrics");
    expect(body.metrics.successRate).toBeCloseTo(4 / 9);
    expect(body.metrics.errors).toBe(1);
    const names = body.rows.map((r) => r.name);
    expect(names).toEqual(["success rate", "mean reward", "avg@2", "pass@1", "pass@2", "pass^2"]);
    for (const row of body.rows) expect(row.definition.length).toBeGreaterThan(20);
    expect(body.rows[0]?.definition).toMatch(/errored and not-run episodes are left out/);
    expect(body.notes.join(" ")).toMatch(/bootstrap over tasks/);
    expect(body.damaged).toBe(0);
    const killed = await get<RunMetricsResponse>("/runs/killed/metrics");
    expect(killed.body.damaged).toBe(1);
    // The damaged success is left out: nothing finished.
    expect(killed.body.metrics.finished).toBe(0);
  });

  it("lists per-task outcomes across samples, paged by task", async () => {
    const { body } = await get<TaskPage>("/runs/mixed/tasks?limit=4");
    expect(body.items.map((t) => [t.task, t.success, t.failure, t.error, t.notRun])).toEqual([
      [0, 2, 0, 0, 0],
      [1, 1, 1, 0, 0],
      [2, 0, 2, 0, 0],
      [3, 1, 0, 1, 0],
    ]);
    expect(body.items[3]?.cells.map((c) => c.outcome)).toEqual(["error", "success"]);
    expect(body.items[1]?.meanReward).toBeCloseTo(0.5);
    const next = await get<TaskPage>(
      apiPath("/runs/mixed/tasks", { limit: 4, cursor: body.nextCursor }),
    );
    expect(next.body.items.map((t) => t.task)).toEqual([4, 5]);
    expect(next.body.items[1]?.meanReward).toBeNull();
    expect(next.body.nextCursor).toBeNull();
  });

  it("filters episodes by outcome and parse errors, sorts, and pages by keyset", async () => {
    const outcomes = async (query: Record<string, string | number>) =>
      (await get<EpisodePage>(apiPath("/runs/mixed/episodes", query))).body.items.map(
        (e) => `${e.task}/${e.sample}:${e.outcome}`,
      );
    expect(await outcomes({ outcome: "failure" })).toEqual([
      "1/1:failure",
      "2/0:failure",
      "2/1:failure",
      "4/0:failure",
      "4/1:failure",
    ]);
    expect(await outcomes({ outcome: "error" })).toEqual(["3/0:error"]);
    expect(await outcomes({ outcome: "success" })).toHaveLength(4);
    expect(await outcomes({ outcome: "not_run" })).toEqual(["5/0:not_run", "5/1:not_run"]);
    expect(await outcomes({ outcome: "parse_errors" })).toEqual(["4/0:failure", "4/1:failure"]);
    expect(await outcomes({ task: 3 })).toEqual(["3/0:error", "3/1:success"]);
    // Longest first: task 4's episodes took 500 ms and more.
    expect((await outcomes({ sort: "duration", dir: "desc", outcome: "failure" }))[0]).toBe(
      "4/1:failure",
    );
    const error = (await get<EpisodePage>("/runs/mixed/episodes?outcome=error")).body.items[0];
    expect(error).toMatchObject({ error: "tool timeout after 30012 ms", endReason: "agent_error" });

    for (const sort of ["task", "reward", "duration", "turns"]) {
      for (const dir of ["asc", "desc"]) {
        const all = (await get<EpisodePage>(apiPath("/runs/mixed/episodes", { sort, dir }))).body
          .items;
        const paged: number[] = [];
        let cursor: string | null | undefined;
        do {
          const page = await get<EpisodePage>(
            apiPath("/runs/mixed/episodes", { sort, dir, limit: 5, cursor }),
          );
          paged.push(...page.body.items.map((e) => e.id));
          cursor = page.body.nextCursor;
        } while (cursor);
        expect(paged).toEqual(all.map((e) => e.id));
        expect(paged).toHaveLength(12);
      }
    }
    expect((await get("/runs/mixed/episodes?outcome=won")).status).toBe(400);
    expect((await get("/runs/mixed/episodes?limit=501")).status).toBe(400);
    expect((await get("/runs/nope/episodes")).status).toBe(404);
  });

  it("compares two runs by task: B − A and the flipped tasks", async () => {
    const { status, body } = await get<CompareResponse>("/compare?a=ref&b=mixed");
    expect(status).toBe(200);
    expect(body.a.run.id).toBe("ref");
    const success = body.metrics.find((m) => m.metric === "success rate");
    expect(success?.a).toBe(1);
    // Over the shared tasks 0-4: 4 of 9 finished passed in B.
    expect(success?.difference).toBeCloseTo(4 / 9 - 1);
    expect(body.sharedTasks).toBe(5);
    expect(body.onlyA).toBe(1);
    const row = (task: number) => body.items.find((r) => r.task === task);
    expect(body.items.map((r) => r.task)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(row(0)).toMatchObject({ change: "same", flipped: false });
    expect(row(1)).toMatchObject({ change: "lost", flipped: false });
    expect(row(2)).toMatchObject({ change: "lost", flipped: true });
    expect(row(3)?.b).toEqual({ successes: 1, finished: 1, errors: 1, rate: 1 });
    expect(row(5)).toMatchObject({ change: "onlyA", b: null });
    expect(body.flipped).toBe(2);
    expect(body.definitions.flipped).toMatch(/passed in one run and none in the other/);

    const flipped = await get<CompareResponse>("/compare?a=ref&b=mixed&only=flipped");
    expect(flipped.body.items.map((r) => r.task)).toEqual([2, 4]);
    const paged = await get<CompareResponse>("/compare?a=ref&b=mixed&limit=4");
    const rest = await get<CompareResponse>(
      apiPath("/compare", { a: "ref", b: "mixed", limit: 4, cursor: paged.body.nextCursor }),
    );
    expect(rest.body.items.map((r) => r.task)).toEqual([4, 5]);
    expect((await get("/compare?a=ref&b=nope")).status).toBe(404);
    expect((await get("/compare?a=ref")).status).toBe(400);
  });

  it("bundles each chosen run's pages and the list at its default query", () => {
    const raw = openDatabase(db, { readonly: true });
    try {
      const addresses = runsApi.bundle?.(raw, new Set(["mixed", "ref"])) ?? [];
      expect(addresses).toContain("/runs");
      expect(addresses).toContain("/runs/mixed");
      expect(addresses).toContain("/runs/mixed/metrics");
      expect(addresses).toContain("/runs/mixed/tasks");
      expect(addresses).toContain("/runs/mixed/episodes");
      expect(addresses).toContain("/runs/mixed/episodes?outcome=parse_errors");
      expect(addresses).toContain("/compare?a=ref&b=mixed&only=flipped");
      expect(addresses.some((a) => a.includes("rand"))).toBe(false);
      expect(runsApi.bundle?.(raw, new Set(["no-such"]))).toEqual([]);
    } finally {
      raw.close();
    }
  });

  it("answers each bundled address", async () => {
    const raw = openDatabase(db, { readonly: true });
    const addresses = runsApi.bundle?.(raw, "all") ?? [];
    raw.close();
    for (const address of addresses) {
      expect((await get(address)).status, address).toBe(200);
    }
  });

  it("reads first pages from the indexes, never sorting the whole run", () => {
    const raw = openDatabase(db, { readonly: true });
    try {
      const plan = (query: Parameters<typeof episodePageSql>[0]) => {
        const { sql, params } = episodePageSql(query, undefined);
        return (
          raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all("mixed", ...params, 51) as {
            detail: string;
          }[]
        )
          .map((r) => r.detail)
          .join("; ");
      };
      const base = { sort: "task", dir: "asc", limit: 50 } as const;
      expect(plan(base)).toMatch(/USING INDEX sqlite_autoindex_episodes_1 \(run_id=\?\)/);
      expect(plan(base)).not.toMatch(/TEMP B-TREE/);
      const failuresByReward = plan({ ...base, sort: "reward", dir: "desc", outcome: "failure" });
      expect(failuresByReward).toMatch(/episodes_by_outcome \(run_id=\? AND outcome=\?\)/);
      expect(failuresByReward).not.toMatch(/TEMP B-TREE/);
    } finally {
      raw.close();
    }
  });
});
