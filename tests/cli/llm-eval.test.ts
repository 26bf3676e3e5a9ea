/**
 * `clade eval` with the LLM agents end to end: the real CLI (in-process, so the fake model server
 * in this process keeps answering), the real OpenAI SDK client over HTTP on 127.0.0.1, the real
 * store. Covers every built-in environment with both agents, the parse-failure path, provider
 * failures (errors, never failures) and their resume, the response cache, the budget stop, and
 * the `models` and `cost` commands.
 */
import { existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStore } from "../../src/store/run-store.js";
import {
  type FakeModelServer,
  type FakeReply,
  type FakeRequest,
  type FakeRule,
  lastMessageText,
  startFakeModelServer,
} from "../../src/testing/fake-model-server.js";
import { openaiWire } from "../../src/testing/fake-openai-wire.js";
import { estimateUsage } from "../../src/testing/fake-reply.js";
import { runCli } from "../fixtures/cli.js";

const cli = runCli;

const ENVS = ["maze", "wordle", "textcraft", "todo"] as const;
type EnvName = (typeof ENVS)[number];
const AGENTS = ["react", "tools"] as const;
type AgentName = (typeof AGENTS)[number];

/** A plausible action per environment, used when the observation lists none. */
const DEFAULT_ACTIONS: Record<EnvName, string> = {
  maze: "move up",
  wordle: "crane",
  textcraft: "inventory",
  todo: "list_projects with Action Input: {}",
};
/** The model id the fake server reports and the client accounts under. */
const MODEL_ID = "openai-compatible:fake-model";
/** Prices for the accounting test: cost must follow the usage the server reported. */
const PRICE = { inputPerMTok: 3, outputPerMTok: 15 };
const KEY_VARIABLES = ["OPENAI_API_KEY", "CLADE_TEST_UNSET_KEY", "CLADE_TEST_SET_KEY"] as const;

let dir: string;
let db: string;
let server: FakeModelServer;
let savedEnv: Record<string, string | undefined>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-llm-eval-"));
  db = join(dir, "clade.db");
  savedEnv = Object.fromEntries(KEY_VARIABLES.map((name) => [name, process.env[name]]));
  // A local OpenAI-compatible server needs no key; a stray key from the shell must not matter.
  delete process.env.OPENAI_API_KEY;
  delete process.env.CLADE_TEST_UNSET_KEY;
  server = await startFakeModelServer();
});

