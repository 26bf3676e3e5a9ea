/**
 * clade view on a run of 100,000 episodes (issue 15): the API's p99 for its paginated queries
 * (target < 50 ms) and the run page's first render in headless Chromium (target < 1 s). Each
 * figure's baseline is the same SQL in SQLite alone: the statements the handler ran, captured
 * with their parameters and run again on their own, on the same connection and warm cache.
 *
 * The store: one run of 1,000 tasks × 100 samples (8-step trajectories, outcomes mixed with
 * errors and parse errors), a second run of the same tasks for the comparison, and 20 small
 * runs, written with RunStore as `clade eval` writes them.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Statement } from "better-sqlite3";
import { chromium } from "playwright-core";
import { type EpisodeRecord, RunStore } from "../dist/index.js";
import { Background } from "../dist/web/background.js";
import { askApi, askJson, createViewApp } from "../dist/web/server.js";
import { StoreView } from "../dist/web/store-view.js";

process.setSourceMapsEnabled(false);

const TASKS = 1_000;
const SAMPLES = 100;
const SMALL_RUNS = 20;
const REQUESTS = 200;
const RENDERS = 5;
const TARGET_API_P99_MS = 50;
const TARGET_FIRST_RENDER_MS = 1_000;
const CHROMIUM = "/usr/bin/chromium";

const line = (figure: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(figure)}\n`);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

function episode(task: number, sample: number, run: number): EpisodeRecord {
  const roll = (task * 7 + sample * 13 + run * 3) % 20;
  const outcome: EpisodeRecord["outcome"] =
    roll === 0 ? "error" : roll % 2 === 0 ? "success" : "failure";
  const steps = Array.from({ length: 8 }, (_, turn) => ({
    turn,
    action: `go ${turn % 4}`,
    message: `I will go ${turn % 4}.`,
    observation: { text: `You are in room ${task}.${turn}. ${"A long corridor. ".repeat(8)}` },
    reward: turn === 7 && outcome === "success" ? 1 : 0,
    done: turn === 7,
    elapsedMs: 1.5,
    info: {},
  }));
  return {
    taskIndex: task,
    sampleIndex: sample,
    seed: sample,
    outcome,
    reward: outcome === "success" ? 1 : 0,
    endReason: outcome === "error" ? "agent_error" : "done",
    ...(outcome === "error" ? { error: `agent error: timeout after ${task % 5} retries` } : {}),
    instruction: "Find the exit.",
    initialObservation: { text: `You are in room ${task}.` },
    steps: outcome === "error" ? steps.slice(0, 3) : steps,
    parseErrors: roll === 3 ? 1 : 0,
    startedAt: new Date(Date.UTC(2026, 10, 1, 0, 0, task)).toISOString(),
    durationMs: 100 + roll,
  };
}

function buildStore(path: string): number {
  const started = performance.now();
  const store = RunStore.open(path);
  const header = (id: string) => ({
    id,
    env: "maze",
    envVersion: "1",
    agent: "bench",
    config: { id },
  });
  for (const [n, id] of ["big", "big-b"].entries()) {
    store.startRun(header(id));
    for (let task = 0; task < TASKS; task += 10) {
      const batch: EpisodeRecord[] = [];
      for (let t = task; t < task + 10; t++) {
        for (let s = 0; s < SAMPLES; s++) batch.push(episode(t, s, n));
      }
      store.saveEpisodes(id, batch);
    }
    store.setStatus(id, "complete");
  }
  for (let i = 0; i < SMALL_RUNS; i++) {
    const id = `small-${i}`;
    store.startRun(header(id));
    store.saveEpisodes(
      id,
      Array.from({ length: 50 }, (_, t) => episode(t, 0, i)),
    );
    store.setStatus(id, "complete");
  }
  store.close();
  return performance.now() - started;
}

/** The statements a request ran, with their parameters, to time them again on their own. */
interface Captured {
  sql: string;
  method: "all" | "get" | "run" | "iterate";
  args: unknown[];
  pluck: boolean;
  raw: boolean;
}

function captureStatements(db: StoreView["db"] & object, log: Captured[]): void {
  const prepare = db.prepare.bind(db);
  (db as { prepare: unknown }).prepare = (sql: string) => {
    const statement = prepare(sql) as Statement & { __mode?: { pluck: boolean; raw: boolean } };
    const mode = { pluck: false, raw: false };
    const pluck = statement.pluck.bind(statement);
    const raw = statement.raw.bind(statement);
    statement.pluck = (on = true) => {
      mode.pluck = on;
      return pluck(on);
    };
    statement.raw = (on = true) => {
      mode.raw = on;
      return raw(on);
    };
    for (const method of ["all", "get", "run", "iterate"] as const) {
      const call = (statement[method] as (...a: unknown[]) => unknown).bind(statement);
      (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        log.push({ sql, method, args, pluck: mode.pluck, raw: mode.raw });
        return call(...args);
      };
    }
    return statement;
  };
}

