/**
 * Costs and time that can be trusted, through the CLI as a user types it, against the fake
 * model server over real HTTP:
 * - a model without a price is reported as "unpriced" by eval, show, cost and runs, never as
 *   $0.0000; a run mixing priced and unpriced calls shows the priced sum as partial; cache hits
 *   cost $0 and are priced;
 * - the built-in price table prices the README's models, and clade.config beats it;
 * - latency is the provider's time: the limiter's queue and the sleeps between retries are
 *   reported apart;
 * - an SDK's per-call deprecation warning is shown once per run.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { resetShownWarnings } from "../../src/model/providers/sdk-warnings.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { RunStore } from "../../src/store/run-store.js";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/fake-model-server.js";
import { runCli } from "../fixtures/cli.js";

const cli = runCli;
const REPLY = { content: "Thought:\nNorth looks open.\n\nAction:\nmove up" };
const ENV_VARIABLES = [
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
] as const;

let dir: string;
let db: string;
let server: FakeModelServer;
let savedEnv: Record<string, string | undefined>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-costs-"));
  db = join(dir, "clade.db");
  savedEnv = Object.fromEntries(ENV_VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of ENV_VARIABLES) delete process.env[name];
  server = await startFakeModelServer({ rule: () => REPLY });
});

afterEach(async () => {
  await server.close();
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** A local OpenAI-compatible model: no price anywhere. */
const localSpec = () => `openai-compatible:${server.openaiBaseUrl}#m`;