afterEach(async () => {
  await server.close();
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

function spec(): string {
  return `openai-compatible:${server.openaiBaseUrl}#fake-model`;
}

function writeConfig(name: string, config: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

function query<T>(sql: string, ...params: unknown[]): T[] {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare(sql).all(...params) as T[];
  } finally {
    conn.close();
  }
}

interface ChatBody {
  messages: { role: string; content?: unknown }[];
  tools?: {
    function: { name: string; parameters: { properties: { action: { enum?: string[] } } } };
  }[];
}

const chatRequests = (requests: readonly FakeRequest[]) =>
  requests.filter((r) => r.api === "openai" && r.path === "/v1/chat/completions");

/** The actions the agent offered: the `act` tool's enum, or the "Available actions" list. */
function offeredActions(request: FakeRequest): string[] {
  const body = request.body as ChatBody;
  const fromTool = body.tools?.[0]?.function.parameters.properties.action.enum;
  if (fromTool) return fromTool;
  const listed = /Available actions:\n((?:- .*(?:\n|$))+)/.exec(lastMessageText(request));
  return listed
    ? (listed[1] ?? "")
        .trim()
        .split("\n")
        .map((line) => line.slice(2))
    : [];
}

function actionReply(agent: AgentName, action: string, thought = "I will try this."): FakeReply {
  if (agent === "tools") {
    return { content: thought, toolCalls: [{ name: "act", arguments: { action } }] };
  }
  return { content: `Thought:\n${thought}\n\nAction:\n${action}` };
}

/** A well-behaved model: the first offered action, else the environment's plausible one. */
function validRule(env: EnvName, agent: AgentName): FakeRule {
  return (request) => actionReply(agent, offeredActions(request)[0] ?? DEFAULT_ACTIONS[env]);
}

/** Usage the server put in its replies: its word-count estimate, recomputed from each request. */
function servedUsage(requests: readonly FakeRequest[]) {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const request of chatRequests(requests)) {
    const reply = request.reply;
    if (reply === undefined || reply.fault !== undefined) continue;
    const read = openaiWire.readRequest(request.body);
    if (!("request" in read)) throw new Error(`unreadable request: ${read.error}`);
    const usage = estimateUsage(
      read.request.promptText,
      reply.content ?? "",
      reply.toolCalls ?? [],
      reply.usage,
    );
    inputTokens += usage.inputTokens;
    outputTokens += usage.outputTokens;
  }
  return { inputTokens, outputTokens };
}

interface EpisodeRow {
  id: number;
  task_index: number;
  sample_index: number;
  outcome: string;
  end_reason: string;
  error: string | null;
  turns: number;
  parse_errors: number;
}

interface CallRow {
  episode_id: number;
  turn: number;
  model: string;
  request: string;
  response: string | null;
  error: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  latency_ms: number | null;
  cache_hit: number;
  attempts: number;
  attempt_errors: string | null;
}

const episodesOf = (run: string) =>
  query<EpisodeRow>(
    "SELECT * FROM episodes WHERE run_id = ? ORDER BY task_index, sample_index",
    run,
  );
const callsOf = (run: string) =>
  query<CallRow>(
    `SELECT c.* FROM model_calls c JOIN episodes e ON e.id = c.episode_id
     WHERE e.run_id = ? ORDER BY c.id`,
    run,
  );

describe.each(ENVS)("clade eval with LLM agents on %s", (env) => {
  it.each(AGENTS)(
    "agent %s: every episode finishes, every call is stored and accounted",
    async (agent) => {
      server.setRule(validRule(env, agent));
      const config = writeConfig("clade.config.json", { prices: { [MODEL_ID]: PRICE } });
      const run = `${env}-${agent}`;
      const result = await cli(
        "eval",
        "--env",
        env,
        "--agent",
        agent,
        "--model",
        spec(),
        "--config",
        config,
        "--tasks",
        "0-1",
        "--samples",
        "2",
        "--max-turns",
        "3",
        "--run-id",
        run,
        "--db",
        db,
        "--json",
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout);
      expect(summary).toMatchObject({ runId: run, ran: 4, interrupted: false, notRun: 0 });
      expect(summary.metrics).toMatchObject({ episodes: 4, finished: 4, errors: 0 });
      expect(server.unexpectedRequests).toEqual([]);

      const episodes = episodesOf(run);
      expect(episodes).toHaveLength(4);
      const store = RunStore.open(db, { readonly: true });
      try {
        for (const episode of episodes) {
          expect(episode.error).toBeNull();
          expect(["success", "failure"]).toContain(episode.outcome);
          expect(episode.turns).toBeGreaterThanOrEqual(1);
          expect(episode.parse_errors).toBe(0);
          // The model's action reached the environment, which took it as a valid one.
          for (const step of store.steps(episode.id)) {
            expect(step.action).toBe(DEFAULT_ACTIONS[env]);
            expect(step.observation.text).not.toMatch(/^(Error:|Invalid)/);
            expect(step.parseErrors).toBeUndefined();
          }
        }
      } finally {
        store.close();
      }

      // One stored call per request the server answered, each linked to its episode and turn.
      const calls = callsOf(run);
      const requests = chatRequests(server.requests);
      expect(calls).toHaveLength(requests.length);
      // The maze lists its moves, textcraft the gets and crafts its shown commands allow (after
      // "inventory"): in the observation text (react) or as the tool's enum (tools).
      const offered = requests.map((r) => offeredActions(r).join(","));
      const moves = "move up,move down,move left,move right";
      if (env === "textcraft") {
        for (const list of offered) expect(list).toMatch(/^inventory,get .*,craft /);
      } else {
        expect(new Set(offered)).toEqual(new Set([env === "maze" ? moves : ""]));
      }
      expect(calls.every((c) => c.cache_hit === 0 && c.error === null && c.attempts === 1)).toBe(
        true,
      );
      for (const episode of episodes) {
        const turns = calls.filter((c) => c.episode_id === episode.id).map((c) => c.turn);
        // No parse errors, so exactly one call per turn, in order.
        expect(turns).toEqual(Array.from({ length: episode.turns }, (_, i) => i));
      }
      // The stored request is the one sent: same number of messages, same last message.
      const sentShapes = requests
        .map((r) => {
          const body = r.body as ChatBody;
          return `${body.messages.length}:${lastMessageText(r)}`;
        })
        .sort();
      const storedShapes = calls
        .map((c) => {
          const messages = (JSON.parse(c.request) as { messages: { content: string }[] }).messages;
          return `${messages.length}:${messages.at(-1)?.content}`;
        })
        .sort();
      expect(storedShapes).toEqual(sentShapes);

      // Usage and cost: the server's replies = the stored calls = `clade cost`.
      const served = servedUsage(server.requests);
      expect(served.inputTokens).toBeGreaterThan(0);
      const sums = query<{ input: number; output: number; cost: number }>(
        `SELECT SUM(c.input_tokens) AS input, SUM(c.output_tokens) AS output,
         SUM(c.cost_usd) AS cost
       FROM model_calls c JOIN episodes e ON e.id = c.episode_id WHERE e.run_id = ?`,
        run,
      )[0];
      expect(sums?.input).toBe(served.inputTokens);
      expect(sums?.output).toBe(served.outputTokens);
      const expectedCost =
        (served.inputTokens * PRICE.inputPerMTok + served.outputTokens * PRICE.outputPerMTok) / 1e6;
      expect(sums?.cost).toBeCloseTo(expectedCost, 12);

      const cost = await cli("cost", run, "--db", db, "--json");
      expect(cost.code).toBe(0);
      const rows = JSON.parse(cost.stdout).usage;
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        model: MODEL_ID,
        calls: requests.length,
        cacheHits: 0,
        failedCalls: 0,
        retries: 0,
        inputTokens: served.inputTokens,
        outputTokens: served.outputTokens,
      });
      expect(rows[0].costUsd).toBeCloseTo(expectedCost, 12);
      expect(rows[0].meanLatencyMs).toBeGreaterThan(0);
      expect(summary.usage).toEqual(rows);

      const show = await cli("show", run, "--db", db, "--json", "--episodes");
      expect(show.code).toBe(0);
      const shown = JSON.parse(show.stdout);
      expect(shown.run).toMatchObject({ id: run, env, agent, status: "complete" });
      expect(shown.run.config.model).toBe(spec());
      expect(shown.metrics).toMatchObject({ episodes: 4, finished: 4, errors: 0 });
      expect(shown.episodes).toHaveLength(4);
      // Totals per episode add up to the run's.
      type EpisodeUsage = { calls: number; inputTokens: number; costUsd: number };
      const perEpisode = shown.episodes.map((e: { usage: EpisodeUsage }) => e.usage);
      expect(perEpisode.every((u: EpisodeUsage | null) => u !== null && u.calls > 0)).toBe(true);
      expect(perEpisode.reduce((t: number, u: EpisodeUsage) => t + u.calls, 0)).toBe(
        requests.length,
      );
      expect(perEpisode.reduce((t: number, u: EpisodeUsage) => t + u.inputTokens, 0)).toBe(
        served.inputTokens,
      );
      expect(shown.usage).toEqual(rows);
      const episodesTable = (await cli("show", run, "--db", db, "--episodes")).stdout;
      expect(episodesTable).toMatch(/calls\s+tokens in\/out\s+cost/);

      const table = await cli("cost", run, "--db", db);
      expect(table.stdout).toContain(MODEL_ID);
      expect(table.stdout).toContain(String(served.inputTokens));
    },
  );
});

