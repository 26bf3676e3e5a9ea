/**
 * `clade eval --env helpdesk --user-model SPEC` end to end: the real CLI in-process, the fake
 * model server as the user model (a rule that says each intent as it is) and as the assistant
 * (react), the real store. The user's calls are stored with their episodes and priced, the run's
 * configuration and version say a model played the user, a resume with another user model is
 * refused, the budget counts the user's spend, and the key never reaches the store.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HelpdeskGroundTruth } from "../../src/env/helpdesk/index.js";
import { HELPDESK_INFO } from "../../src/env/helpdesk/text.js";
import { RunStore } from "../../src/store/run-store.js";
import {
  type FakeModelServer,
  type FakeReply,
  type FakeRequest,
  lastMessageText,
  startFakeModelServer,
} from "../../src/testing/fake-model-server.js";
import { runCli as cli } from "../fixtures/cli.js";

const MODEL_ID = "openai-compatible:fake-model";
const PRICE = { inputPerMTok: 3, outputPerMTok: 15 };
const VOICED_VERSION = `${HELPDESK_INFO.version}+user-model`;
const SECRET = "sk-user-model-secret-7Q2x9";

let dir: string;
let db: string;
let server: FakeModelServer;
let savedKey: string | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-user-model-"));
  db = join(dir, "clade.db");
  savedKey = process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_API_KEY;
  server = await startFakeModelServer();
});

afterEach(async () => {
  await server.close();
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

const spec = (model = "fake-model") => `openai-compatible:${server.openaiBaseUrl}#${model}`;

function writeConfig(config: unknown): string {
  const path = join(dir, "clade.config.json");
  writeFileSync(path, JSON.stringify(config));
  return path;
}

interface ChatBody {
  messages: { role: string; content: string }[];
}

const messagesOf = (request: FakeRequest) => (request.body as ChatBody).messages;

/** The user voice's requests carry its system prompt: the employee, never the assistant. */
const isUserVoice = (request: FakeRequest) =>
  /^You are .+ \(employee id E\d{4}\), an employee of/.test(messagesOf(request)[0]?.content ?? "");

/** Says the intent as it is, found in the voice's prompt. */
function echoIntent(request: FakeRequest): FakeReply {
  const prompt = messagesOf(request)[1]?.content ?? "";
  const intent = /Your next message must say: (.*)\n/.exec(prompt)?.[1];
  if (intent === undefined) throw new Error(`no intent in: ${prompt}`);
  return { content: intent };
}

/** The react assistant: declines everything (a reply, so every turn closes). */
const DECLINE: FakeReply = {
  content:
    'Thought:\nI will answer.\n\nAction:\nreply with Action Input: {"message": "Sorry, that is outside what I can help with."}',
};

function query<T>(sql: string, ...params: unknown[]): T[] {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare(sql).all(...params) as T[];
  } finally {
    conn.close();
  }
}

interface CallRow {
  episode_id: number;
  turn: number;
  model: string;
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
}

const callsOf = (run: string) =>
  query<CallRow>(
    `SELECT c.* FROM model_calls c JOIN episodes e ON e.id = c.episode_id
     WHERE e.run_id = ? ORDER BY c.id`,
    run,
  );

/** Each episode's final ground truth and reward, by task. */
function truths(run: string): Map<number, { reward: number; truth: HelpdeskGroundTruth }> {
  const store = RunStore.open(db, { readonly: true });
  try {
    return new Map(
      store.episodes(run).map((e) => [
        e.taskIndex,
        {
          reward: e.reward,
          truth: store.steps(e.id).at(-1)?.info.groundTruth as HelpdeskGroundTruth,
        },
      ]),
    );
  } finally {
    store.close();
  }
}

const evalArgs = (run: string, ...extra: string[]) => [
  "eval",
  "--env",
  "helpdesk",
  "--tasks",
  "0-5",
  "--run-id",
  run,
  "--db",
  db,
  "--json",
  ...extra,
];