/**
 * The viewer's app over the store at `path`, its heavy work in this thread (so those statements
 * are captured for the baseline too), and the log every statement it runs is added to.
 */
function capturingApp(path: string) {
  const view = new StoreView(path, { readonly: true });
  const inline = new Background(null);
  view.background = () => inline;
  const db = view.db as NonNullable<StoreView["db"]>;
  const log: Captured[] = [];
  captureStatements(db, log);
  const app = createViewApp({ view, token: "bench", loopback: true });
  return { view, db, log, app };
}

function replay(db: NonNullable<StoreView["db"]>, captured: readonly Captured[]): number {
  const started = performance.now();
  for (const c of captured) {
    let statement = db.prepare(c.sql);
    if (c.pluck) statement = statement.pluck();
    if (c.raw) statement = statement.raw();
    if (c.method === "iterate") for (const _ of statement.iterate(...c.args));
    else (statement[c.method] as (...a: unknown[]) => unknown)(...c.args);
  }
  return performance.now() - started;
}

async function apiFigures(path: string): Promise<void> {
  const { view, db, log, app } = capturingApp(path);
  // A status other than 2xx stops the benchmark.
  const get = (address: string) => askJson<{ nextCursor?: string | null }>(app, address);
  // The second page of a list needs the first page's cursor.
  const first = await get("/runs/big/episodes?limit=50");
  const queries: [string, string][] = [
    ["runs_list", "/runs?limit=50"],
    ["run_episodes_first_page", "/runs/big/episodes?limit=50"],
    [
      "run_episodes_next_page",
      `/runs/big/episodes?cursor=${encodeURIComponent(first.nextCursor ?? "")}&limit=50`,
    ],
    ["run_failures_by_reward", "/runs/big/episodes?dir=desc&limit=50&outcome=failure&sort=reward"],
    ["run_errors", "/runs/big/episodes?limit=50&outcome=error"],
    ["run_parse_errors", "/runs/big/episodes?limit=50&outcome=parse_errors"],
    ["run_tasks_first_page", "/runs/big/tasks?limit=50"],
    ["compare_first_page", "/compare?a=big&b=big-b&limit=50"],
  ];
  for (const [name, address] of queries) {
    // The first request runs the SQL; later ones may be answered from a cache kept per store
    // version. The baseline is that first request's statements, run alone each time.
    log.length = 0;
    const coldStarted = performance.now();
    await get(address);
    const coldMs = performance.now() - coldStarted;
    const statements = [...log];
    const times: number[] = [];
    const alone: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      await get(address);
      times.push(performance.now() - started);
      alone.push(replay(db, statements));
    }
    const p99 = quantile(times, 0.99);
    const baseline = quantile(alone, 0.99);
    line({
      name: `view_api_p99_${name}`,
      value: round(p99),
      unit: `ms p99 over ${REQUESTS} requests of ${address} (in-process, JSON included)`,
      ratio: round(p99 / baseline, 2),
      baseline: round(baseline, 3),
      baseline_unit:
        "ms p99, the first request's statements in SQLite alone (later ones may be cached)",
      p50: round(quantile(times, 0.5)),
      first_request_ms: round(coldMs),
      statements: statements.length,
      target: `< ${TARGET_API_P99_MS} ms`,
      meets: p99 < TARGET_API_P99_MS,
    });
  }
  view.close();
  await busyFigure(path);
}

/**
 * The server while a run's metrics are computed for the first time (over a second on this
 * run, in the viewer's worker thread): a page's episodes meanwhile, against the same request on
 * an idle server.
 */
async function busyFigure(path: string): Promise<void> {
  const view = new StoreView(path, { readonly: true });
  const app = createViewApp({ view, token: "bench", loopback: true });
  const get = (address: string) => askJson(app, address);
  const address = "/runs/big/episodes?limit=50";
  await get(address);
  const timed = async (n: number) => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      await get(address);
      times.push(performance.now() - started);
    }
    return times;
  };
  const idle = await timed(50);
  const metricsStarted = performance.now();
  let metricsMs = 0;
  const metrics = get("/runs/big/metrics").then(() => {
    metricsMs = performance.now() - metricsStarted;
  });
  const busy = await timed(50);
  await metrics;
  line({
    name: "view_api_p99_while_metrics_compute",
    value: round(quantile(busy, 0.99)),
    unit: `ms p99 of ${address} while /runs/big/metrics is computed for the first time (${Math.round(metricsMs)} ms, worker thread)`,
    ratio: round(quantile(busy, 0.99) / quantile(idle, 0.99), 2),
    baseline: round(quantile(idle, 0.99)),
    baseline_unit: "ms p99 of the same request, nothing else running",
    target: `< ${TARGET_API_P99_MS} ms`,
    meets: quantile(busy, 0.99) < TARGET_API_P99_MS,
  });
  view.close();
}