/** Messages of a first-turn request: system prompt, instruction, "OK.", first observation. */
const FIRST_TURN_MESSAGES = 4;
/** The agents' corrective messages after an unusable reply. */
const CORRECTION = /^(Your reply could not be used|Error: the reply called no tool)/;

const isFirstTurn = (request: FakeRequest) =>
  (request.body as ChatBody).messages.length === FIRST_TURN_MESSAGES;

/** `clade eval` on maze with the fake server's model, unless `extra` names another --model. */
function evalArgs(run: string, ...extra: string[]): string[] {
  const model = extra.includes("--model") ? [] : ["--model", spec()];
  return ["eval", "--env", "maze", ...model, "--run-id", run, "--db", db, "--json", ...extra];
}

describe("the parse-failure path, end to end", () => {
  it.each(AGENTS)(
    "agent %s: an unusable reply is corrected, counted, and the episode goes on",
    async (agent) => {
      // Each episode's first reply has no action; the reply to the correction is fine.
      server.setRule((request) => {
        if (isFirstTurn(request) && !CORRECTION.test(lastMessageText(request))) {
          return { content: "Hmm, I need to think about this maze for a while." };
        }
        return actionReply(agent, "move up");
      });
      const run = `parse-${agent}`;
      const args = evalArgs(run, "--agent", agent, "--tasks", "0-1", "--max-turns", "3");
      const result = await cli(...args);
      expect(result.code).toBe(0);
      expect(server.unexpectedRequests).toEqual([]);

      const episodes = episodesOf(run);
      expect(episodes).toHaveLength(2);
      const calls = callsOf(run);
      expect(calls).toHaveLength(chatRequests(server.requests).length);
      const store = RunStore.open(db, { readonly: true });
      try {
        for (const episode of episodes) {
          expect(episode.outcome).not.toBe("error");
          expect(episode.turns).toBe(3);
          expect(episode.parse_errors).toBe(1);
          const steps = store.steps(episode.id);
          expect(steps.map((s) => s.parseErrors)).toEqual([1, undefined, undefined]);
          // The unusable reply never reached the environment: turn 0 still made a real move.
          expect(steps.map((s) => s.action)).toEqual(["move up", "move up", "move up"]);
          const turns = calls.filter((c) => c.episode_id === episode.id).map((c) => c.turn);
          expect(turns).toEqual([0, 0, 1, 2]);
          // The re-ask carries the bad reply and the explanation.
          const reask = JSON.parse(
            calls.filter((c) => c.episode_id === episode.id)[1]?.request ?? "{}",
          ) as { messages: { role: string; content: string }[] };
          expect(reask.messages).toHaveLength(FIRST_TURN_MESSAGES + 2);
          expect(reask.messages.at(-2)?.content).toContain("Hmm, I need to think");
          expect(reask.messages.at(-1)?.content).toMatch(CORRECTION);
        }
      } finally {
        store.close();
      }
      const shown = JSON.parse((await cli("show", run, "--db", db, "--json")).stdout);
      expect(shown.metrics).toMatchObject({ episodes: 2, finished: 2, errors: 0 });
    },
  );

  it("a model that never keeps to the format fails its episodes, never errors them", async () => {
    server.setRule(() => ({ content: "I refuse to follow the format." }));
    const run = "never-parses";
    const result = await cli(
      ...evalArgs(run, "--agent", "react", "--tasks", "0", "--max-turns", "2"),
    );
    expect(result.code).toBe(0);
    const [episode] = episodesOf(run);
    expect(episode).toMatchObject({ outcome: "failure", end_reason: "max_turns", turns: 2 });
    // Default: the first reply and 2 corrective re-asks per turn.
    expect(episode?.parse_errors).toBe(6);
    expect(callsOf(run).map((c) => c.turn)).toEqual([0, 0, 0, 1, 1, 1]);
    const store = RunStore.open(db, { readonly: true });
    try {
      const steps = store.steps(episode?.id ?? -1);
      expect(steps.map((s) => s.parseErrors)).toEqual([3, 3]);
      // The turn ends with no action, which the environment answers as invalid.
      expect(steps.map((s) => s.action)).toEqual(["", ""]);
    } finally {
      store.close();
    }
  });
});