describe("clade eval --env helpdesk --user-model", () => {
  it("phrases the user with the model, stores and prices its calls, and keeps the ground truth", async () => {
    server.setRule((request) => (isUserVoice(request) ? echoIntent(request) : undefined));
    const config = writeConfig({ prices: { [MODEL_ID]: PRICE } });
    const run = await cli(
      ...evalArgs("voiced", "--agent", "assistant", "--user-model", spec(), "--config", config),
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({
      runId: "voiced",
      env: "helpdesk",
      envVersion: VOICED_VERSION,
      agent: "assistant",
      model: null,
      userModel: spec(),
      ran: 6,
    });
    expect(summary.metrics).toMatchObject({ episodes: 6, finished: 6, errors: 0 });
    expect(server.unexpectedRequests).toEqual([]);

    // Every request was the user's, and each is stored once, with its episode, as the user's.
    const requests = server.requests.filter((r) => r.path === "/v1/chat/completions");
    expect(requests.length).toBeGreaterThan(6);
    expect(requests.every(isUserVoice)).toBe(true);
    const calls = callsOf("voiced");
    expect(calls).toHaveLength(requests.length);
    expect(new Set(calls.map((c) => c.model))).toEqual(new Set([`user:${MODEL_ID}`]));
    expect(new Set(calls.map((c) => c.episode_id)).size).toBe(6);
    // Priced at the user model's price, and reported as the run's cost.
    const tokens = calls.reduce((t, c) => t + c.input_tokens * 3 + c.output_tokens * 15, 0);
    const cost = calls.reduce((t, c) => t + c.cost_usd, 0);
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeCloseTo(tokens / 1e6, 12);
    expect(summary.costUsd).toBeCloseTo(cost, 12);
    expect(summary.usage).toHaveLength(1);
    expect(summary.usage[0]).toMatchObject({ model: `user:${MODEL_ID}`, calls: calls.length });
    const report = await cli("cost", "voiced", "--db", db);
    expect(report.stdout).toContain(`user:${MODEL_ID}`);

    // The run's configuration names the user model; its version says a model was the user.
    const shown = JSON.parse((await cli("show", "voiced", "--db", db, "--json")).stdout);
    expect(shown.run).toMatchObject({ env: "helpdesk", envVersion: VOICED_VERSION });
    expect(shown.run.config).toMatchObject({ userModel: spec(), userModelParams: {} });

    // The model said each intent as it is, so the episodes equal the rule-based user's.
    const plain = await cli(...evalArgs("plain", "--agent", "assistant"));
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({ envVersion: HELPDESK_INFO.version });
    expect(JSON.parse(plain.stdout).userModel).toBeUndefined();
    expect(truths("voiced")).toEqual(truths("plain"));
    const plainShown = JSON.parse((await cli("show", "plain", "--db", db, "--json")).stdout);
    expect(plainShown.run.config.userModel).toBeUndefined();
  });

  it("refuses to resume a run with another user model, or without one", async () => {
    server.setRule((request) => (isUserVoice(request) ? echoIntent(request) : undefined));
    const first = await cli(...evalArgs("r", "--agent", "assistant", "--user-model", spec()));
    expect(first.code).toBe(0);
    const requests = server.requests.length;
    const other = await cli(
      ...evalArgs("r", "--agent", "assistant", "--user-model", spec("other")),
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/already exists with a different configuration \(.*userModel/);
    const none = await cli(...evalArgs("r", "--agent", "assistant"));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/different configuration \(envVersion.*userModel/);
    // The same user model resumes: nothing left to run, no new call.
    const same = await cli(...evalArgs("r", "--agent", "assistant", "--user-model", spec()));
    expect(same.code).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ resumed: true, ran: 0, skipped: 6 });
    expect(server.requests.length).toBe(requests);
  });

  it("is refused for any other environment: one line, exit 2, nothing written", async () => {
    for (const env of ["maze", "./my-env.ts"]) {
      const result = await cli("eval", "--env", env, "--user-model", spec(), "--db", db);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        `clade: error: --user-model applies to the helpdesk environment only (it phrases the simulated employee's messages), not "${env}"\n`,
      );
    }
    const remote = await cli(
      ...["eval", "--env", "helpdesk", "--env-url", "http://127.0.0.1:9", "--user-model", spec()],
      ...["--db", db],
    );
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/not an environment served over HTTP\n$/);
    expect(existsSync(db)).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it("counts the user model's spend toward --budget-usd", async () => {
    server.setRule((request) => (isUserVoice(request) ? echoIntent(request) : undefined));
    const config = writeConfig({
      prices: { [MODEL_ID]: { inputPerMTok: 1000, outputPerMTok: 1000 } },
    });
    const args = ["--agent", "assistant", "--user-model", spec(), "--config", config];
    const result = await cli(
      ...evalArgs("budget", ...args, "--budget-usd", "0.01", "--concurrency", "1"),
    );
    expect(result.code).toBe(3);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ interrupted: true, stopReason: "budget" });
    expect(summary.notRun).toBeGreaterThan(0);
    expect(summary.costUsd).toBeGreaterThanOrEqual(0.01);
    // An unpriced user model cannot be held to a budget.
    const unpriced = await cli(
      ...evalArgs("budget2", "--agent", "assistant", "--user-model", spec(), "--budget-usd", "1"),
    );
    expect(unpriced.code).toBe(2);
    expect(unpriced.stderr).toMatch(/price/);
  });

  it("keeps the user model's key out of the store and the output", async () => {
    await server.close();
    server = await startFakeModelServer({ apiKey: SECRET });
    server.setRule((request) => (isUserVoice(request) ? echoIntent(request) : undefined));
    const config = writeConfig({
      models: { user: { model: spec(), apiKey: SECRET } },
    });
    const result = await cli(
      ...evalArgs("keyed", "--agent", "assistant", "--user-model", "user", "--config", config),
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).userModel).toBe(spec());
    expect(`${result.stdout}${result.stderr}`).not.toContain(SECRET);
    for (const file of [db, `${db}-wal`]) {
      if (existsSync(file)) expect(readFileSync(file).includes(SECRET)).toBe(false);
    }
    expect(callsOf("keyed").length).toBeGreaterThan(0);
  });
});