function writeConfig(config: unknown): string {
  const path = join(dir, `clade.config.${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

async function evalRun(runId: string, model: string, ...extra: string[]) {
  return cli(
    "eval",
    "--env",
    "maze",
    "--agent",
    "react",
    "--model",
    model,
    "--tasks",
    "0-1",
    "--max-turns",
    "2",
    "--concurrency",
    "1",
    "--run-id",
    runId,
    "--db",
    db,
    ...extra,
  );
}

interface UsageRow {
  model: string;
  calls: number;
  cacheHits: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  unpriced?: true;
  meanLatencyMs: number | null;
  meanQueueMs: number | null;
  totalQueueMs: number | null;
  meanRetryMs: number | null;
  totalRetryMs: number | null;
}

async function costJson(runId: string): Promise<UsageRow[]> {
  const result = await cli("cost", runId, "--db", db, "--json");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout).usage;
}

async function runsJson(): Promise<{ id: string; costUsd: number | null; unpriced?: true }[]> {
  return JSON.parse((await cli("runs", "--db", db, "--json")).stdout).runs;
}

/** The line of `clade runs` for a run. */
async function runsLine(runId: string): Promise<string> {
  const out = (await cli("runs", "--db", db)).stdout;
  return out.split("\n").find((line) => line.startsWith(`${runId} `)) ?? "";
}

describe("a model without a price", () => {
  it("is reported as unpriced by eval, show, cost and runs; never as $0.0000", async () => {
    const evaluated = await evalRun("local", localSpec(), "--cache", "off");
    expect(evaluated.code).toBe(0);
    expect(evaluated.stdout).toMatch(/openai-compatible:m\s.*\bunpriced\b/);
    expect(evaluated.stdout).not.toContain("$0.0000");

    const cost = await cli("cost", "local", "--db", db);
    expect(cost.stdout).toMatch(/openai-compatible:m\s.*\bunpriced\b/);
    expect(cost.stdout).not.toContain("$0.0000");
    expect(cost.stdout).toMatch(/unpriced: the model has no price/);

    const shown = await cli("show", "local", "--db", db, "--episodes");
    expect(shown.stdout).toMatch(/openai-compatible:m\s.*\bunpriced\b/);
    // Each episode's cost column, too.
    expect(shown.stdout.match(/\d+\/\d+\s+unpriced\s/g)).toHaveLength(2);
    expect(shown.stdout).not.toContain("$0.0000");

    const episode = await cli("show", "local", "--episode", "0/0", "--db", db);
    expect(episode.stdout).toMatch(/model calls: 2, tokens in\/out \d+\/\d+, cost unpriced\n/);
    const callLines = episode.stdout.split("\n").filter((l) => /^ {2}call \d+:/.test(l));
    expect(callLines).toHaveLength(2);
    for (const line of callLines) expect(line).toMatch(/, unpriced$/);
    expect(episode.stdout).not.toContain("$0.0000");

    expect(await runsLine("local")).toMatch(/\bopenai-compatible:m\s+unpriced\s/);

    // JSON: cost null and unpriced: true, wherever a cost is given.
    const [row] = await costJson("local");
    expect(row).toMatchObject({ model: "openai-compatible:m", calls: 4, costUsd: null });
    expect(row?.unpriced).toBe(true);
    expect((await runsJson()).find((r) => r.id === "local")).toMatchObject({
      costUsd: null,
      unpriced: true,
    });
    const run = JSON.parse((await cli("show", "local", "--db", db, "--json", "--episodes")).stdout);
    expect(run.usage).toEqual([row]);
    for (const e of run.episodes) expect(e.usage).toMatchObject({ costUsd: null, unpriced: true });
    const calls = JSON.parse(
      (await cli("show", "local", "--episode", "0/0", "--db", db, "--json")).stdout,
    ).calls;
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(call).toMatchObject({ costUsd: null, unpriced: true });
  });

  it("with --budget-usd refuses to start: one line naming the model and the config fix", async () => {
    const refused = await evalRun("budgeted", localSpec(), "--budget-usd", "1");
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe("");
    const lines = refused.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^clade: error: --budget-usd needs a price for model "openai-compatible:.*#m", which has none/,
    );
    expect(lines[0]).toMatch(/"prices"/);
    expect(server.requests).toHaveLength(0);
    // Nothing written: the run does not exist.
    expect((await cli("show", "budgeted", "--db", db)).code).toBe(2);
    // A named model with a price in the config runs under the same budget.
    const config = writeConfig({
      models: { local: { model: localSpec(), price: { inputPerMTok: 1, outputPerMTok: 1 } } },
    });
    const priced = await evalRun("budgeted", "local", "--budget-usd", "1", "--config", config);
    expect(priced.code).toBe(0);
  });

  it("priced at 0 in clade.config (a free local model) costs $0.0000, not unpriced", async () => {
    const config = writeConfig({
      models: { free: { model: localSpec(), price: { inputPerMTok: 0, outputPerMTok: 0 } } },
    });
    expect((await evalRun("free", "free", "--cache", "off", "--config", config)).code).toBe(0);
    const [row] = await costJson("free");
    expect(row).toMatchObject({ calls: 4, costUsd: 0 });
    expect(row?.inputTokens).toBeGreaterThan(0);
    expect(row?.unpriced).toBeUndefined();
    expect(await runsLine("free")).toMatch(/\$0\.0000/);
    const episode = await cli("show", "free", "--episode", "0/0", "--db", db);
    expect(episode.stdout).toMatch(/cost \$0\.0000\n/);
    expect(episode.stdout).not.toContain("unpriced");
  });

  it("costs $0.0000 when every call is a cache hit: those are priced", async () => {
    expect((await evalRun("first", localSpec())).code).toBe(0);
    expect((await evalRun("again", localSpec())).code).toBe(0);
    const [row] = await costJson("again");
    expect(row).toMatchObject({ calls: 4, cacheHits: 4, costUsd: 0 });
    expect(row?.unpriced).toBeUndefined();
    expect(await runsLine("again")).toMatch(/\$0\.0000/);
    expect(await runsLine("first")).toMatch(/\bunpriced\b/);
  });

  it("mixed with priced calls in one run: the priced sum, marked partial", async () => {
    // Task 0's two calls succeed unpriced; task 1's fail, so the episode is an error ...
    let requests = 0;
    server.setRule(() => (++requests <= 2 ? REPLY : { fault: "bad_request", status: 400 }));
    expect((await evalRun("mixed", localSpec(), "--cache", "off")).code).toBe(4);
    // ... and the resume, now with a price for the model, redoes it priced.
    server.setRule(() => REPLY);
    const config = writeConfig({
      prices: { "openai-compatible:m": { inputPerMTok: 3, outputPerMTok: 15 } },
    });
    const resumed = await evalRun("mixed", localSpec(), "--cache", "off", "--config", config);
    expect(resumed.code).toBe(0);

    const [row] = await costJson("mixed");
    const store = RunStore.open(db, { readonly: true });
    const [first, second] = store.episodes("mixed");
    const pricedCalls = store.calls(second?.id ?? -1);
    const unpricedCalls = store.calls(first?.id ?? -1);
    store.close();
    expect(unpricedCalls.every((c) => c.unpriced === true)).toBe(true);
    expect(pricedCalls.every((c) => c.unpriced === undefined && c.costUsd > 0)).toBe(true);
    const priced = pricedCalls.reduce((s, c) => s + c.costUsd, 0);
    expect(row?.costUsd).toBeCloseTo(priced, 12);
    expect(row?.unpriced).toBe(true);
    const partial = `$${priced.toFixed(4)} + unpriced`;
    expect(resumed.stdout).toContain(partial);
    expect((await cli("cost", "mixed", "--db", db)).stdout).toContain(partial);
    expect(await runsLine("mixed")).toContain(partial);
    expect((await runsJson()).find((r) => r.id === "mixed")).toMatchObject({
      costUsd: row?.costUsd,
      unpriced: true,
    });
    const shown = (await cli("show", "mixed", "--db", db, "--episodes")).stdout;
    expect(shown).toContain(partial);
    expect(shown).toMatch(/\n0\s+0\s+.*\d+\/\d+\s+unpriced\s/);
    expect(shown).toMatch(new RegExp(`\\n1\\s+0\\s+.*\\d+/\\d+\\s+\\$${priced.toFixed(4)}\\s`));
  });
});

describe("prices", () => {
  beforeEach(() => {
    process.env.OPENAI_API_KEY = "sk-test";
    process.env.OPENAI_BASE_URL = server.openaiBaseUrl;
  });

  it("come from the built-in table for the README's openai:gpt-4o-mini, and the config beats it", async () => {
    expect((await evalRun("table", "openai:gpt-4o-mini", "--cache", "off")).code).toBe(0);
    const [table] = await costJson("table");
    const expected = (row: UsageRow | undefined, input: number, output: number) =>
      ((row?.inputTokens ?? 0) * input + (row?.outputTokens ?? 0) * output) / 1e6;
    expect(table?.inputTokens).toBeGreaterThan(0);
    expect(table?.costUsd).toBeCloseTo(expected(table, 0.15, 0.6), 12);
    expect(table?.unpriced).toBeUndefined();

    const config = writeConfig({
      prices: { "openai:gpt-4o-mini": { inputPerMTok: 100, outputPerMTok: 200 } },
    });
    const run = await evalRun(
      "override",
      "openai:gpt-4o-mini",
      "--cache",
      "off",
      "--config",
      config,
    );
    expect(run.code).toBe(0);
    const [override] = await costJson("override");
    expect(override?.costUsd).toBeCloseTo(expected(override, 100, 200), 12);

    const named = writeConfig({
      models: {
        mini: { model: "openai:gpt-4o-mini", price: { inputPerMTok: 1000, outputPerMTok: 0 } },
      },
      prices: { "openai:gpt-4o-mini": { inputPerMTok: 100, outputPerMTok: 200 } },
    });
    expect((await evalRun("entry", "mini", "--cache", "off", "--config", named)).code).toBe(0);
    const [entry] = await costJson("entry");
    expect(entry?.costUsd).toBeCloseTo(expected(entry, 1000, 0), 12);
  });
});

describe("latency apart from waiting", () => {
  it("queue and retry waits are recorded per call and reported apart from latency", async () => {
    await server.close();
    server = await startFakeModelServer({ rule: () => REPLY, latencyMs: 60 });
    // The second request is told to come back in 0.6 s; all are answered after 60 ms. (The
    // first carries the process's first-request costs, which are the provider's time too.)
    server.push(REPLY, { fault: "rate_limit", retryAfterSeconds: 0.6, latencyMs: 0 });
    const config = writeConfig({
      models: { slow: { model: localSpec(), maxConcurrency: 1, maxRetries: 2 } },
    });
    const evaluated = await cli(
      "eval",
      "--env",
      "maze",
      "--agent",
      "react",
      "--model",
      "slow",
      "--config",
      config,
      "--tasks",
      "0-3",
      "--max-turns",
      "2",
      "--concurrency",
      "4",
      "--cache",
      "off",
      "--run-id",
      "timed",
      "--db",
      db,
    );
    expect(evaluated.code).toBe(0);
    expect(evaluated.stdout).toMatch(/latency ms \(mean\)\s+queue ms \(mean\/total\)\s+retry ms/);

    const [row] = await costJson("timed");
    expect(row?.calls).toBe(8);
    // Latency is the provider's 60 ms (and the 429's instant reply), not the waits.
    expect(row?.meanLatencyMs).toBeGreaterThanOrEqual(50);
    expect(row?.meanLatencyMs).toBeLessThan(200);
    // Four episodes share one slot: most calls waited for it.
    expect(row?.totalQueueMs).toBeGreaterThan(200);
    expect(row?.meanQueueMs).toBeCloseTo((row?.totalQueueMs ?? 0) / 8, 6);
    expect(row?.totalRetryMs).toBeGreaterThanOrEqual(595);
    expect(row?.totalRetryMs).toBeLessThan(1500);

    const store = RunStore.open(db, { readonly: true });
    const calls = store.episodes("timed").flatMap((e) => store.calls(e.id));
    store.close();
    const retried = calls.find((c) => c.attempts === 2);
    expect(retried?.retryMs).toBeGreaterThanOrEqual(595);
    // Its two attempts (an instant 429, a 60 ms reply), not the 600 ms between them.
    expect(retried?.latencyMs).toBeGreaterThanOrEqual(55);
    expect(retried?.latencyMs).toBeLessThan(400);
    for (const call of calls) expect(call.queueMs).toBeGreaterThanOrEqual(0);
    expect(calls.filter((c) => c !== retried).every((c) => c.retryMs === 0)).toBe(true);

    const table = (await cli("cost", "timed", "--db", db)).stdout;
    expect(table).toMatch(/queue ms \(mean\/total\)/);
    expect(table).toMatch(/the model's rate limits \(queue\)/);
    const shown = (await cli("show", "timed", "--db", db, "--json")).stdout;
    expect(JSON.parse(shown).usage).toEqual([row]);

    // show --episode: each call line gives its latency, queue and retry wait.
    const all = await Promise.all(
      [0, 1, 2, 3].map((task) => cli("show", "timed", "--episode", `${task}/0`, "--db", db)),
    );
    const lines = all.flatMap((r) => r.stdout.split("\n").filter((l) => /^ {2}call /.test(l)));
    expect(lines).toHaveLength(8);
    for (const line of lines)
      expect(line).toMatch(/\d+ ms, cache miss, .*queued \d+ ms, retry wait \d+ ms/);
    expect(
      lines.some((l) => /2 attempts \(1 retry\), queued \d+ ms, retry wait [6-9]\d\d ms/.test(l)),
    ).toBe(true);
  });
});

describe("SDK warnings", () => {
  it("the Anthropic SDK's deprecation warning appears once per run, not once per call", async () => {
    process.env.ANTHROPIC_API_KEY = "sk-ant-test";
    process.env.ANTHROPIC_BASE_URL = server.anthropicBaseUrl;
    resetShownWarnings();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const result = await evalRun("claude", "anthropic:claude-sonnet-4-5", "--cache", "off");
      expect(result.code).toBe(0);
      const calls = server.requests.filter((r) => r.api === "anthropic").length;
      expect(calls).toBe(4);
      const deprecations = warn.mock.calls.filter((args) => /is deprecated/.test(String(args[0])));
      expect(deprecations).toHaveLength(1);
      expect(String(deprecations[0]?.[0])).toContain("claude-sonnet-4-5");
    } finally {
      warn.mockRestore();
    }
  });
});

describe("a store written before calls recorded their price and waits (schema 3)", () => {
  it("reads a call that used tokens but cost nothing as unpriced, a costed one as priced", async () => {
    const raw = new Database(db);
    raw.pragma("journal_mode = WAL");
    for (const migration of MIGRATIONS.slice(0, 3)) raw.exec(migration);
    raw.pragma("user_version = 3");
    raw.exec(`
      INSERT INTO runs (id, env, env_version, agent, config, status, created_at, updated_at)
        VALUES ('old', 'maze', '1', 'react', '{}', 'complete', 'x', 'x');
      INSERT INTO episodes (id, run_id, task_index, sample_index, seed, outcome, reward,
          end_reason, turns, started_at, duration_ms)
        VALUES (1, 'old', 0, 0, 0, 'failure', 0, 'max_turns', 0, 'x', 1);
      INSERT INTO trajectories (episode_id, steps) VALUES (1, '[]');
      INSERT INTO model_call_rows (episode_id, turn, model, request, input_tokens, output_tokens,
          cost_usd, latency_ms, cache_hit, attempts, started_at) VALUES
        (1, 0, 'openai-compatible:local', '{"messages":[]}', 10, 5, 0, 40, 0, 1, 'x'),
        (1, 1, 'openai:gpt-4o-mini', '{"messages":[]}', 10, 5, 0.25, 50, 0, 1, 'x'),
        (1, 2, 'openai:gpt-4o-mini', '{"messages":[]}', 10, 5, 0, NULL, 1, 0, 'x');
    `);
    raw.close();
    RunStore.open(db).close(); // a writer upgrades the schema

    const usage = await costJson("old");
    expect(usage).toEqual([
      expect.objectContaining({ model: "openai-compatible:local", costUsd: null, unpriced: true }),
      expect.objectContaining({ model: "openai:gpt-4o-mini", costUsd: 0.25, cacheHits: 1 }),
    ]);
    expect(usage[1]?.unpriced).toBeUndefined();
    // Their waits were never recorded: unknown, not 0.
    expect(usage[1]).toMatchObject({ meanLatencyMs: 50, meanQueueMs: null, totalRetryMs: null });
    expect(await runsLine("old")).toContain("$0.2500 + unpriced");
    const view = new Database(db, { readonly: true });
    const rows = view.prepare("SELECT unpriced, queue_ms FROM model_calls ORDER BY id").all();
    view.close();
    expect(rows).toEqual([
      { unpriced: 1, queue_ms: null },
      { unpriced: 0, queue_ms: null },
      { unpriced: 0, queue_ms: null },
    ]);
  });
});