describe("provider failures", () => {
  it("make an episode an error after retries; resuming on a healthy server redoes it", async () => {
    const config = writeConfig("clade.config.json", {
      models: { flaky: { model: spec(), maxRetries: 1 } },
    });
    // Turn 0 works; every later call gets a 500.
    server.setRule((request) =>
      isFirstTurn(request) ? actionReply("react", "move up") : { fault: "server_error" },
    );
    const args = [
      "eval",
      "--env",
      "maze",
      "--agent",
      "react",
      "--model",
      "flaky",
      "--config",
      config,
      "--tasks",
      "0-1",
      "--max-turns",
      "3",
      "--run-id",
      "flaky",
      "--db",
      db,
      "--json",
    ];
    const first = await cli(...args);
    expect(first.code).toBe(5); // every episode errored
    expect(JSON.parse(first.stdout).metrics).toMatchObject({ episodes: 2, finished: 0, errors: 2 });
    // Per episode: one good call, then one failing call tried twice (maxRetries: 1).
    expect(chatRequests(server.requests)).toHaveLength(2 * (1 + 2));

    for (const episode of episodesOf("flaky")) {
      expect(episode).toMatchObject({ outcome: "error", end_reason: "agent_error", turns: 1 });
      expect(episode.error).toMatch(/500|server error/i);
      expect(episode.error).toMatch(/gave up after 2 attempts/);
      const calls = callsOf("flaky").filter((c) => c.episode_id === episode.id);
      expect(calls.map((c) => [c.turn, c.attempts, c.error === null])).toEqual([
        [0, 1, true],
        [1, 2, false],
      ]);
      const failed = calls[1] as CallRow;
      expect(failed.response).toBeNull();
      expect([failed.input_tokens, failed.output_tokens, failed.cost_usd]).toEqual([0, 0, 0]);
      expect(failed.latency_ms).toBeGreaterThan(0);
    }
    const cost = JSON.parse((await cli("cost", "flaky", "--db", db, "--json")).stdout).usage;
    expect(cost[0]).toMatchObject({ calls: 4, failedCalls: 2, retries: 2, cacheHits: 0 });
    const shown = JSON.parse((await cli("show", "flaky", "--db", db, "--json")).stdout);
    expect(shown.metrics).toMatchObject({ episodes: 2, finished: 0, errors: 2 });
    expect(Number.isNaN(shown.metrics.successRate) || shown.metrics.successRate === null).toBe(
      true,
    );

    server.setRule(() => actionReply("react", "move up"));
    const before = chatRequests(server.requests).length;
    const resumed = await cli(...args);
    expect(resumed.code).toBe(0);
    const summary = JSON.parse(resumed.stdout);
    expect(summary).toMatchObject({ resumed: true, skipped: 0, ran: 2 });
    expect(summary.metrics).toMatchObject({ episodes: 2, finished: 2, errors: 0 });
    const episodes = episodesOf("flaky");
    expect(episodes.map((e) => e.outcome).every((o) => o === "success" || o === "failure")).toBe(
      true,
    );
    expect(episodes.every((e) => e.turns === 3)).toBe(true);
    // The errored attempts' calls went with them; the new ones are all successful. The first turn
    // is answered from the cache (the same request succeeded before), the rest by the server.
    const calls = callsOf("flaky");
    expect(calls).toHaveLength(6);
    expect(calls.every((c) => c.error === null)).toBe(true);
    expect(calls.filter((c) => c.cache_hit === 1).map((c) => c.turn)).toEqual([0, 0]);
    expect(chatRequests(server.requests).length - before).toBe(4);
  });
});

describe("the response cache", () => {
  it("answers a repeated run from the store; the samples of a task stay independent", async () => {
    let counter = 0;
    server.setRule(() => actionReply("react", "move up", `reply number ${++counter}`));
    const config = writeConfig("clade.config.json", { prices: { [MODEL_ID]: PRICE } });
    const common = ["--agent", "react", "--config", config, "--tasks", "0-1", "--samples", "2"];
    const cacheRows = () => query<{ n: number }>("SELECT COUNT(*) AS n FROM model_cache")[0]?.n;
    // Read-only on an empty cache: everything goes to the server, nothing is kept.
    const readOnly = await cli(...evalArgs("c0", ...common, "--max-turns", "2", "--cache", "read"));
    expect(readOnly.code).toBe(0);
    expect(chatRequests(server.requests)).toHaveLength(8);
    expect(cacheRows()).toBe(0);

    const first = await cli(...evalArgs("c1", ...common, "--max-turns", "2", "--cache", "rw"));
    expect(first.code).toBe(0);
    expect(cacheRows()).toBe(8);
    const served = chatRequests(server.requests).length;
    expect(served).toBe(2 * 8);

    const firstCalls = callsOf("c1");
    expect(firstCalls.every((c) => c.cache_hit === 0 && c.cost_usd > 0)).toBe(true);
    const turnZero = (run: string, task: number, sample: number) => {
      const episode = episodesOf(run).find(
        (e) => e.task_index === task && e.sample_index === sample,
      );
      const call = callsOf(run).find((c) => c.episode_id === episode?.id && c.turn === 0);
      return {
        messages: JSON.stringify(JSON.parse(call?.request ?? "{}").messages),
        reply: JSON.parse(call?.response ?? "{}").content as string,
      };
    };
    for (const task of [0, 1]) {
      const a = turnZero("c1", task, 0);
      const b = turnZero("c1", task, 1);
      // The same prompt, yet two draws from the model: the sample index is part of the key.
      expect(a.messages).toBe(b.messages);
      expect(a.reply).not.toBe(b.reply);
    }

    const second = await cli(...evalArgs("c2", ...common, "--max-turns", "2", "--cache", "rw"));
    expect(second.code).toBe(0);
    expect(chatRequests(server.requests)).toHaveLength(served);
    const secondCalls = callsOf("c2");
    expect(secondCalls).toHaveLength(firstCalls.length);
    for (const call of secondCalls) {
      expect(call).toMatchObject({ cache_hit: 1, latency_ms: null, cost_usd: 0, attempts: 0 });
    }
    // Replayed exactly, sample by sample.
    for (const task of [0, 1]) {
      for (const sample of [0, 1]) {
        expect(turnZero("c2", task, sample)).toEqual(turnZero("c1", task, sample));
      }
    }
    const cost = JSON.parse((await cli("cost", "c2", "--db", db, "--json")).stdout).usage;
    expect(cost[0]).toMatchObject({ calls: 8, cacheHits: 8, costUsd: 0, meanLatencyMs: null });
    // Cached usage is still reported (tokens the replies took), only the cost is zero.
    const firstCost = JSON.parse((await cli("cost", "c1", "--db", db, "--json")).stdout).usage;
    expect(cost[0].inputTokens).toBe(firstCost[0].inputTokens);

    // --cache off goes to the server again.
    const third = await cli(...evalArgs("c3", ...common, "--max-turns", "2", "--cache", "off"));
    expect(third.code).toBe(0);
    expect(chatRequests(server.requests)).toHaveLength(served + 8);
    expect(callsOf("c3").every((c) => c.cache_hit === 0)).toBe(true);
  });
});