describe("clade eval --env helpdesk with an LLM assistant", () => {
  it("--agent react --model: the assistant is the model, the episodes end with their ground truth", async () => {
    server.setRule(() => DECLINE);
    const result = await cli(...evalArgs("react", "--agent", "react", "--model", spec()));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ envVersion: HELPDESK_INFO.version, ran: 6 });
    const outcomes = query<{ outcome: string; end_reason: string }>(
      "SELECT outcome, end_reason FROM episodes WHERE run_id = 'react'",
    );
    expect(outcomes.every((e) => e.end_reason === "done" && e.outcome !== "error")).toBe(true);
    for (const { reward, truth } of truths("react").values()) {
      // Declining everything achieves only the out-of-domain goals.
      const achieved = truth.goals.filter((g) => g.success);
      expect(achieved.every((g) => g.kind === "ood")).toBe(true);
      expect(reward).toBeCloseTo(achieved.length / truth.goals.length, 12);
      expect(truth.turns.length).toBeGreaterThan(0);
    }
    const calls = callsOf("react");
    expect(calls.length).toBe(server.requests.length);
    expect(new Set(calls.map((c) => c.model))).toEqual(new Set([MODEL_ID]));
  });

  it("--agent react --model with --user-model: both models' calls are stored, each as its own", async () => {
    server.setRule((request) => (isUserVoice(request) ? echoIntent(request) : DECLINE));
    const result = await cli(
      ...evalArgs("both", "--agent", "react", "--model", spec(), "--user-model", spec()),
    );
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ model: spec(), userModel: spec(), envVersion: VOICED_VERSION });
    expect(summary.usage.map((u: { model: string }) => u.model).sort()).toEqual([
      MODEL_ID,
      `user:${MODEL_ID}`,
    ]);
    const calls = callsOf("both");
    expect(calls.length).toBe(server.requests.length);
    for (const episode of new Set(calls.map((c) => c.episode_id))) {
      const own = calls.filter((c) => c.episode_id === episode);
      // The opening message is phrased before the assistant's first turn reads it.
      expect(own[0]).toMatchObject({ turn: 0, model: `user:${MODEL_ID}` });
      expect(own[1]).toMatchObject({ turn: 0, model: MODEL_ID });
      // Then each turn: the user's message it read, then the assistant's call.
      for (const call of own.filter((c) => c.model === MODEL_ID)) {
        const userCall = own.find((c) => c.turn === call.turn && c.model !== MODEL_ID);
        expect(userCall, `turn ${call.turn}`).toBeDefined();
      }
    }
    // The assistant's prompt held the words the user model said.
    const agentRequests = server.requests.filter((r) => !isUserVoice(r));
    expect(lastMessageText(agentRequests[0] as FakeRequest)).toMatch(/User: (Hi|Hello), /);
    expect(truths("both").size).toBe(6);
  });
});