async function renderFigure(path: string): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    line({
      name: "view_run_page_first_render",
      skipped: `no ${CHROMIUM} (apt-get install chromium)`,
    });
    return;
  }
  // The server in a process of its own, as `clade view` runs: in this one, a request that keeps
  // the server busy would also hold up playwright's messages and inflate every timing.
  const server = await viewProcess(path);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  // The SQL alone: the statements behind every request the page makes on its first render.
  const { view, db, log, app } = capturingApp(path);
  try {
    // One load of the app elsewhere first, so the browser's own first-launch costs fall there;
    // then the first visit to the run page finds the server cold (nothing cached).
    const warm = await browser.newContext();
    await (await warm.newPage()).goto(`${server.url}#/nowhere`);
    await warm.close();
    const visit = async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const addresses: string[] = [];
      page.on("request", (request) => {
        const url = new URL(request.url());
        if (url.pathname.startsWith("/api/") && url.pathname !== "/api/events") {
          addresses.push(url.pathname.slice(4) + url.search);
        }
      });
      const started = performance.now();
      await page.goto(`${server.url}#/runs/big`);
      for (const ready of RUN_PAGE_READY) await page.waitForSelector(ready, { timeout: 30_000 });
      const firstRender = performance.now() - started;
      await page.waitForSelector(METRICS_READY, { timeout: 30_000 });
      const withMetrics = performance.now() - started;
      await context.close();
      return { firstRender, withMetrics, addresses };
    };
    const cold = await visit();
    // The baseline: the statements the cold visit's requests ran, on a cold connection of its own.
    log.length = 0;
    for (const address of cold.addresses) {
      await (await askApi(app, address)).text();
    }
    const statements = [...log];
    const renders: number[] = [];
    const alone: number[] = [];
    for (let i = 0; i < RENDERS; i++) {
      renders.push((await visit()).firstRender);
      alone.push(replay(db, statements));
    }
    const median = quantile(renders, 0.5);
    const baseline = quantile(alone, 0.5);
    line({
      name: "view_run_page_first_render",
      value: round(median, 1),
      unit: `ms median of ${RENDERS} visits: goto #/runs/big until its header, per-task and episodes tables are drawn (headless chromium, new browser context each)`,
      ratio: round(median / baseline, 2),
      baseline: round(baseline, 2),
      baseline_unit: "ms, the statements behind every API request of a cold visit, in SQLite alone",
      max: round(Math.max(...renders), 1),
      cold_first_render_ms: round(cold.firstRender, 1),
      cold_metrics_drawn_ms: round(cold.withMetrics, 1),
      target: `< ${TARGET_FIRST_RENDER_MS} ms`,
      meets: Math.max(...renders, cold.firstRender) < TARGET_FIRST_RENDER_MS,
    });
  } finally {
    view.close();
    await browser.close();
    await server.close();
  }
}

async function viewProcess(db: string): Promise<{ url: string; close: () => Promise<void> }> {
  const child = spawn(process.execPath, ["bin/clade.js", "view", "--db", db, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.once("data", (data: Buffer) => resolve(data.toString().trim()));
    child.once("exit", (code) => reject(new Error(`clade view exited with ${code}`)));
  });
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** What the run page shows once its data is drawn (data-testids of src/web/app/pages/runs.ts). */
const METRICS_READY = '[data-testid="metrics"]';
const RUN_PAGE_READY = [
  '[data-testid="episodes-table"] tbody tr',
  '[data-testid="tasks-table"] tbody tr',
];

// BENCH_VIEW_STORE=PATH keeps the store there (and reuses it when it exists), for a closer look.
const kept = process.env.BENCH_VIEW_STORE;
const dir = mkdtempSync(join(tmpdir(), "clade-bench-view-"));
try {
  const path = kept ?? join(dir, "store.db");
  const buildMs = kept && existsSync(kept) ? 0 : buildStore(path);
  line({
    name: "view_bench_store",
    episodes: 2 * TASKS * SAMPLES + SMALL_RUNS * 50,
    build_ms: Math.round(buildMs),
  });
  if (process.env.BENCH_VIEW_ONLY !== "render") await apiFigures(path);
  await renderFigure(path);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