describe("the budget", () => {
  it("stops the run cleanly, marks the rest not run, and a bigger budget finishes it", async () => {
    server.setRule(() => actionReply("react", "move up"));
    // A dollar per input token: the first call alone spends the budget.
    const config = writeConfig("clade.config.json", {
      prices: { [MODEL_ID]: { inputPerMTok: 1e6, outputPerMTok: 0 } },
    });
    const args = (budget: string) =>
      evalArgs(
        "b",
        "--agent",
        "react",
        "--config",
        config,
        "--tasks",
        "0-2",
        "--samples",
        "2",
        "--max-turns",
        "2",
        "--concurrency",
        "1",
        "--budget-usd",
        budget,
      );
    const stopped = await cli(...args("1"));
    expect(stopped.code).toBe(3);
    expect(stopped.stderr).toMatch(/budget of \$1 reached/);
    expect(stopped.stderr).toMatch(/5 episodes not run/);
    expect(JSON.parse(stopped.stdout)).toMatchObject({
      interrupted: true,
      stopReason: "budget",
      ran: 1,
      notRun: 5,
    });

    const [run] = query<{ status: string; stop_reason: string | null }>(
      "SELECT status, stop_reason FROM runs WHERE id = 'b'",
    );
    expect(run).toEqual({ status: "interrupted", stop_reason: "budget" });
    const episodes = episodesOf("b");
    expect(episodes).toHaveLength(6);
    expect(episodes.filter((e) => e.outcome === "not_run")).toHaveLength(5);
    // The episode in flight when the budget ran out finished its turns.
    const ranOne = episodes.filter((e) => e.outcome !== "not_run");
    expect(ranOne).toHaveLength(1);
    expect(ranOne[0]).toMatchObject({ turns: 2, error: null });
    expect(["success", "failure"]).toContain(ranOne[0]?.outcome);

    const shown = JSON.parse((await cli("show", "b", "--db", db, "--json")).stdout);
    expect(shown.run).toMatchObject({ status: "interrupted", stopReason: "budget" });
    // Not-run episodes are no outcome at all: neither in the denominators nor as errors.
    expect(shown.metrics).toMatchObject({ tasks: 1, episodes: 1, finished: 1, errors: 0 });
    const { runs } = JSON.parse((await cli("runs", "--db", db, "--json")).stdout);
    expect(runs[0]).toMatchObject({ id: "b", notRun: 5, errors: 0, status: "interrupted" });
    const exported = JSON.parse(
      (await cli("export", "b", "--format", "agenttraj", "--db", db)).stdout,
    );
    expect(exported).toHaveLength(1);

    // The budget belongs to the run: the same command again spends nothing more.
    const requestsBefore = server.requests.length;
    const again = await cli(...args("1"));
    expect(again.code).toBe(3);
    expect(JSON.parse(again.stdout)).toMatchObject({ resumed: true, ran: 0, notRun: 5 });
    expect(server.requests.length).toBe(requestsBefore);

    const finished = await cli(...args("1000000"));
    expect(finished.stderr).toBe("");
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ resumed: true, skipped: 1, ran: 5 });
    const after = episodesOf("b");
    expect(after).toHaveLength(6);
    expect(after.every((e) => e.outcome === "success" || e.outcome === "failure")).toBe(true);
    const [done] = query<{ status: string; stop_reason: string | null }>(
      "SELECT status, stop_reason FROM runs WHERE id = 'b'",
    );
    expect(done).toEqual({ status: "complete", stop_reason: null });
    const total = JSON.parse((await cli("show", "b", "--db", db, "--json")).stdout);
    expect(total.metrics).toMatchObject({ tasks: 3, episodes: 6, finished: 6 });
  });
});

describe("clade models and clade cost", () => {
  const ENV_KEY = "sk-env-value-0123456789";
  const INLINE_KEY = "sk-inline-value-abcdefghij";

  it("lists configured models with their key status, never the keys", async () => {
    process.env.CLADE_TEST_SET_KEY = ENV_KEY;
    const config = writeConfig("models.json", {
      models: {
        local: { model: spec() },
        missing: { model: "openai:gpt-4o-mini", apiKeyEnv: "CLADE_TEST_UNSET_KEY" },
        fromEnv: { model: "anthropic:claude-haiku-4-5", apiKeyEnv: "CLADE_TEST_SET_KEY" },
        inline: {
          model: "openai:gpt-4o",
          apiKey: INLINE_KEY,
          price: { inputPerMTok: 1, outputPerMTok: 2 },
        },
      },
    });
    const json = await cli("models", "--config", config, "--json");
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout);
    expect(listed.config).toContain("models.json");
    const byName = Object.fromEntries(
      (listed.models as { name: string; key: string; keyVariable: string; price: string }[]).map(
        (m) => [m.name, m],
      ),
    );
    expect(byName.local).toMatchObject({ key: "not needed", keyVariable: "OPENAI_API_KEY" });
    expect(byName.missing).toMatchObject({ key: "MISSING", keyVariable: "CLADE_TEST_UNSET_KEY" });
    expect(byName.fromEnv).toMatchObject({ key: "set", keyVariable: "CLADE_TEST_SET_KEY" });
    expect(byName.inline).toMatchObject({ key: "set", keyVariable: "(config file)" });
    expect(byName.inline?.price).toBe("$1/$2 per Mtok");
    expect(byName.missing?.price).toMatch(/0\.15/); // the built-in price table

    const table = await cli("models", "--config", config);
    expect(table.code).toBe(0);
    for (const word of ["local", "missing", "fromEnv", "inline", "MISSING", "not needed"]) {
      expect(table.stdout).toContain(word);
    }
    for (const output of [json.stdout, json.stderr, table.stdout, table.stderr]) {
      expect(output).not.toContain(ENV_KEY);
      expect(output).not.toContain(INLINE_KEY);
    }

    // The same local model with a key in the environment: "set", still never shown.
    process.env.OPENAI_API_KEY = ENV_KEY;
    const withKey = await cli("models", "--config", config, "--json");
    expect(JSON.parse(withKey.stdout).models[0]).toMatchObject({ name: "local", key: "set" });
    expect(withKey.stdout).not.toContain(ENV_KEY);
  });

  it("says when there is no config, and when a run made no model calls", async () => {
    const none = await cli("models", "--config", writeConfig("empty.json", {}));
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/no models configured/);

    const run = await cli(
      "eval",
      "--env",
      "maze",
      "--agent",
      "reference",
      "--tasks",
      "0-1",
      "--run-id",
      "ref",
      "--db",
      db,
      "--json",
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).usage).toEqual([]);
    const text = await cli("cost", "ref", "--db", db);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe("run ref made no model calls\n");
    const json = await cli("cost", "ref", "--db", db, "--json");
    expect(JSON.parse(json.stdout)).toEqual({ schema: "clade.cost/1", run: "ref", usage: [] });
    const unknown = await cli("cost", "nope", "--db", db);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no run "nope"/);
  });
});

describe("generation and prompt flags", () => {
  it("reach the wire and the run's identity", async () => {
    server.setRule(() => actionReply("react", "move up"));
    const run = "flags";
    const result = await cli(
      ...evalArgs(run, "--agent", "react", "--tasks", "0", "--max-turns", "3"),
      "--system-prompt",
      "You are terse. Answer with Thought and Action.",
      "--temperature",
      "0.3",
      "--max-tokens",
      "64",
      "--history",
      "1",
    );
    expect(result.code).toBe(0);
    const bodies = chatRequests(server.requests).map(
      (r) =>
        r.body as ChatBody & { temperature?: number; max_tokens?: number; messages: unknown[] },
    );
    expect(bodies).toHaveLength(3);
    for (const body of bodies) {
      expect(body.messages[0]).toEqual({
        role: "system",
        content: "You are terse. Answer with Thought and Action.",
      });
      expect(body.temperature).toBe(0.3);
      expect(body.max_tokens).toBe(64);
    }
    // A window of one past turn: the third request drops the first and says so.
    const third = bodies[2]?.messages as { role: string; content: string }[];
    expect(third).toHaveLength(FIRST_TURN_MESSAGES + 2);
    expect(third[3]?.content).toContain("(1 earlier turn omitted.)");

    const shown = JSON.parse((await cli("show", run, "--db", db, "--json")).stdout);
    expect(shown.run.config).toMatchObject({
      model: spec(),
      params: { temperature: 0.3, maxTokens: 64 },
      agentOptions: {
        historyWindow: 1,
        systemPrompt: "You are terse. Answer with Thought and Action.",
      },
    });
    // Another temperature is another run: reusing the id is refused, nothing is sent.
    const before = server.requests.length;
    const conflict = await cli(
      ...evalArgs(run, "--agent", "react", "--tasks", "0", "--max-turns", "3"),
      "--temperature",
      "0.9",
    );
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toMatch(/different configuration/);
    expect(server.requests.length).toBe(before);
  });

  it("a transient 500 is retried and the call is stored once, with its attempts", async () => {
    server.push({ fault: "server_error", status: 503 });
    server.setRule(() => actionReply("react", "move up"));
    const run = "transient";
    const result = await cli(
      ...evalArgs(run, "--agent", "react", "--tasks", "0", "--max-turns", "2"),
    );
    expect(result.code).toBe(0);
    expect(chatRequests(server.requests)).toHaveLength(3);
    const calls = callsOf(run);
    expect(calls.map((c) => [c.turn, c.attempts, c.error])).toEqual([
      [0, 2, null],
      [1, 1, null],
    ]);
    const [episode] = episodesOf(run);
    expect(episode?.error).toBeNull();
    const cost = JSON.parse((await cli("cost", run, "--db", db, "--json")).stdout).usage;
    expect(cost[0]).toMatchObject({ calls: 2, failedCalls: 0, retries: 1 });
  });
});

describe("streaming models", () => {
  it.each(AGENTS)("agent %s: streamed replies are accounted like the others", async (agent) => {
    server.setRule(validRule("maze", agent));
    const config = writeConfig("clade.config.json", {
      models: { streamed: { model: spec(), stream: true, price: PRICE } },
    });
    const run = `stream-${agent}`;
    const result = await cli(
      ...evalArgs(run, "--agent", agent, "--tasks", "0-1", "--max-turns", "2"),
      "--model",
      "streamed",
      "--config",
      config,
    );
    expect(result.code).toBe(0);
    const requests = chatRequests(server.requests);
    expect(requests.length).toBe(4);
    expect(requests.every((r) => r.stream)).toBe(true);
    expect(episodesOf(run).every((e) => e.error === null && e.parse_errors === 0)).toBe(true);
    const served = servedUsage(server.requests);
    const cost = JSON.parse((await cli("cost", run, "--db", db, "--json")).stdout).usage;
    expect(cost[0]).toMatchObject({
      calls: 4,
      inputTokens: served.inputTokens,
      outputTokens: served.outputTokens,
    });
    expect(cost[0].costUsd).toBeCloseTo(
      (served.inputTokens * PRICE.inputPerMTok + served.outputTokens * PRICE.outputPerMTok) / 1e6,
      12,
    );
  });
});

/** Bytes the store takes on disk, its write-ahead log included. */
function storeBytes(): number {
  return [db, `${db}-wal`].reduce((sum, f) => sum + (existsSync(f) ? statSync(f).size : 0), 0);
}

const attemptErrorsOf = (call: CallRow | undefined): string[] =>
  call?.attempt_errors ? (JSON.parse(call.attempt_errors) as string[]) : [];

describe("a huge model reply", () => {
  const HUGE = 50 * 1024 * 1024;
  /** The default limit (DEFAULT_MAX_REPLY_BYTES). */
  const LIMIT = 4 * 1024 * 1024;

  it("fails its call, unretried and uncached; the episodes are errors; resume works; the store stays small", async () => {
    server.setRule(() => ({ fault: "huge_reply", bytes: HUGE, content: "Thought:\nWell, " }));
    const args = evalArgs("huge", "--agent", "react", "--tasks", "0-1", "--max-turns", "3");
    const first = await cli(...args);
    expect(first.code).toBe(5); // every episode errored, none failed, nothing crashed
    expect(JSON.parse(first.stdout).metrics).toMatchObject({ episodes: 2, finished: 0, errors: 2 });
    // One request per episode: an oversized reply is not retried. The client stopped reading
    // early, so the server never got to write most of the 50 MB.
    const requests = chatRequests(server.requests);
    expect(requests).toHaveLength(2);
    for (const request of requests) expect(request.sentBytes).toBeLessThan(HUGE / 4);

    for (const episode of episodesOf("huge")) {
      expect(episode).toMatchObject({ outcome: "error", end_reason: "agent_error", turns: 0 });
      expect(episode.error).toMatch(/reply too large/);
      expect(episode.error).toContain(`${LIMIT}-byte limit (maxReplyBytes)`);
    }
    const calls = callsOf("huge");
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call).toMatchObject({ attempts: 1, response: null, input_tokens: 0, cost_usd: 0 });
      expect(call.error).toMatch(/reply too large/);
      expect(attemptErrorsOf(call)).toHaveLength(1);
    }
    expect(query("SELECT key FROM model_cache")).toEqual([]);
    const cost = JSON.parse((await cli("cost", "huge", "--db", db, "--json")).stdout).usage;
    expect(cost[0]).toMatchObject({ calls: 2, failedCalls: 2, failedAttempts: 2, retries: 0 });
    expect(storeBytes()).toBeLessThan(2 * 1024 * 1024);

    // The same command on a healthy server redoes both episodes; nothing is replayed.
    server.setRule(() => actionReply("react", "move up"));
    const resumed = await cli(...args);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ resumed: true, skipped: 0, ran: 2 });
    expect(episodesOf("huge").every((e) => e.outcome !== "error" && e.turns === 3)).toBe(true);
    expect(callsOf("huge").every((c) => c.error === null)).toBe(true);
    expect(storeBytes()).toBeLessThan(2 * 1024 * 1024);
  });

  it("streamed, or with a declared length, it is stopped the same way", async () => {
    const config = writeConfig("clade.config.json", {
      models: { streamed: { model: spec(), stream: true }, plain: { model: spec() } },
    });
    for (const [model, reply] of [
      ["streamed", { fault: "huge_reply", bytes: HUGE }],
      ["plain", { fault: "huge_reply", bytes: HUGE, declareLength: true }],
    ] as const) {
      server.setRule(() => reply);
      const before = chatRequests(server.requests).length;
      const run = `huge-${model}`;
      const result = await cli(
        ...evalArgs(run, "--agent", "tools", "--tasks", "0", "--max-turns", "2"),
        "--model",
        model,
        "--config",
        config,
      );
      expect(result.code, result.stderr).toBe(5);
      const requests = chatRequests(server.requests).slice(before);
      expect(requests).toHaveLength(1);
      expect(requests[0]?.sentBytes).toBeLessThan(HUGE / 4);
      const [call] = callsOf(run);
      expect(call?.error).toMatch(/reply too large/);
      expect(call?.attempts).toBe(1);
    }
    // A declared length over the limit is refused before any of the body is read.
    expect(query("SELECT key FROM model_cache")).toEqual([]);
    expect(storeBytes()).toBeLessThan(2 * 1024 * 1024);
  });

  it("a cache entry too large, over the limit, malformed or not JSON is dropped, never replayed", async () => {
    server.setRule(() => actionReply("react", "move up"));
    const args = (run: string) =>
      evalArgs(run, "--agent", "react", "--tasks", "0-1", "--max-turns", "2");
    expect((await cli(...args("warm"))).code).toBe(0);
    const served = () => chatRequests(server.requests).length;
    expect(served()).toBe(4);
    const reply = (content: string) =>
      JSON.stringify({
        content,
        toolCalls: [],
        usage: { inputTokens: 1, outputTokens: 1 },
        finishReason: "stop",
        model: "fake-model",
      });
    // What an unbounded client would have cached: a 30 MB reply (too large to be read at all),
    // a 5 MB one (over the 4 MiB limit), a broken shape, and text that is not JSON.
    const poison = [
      reply(`Thought:\n${"x".repeat(30 * 1024 * 1024)}\n\nAction:\nmove up`),
      reply(`Thought:\n${"y".repeat(5 * 1024 * 1024)}\n\nAction:\nmove up`),
      JSON.stringify({ content: 5 }),
      "{not json",
    ];
    const conn = new Database(db);
    const keys = conn.prepare("SELECT key FROM model_cache ORDER BY key").all() as {
      key: string;
    }[];
    expect(keys).toHaveLength(4);
    const update = conn.prepare("UPDATE model_cache SET response = ? WHERE key = ?");
    for (const [i, { key }] of keys.entries()) update.run(poison[i], key);
    conn.close();

    const replay = await cli(...args("replay"));
    expect(replay.code).toBe(0);
    // Every poisoned entry was asked of the server again and replaced with its good answer.
    expect(served()).toBe(8);
    expect(episodesOf("replay").every((e) => e.outcome !== "error" && e.turns === 2)).toBe(true);
    expect(callsOf("replay").every((c) => c.cache_hit === 0 && c.error === null)).toBe(true);
    const [largest] = query<{ bytes: number }>(
      "SELECT MAX(octet_length(response)) AS bytes FROM model_cache",
    );
    expect(largest?.bytes).toBeLessThan(10_000);
    // And now they replay.
    expect((await cli(...args("again"))).code).toBe(0);
    expect(served()).toBe(8);
    expect(callsOf("again").every((c) => c.cache_hit === 1)).toBe(true);
  });
});

describe("failed attempts are stored with their errors and accounted", () => {
  it("a hang and a 500 retried into success: one call, its two failed attempts kept", async () => {
    const config = writeConfig("clade.config.json", {
      models: { slow: { model: spec(), timeoutMs: 300, maxRetries: 2 } },
    });
    server.push({ fault: "hang" }, { fault: "server_error" });
    server.setRule(() => actionReply("react", "move up"));
    const run = "recovered";
    const result = await cli(
      ...evalArgs(run, "--agent", "react", "--tasks", "0", "--max-turns", "2"),
      "--model",
      "slow",
      "--config",
      config,
    );
    expect(result.code).toBe(0);
    const calls = callsOf(run);
    expect(calls.map((c) => [c.turn, c.attempts, c.error])).toEqual([
      [0, 3, null],
      [1, 1, null],
    ]);
    const [timedOut, serverError] = attemptErrorsOf(calls[0]);
    expect(timedOut).toMatch(/timed out after 300 ms/);
    expect(serverError).toMatch(/^HTTP 500 server error/);
    expect(attemptErrorsOf(calls[1])).toEqual([]);
    const cost = JSON.parse((await cli("cost", run, "--db", db, "--json")).stdout).usage;
    expect(cost[0]).toMatchObject({ calls: 2, failedCalls: 0, failedAttempts: 2, retries: 2 });
    const served = servedUsage(server.requests);
    expect(cost[0]).toMatchObject({
      inputTokens: served.inputTokens,
      outputTokens: served.outputTokens,
    });
  });

  it("calls that fail for good (hang, 500, disconnect, 400) are stored with their error and counted by cost", async () => {
    const config = writeConfig("clade.config.json", {
      models: { once: { model: spec(), timeoutMs: 300, maxRetries: 0 } },
    });
    server.push(
      { fault: "hang" },
      { fault: "server_error" },
      { fault: "disconnect" },
      { fault: "bad_request", message: "max_tokens is too large" },
    );
    const run = "failing";
    const result = await cli(
      ...evalArgs(run, "--agent", "react", "--tasks", "0-3", "--max-turns", "1"),
      "--concurrency",
      "1",
      "--model",
      "once",
      "--config",
      config,
    );
    expect(result.code).toBe(5);
    const calls = callsOf(run);
    expect(calls.map((c) => c.error)).toEqual([
      expect.stringMatching(/timed out after 300 ms/),
      expect.stringMatching(/^HTTP 500 server error/),
      expect.stringMatching(/connection dropped/),
      expect.stringMatching(/^HTTP 400 bad request: max_tokens is too large/),
    ]);
    for (const call of calls) {
      expect(call).toMatchObject({ attempts: 1, response: null, input_tokens: 0 });
      // The call's error is its one attempt's, with "gave up after 1 attempt" when retryable.
      const [only, ...more] = attemptErrorsOf(call);
      expect(more).toEqual([]);
      expect(call.error?.startsWith(only ?? "-")).toBe(true);
    }
    const cost = JSON.parse((await cli("cost", run, "--db", db, "--json")).stdout).usage;
    expect(cost).toEqual([
      expect.objectContaining({
        calls: 4,
        failedCalls: 4,
        failedAttempts: 4,
        retries: 0,
        inputTokens: 0,
        outputTokens: 0,
        costUsd: null,
        unpriced: true,
      }),
    ]);
    const text = await cli("cost", run, "--db", db);
    expect(text.code).toBe(0);
  });

  it("a call still hanging at the episode's deadline is stored as abandoned", async () => {
    server.setRule(() => ({ fault: "hang" }));
    const run = "deadline";
    const result = await cli(
      ...evalArgs(run, "--agent", "react", "--tasks", "0", "--max-turns", "2"),
      "--timeout",
      "1",
    );
    expect(result.code).toBe(5);
    const [episode] = episodesOf(run);
    expect(episode).toMatchObject({ outcome: "error", end_reason: "timeout" });
    const calls = callsOf(run);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.error).toMatch(/^model call abandoned: episode exceeded 1000 ms/);
    expect(calls[0]?.attempts).toBe(1);
    expect(calls[0]?.latency_ms).toBeGreaterThanOrEqual(900);
    expect(attemptErrorsOf(calls[0])).toEqual([calls[0]?.error]);
    const cost = JSON.parse((await cli("cost", run, "--db", db, "--json")).stdout).usage;
    expect(cost[0]).toMatchObject({ calls: 1, failedCalls: 1, failedAttempts: 1 });
    const shown = JSON.parse((await cli("show", run, "--db", db, "--json", "--episodes")).stdout);
    expect(shown.usage[0]).toMatchObject({ calls: 1, failedCalls: 1 });
    expect(shown.episodes[0].usage).toMatchObject({ calls: 1, failedCalls: 1 });
  });
});
