/**
 * Replays AgentGym's Python env clients against a server, from the request fixtures in
 * tests/fixtures/agentgym (written from reading the clients; see its README). A ReplayClient
 * sends what the client's constructor, reset(), observe(), step() and close() send, checks the
 * status and the reply fields the client reads, and builds what the client hands back
 * (StepOutput), so a test sees an episode the way AgentGym (or AgentGym-RL) would.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveAgent } from "../../src/agent/registry.js";
import type { Agent, Turn } from "../../src/agent/types.js";
import { findEnv } from "../../src/env/registry.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "agentgym");

interface RequestSpec {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
}

export interface ClientFixture {
  client: string;
  agentgym_task: string;
  clade_env: string;
  base_path: string;
  also_at?: string[];
  create: RequestSpec & { status: number; id_from: "id" | "$body"; requires: string[] };
  after_create: (RequestSpec & { reads: string })[];
  reset: RequestSpec & { requires: string[] };
  observe:
    | { from: "reset"; field: string; client_prefix?: string }
    | { from: "get"; method: "GET"; path: string }
    | { from: "client"; text: string };
  reply: string;
  action_rule: "action-line" | "split-action" | "sql-block" | "raw";
  step: RequestSpec & {
    requires: string[];
    output: { state: string; reward: string; done: string };
  };
  close: RequestSpec | null;
  tasks: number[];
  max_rounds: number;
}

export const CLIENT_FIXTURES = ["babyai", "textcraft", "maze", "wordle", "sqlgym", "todo"] as const;

export function loadFixture(name: string): ClientFixture {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")) as ClientFixture;
}

export function loadJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(FIXTURES, name), "utf8")) as Record<string, unknown>;
}

/** One request as sent and answered. */
export interface Exchange {
  method: string;
  path: string;
  body: unknown;
  status: number;
  reply: unknown;
}

/** What a client's step() returns. */
export interface StepOutput {
  state: string;
  reward: number;
  done: boolean;
}

/** A reply-field read the client would fail on (its KeyError, or a refused create). */
export class ClientFailure extends Error {
  override name = "ClientFailure";
}

const ONLY_ONE_ACTION =
  "Error: Only one 'Action' is allowed per response. Please adjust your response.";

/** Fills "{id}", "{task}", "{action}" in a body: whole-string placeholders keep their type. */
function fill(template: unknown, values: Record<string, unknown>): unknown {
  if (typeof template === "string") {
    const whole = /^\{(\w+)\}$/.exec(template);
    if (whole && (whole[1] as string) in values) return values[whole[1] as string];
    return template.replace(/\{(\w+)\}/g, (m, key: string) =>
      key in values ? String(values[key]) : m,
    );
  }
  if (Array.isArray(template)) return template.map((item) => fill(item, values));
  if (template !== null && typeof template === "object") {
    return Object.fromEntries(
      Object.entries(template).map(([key, value]) => [key, fill(value, values)]),
    );
  }
  return template;
}

/** The action a client's step() sends for a model reply, or undefined when it sends nothing. */
export function clientAction(
  rule: ClientFixture["action_rule"],
  client: string,
  reply: string,
): string | undefined {
  if (rule === "raw") return reply;
  if (rule === "sql-block") {
    const afterFence = reply.split("```sql").at(-1) ?? "";
    return (afterFence.split("```")[0] ?? "").trim();
  }
  if (rule === "action-line") {
    const matches = [...reply.matchAll(/Action:\s*([\s\S]*?)(?=\n|$)/g)].map((m) => m[1] ?? "");
    if (matches.length > 1) return undefined;
    let action = (matches.at(-1) ?? "").replace(/[^A-Za-z0-9, ]+/g, "");
    action = action.split(/\s+/).filter(Boolean).join(" ");
    if (client === "TextCraftEnvClient" && action.toLowerCase() === "look") action = "inventory";
    return action;
  }
  let text = reply.endsWith("</s>") ? reply.slice(0, -5) : reply;
  const parts = text.split("Action:");
  text = (parts.length > 1 ? parts[1] : parts[0])?.trim() ?? "";
  if (client === "MazeEnvClient" && /^(up|down|left|right)$/i.test(text)) {
    text = `move ${text.toLowerCase()}`;
  }
  if (client === "WordleEnvClient") {
    const word = text.trim().toLowerCase();
    if (/^[a-z]{5}$/.test(word)) text = word.split("").join(" ");
  }
  return text;
}

function field(reply: unknown, name: string, where: string): unknown {
  if (typeof reply !== "object" || reply === null || !(name in reply)) {
    throw new ClientFailure(
      `${where}: the client reads "${name}", missing in ${JSON.stringify(reply)?.slice(0, 300)}`,
    );
  }
  return (reply as Record<string, unknown>)[name];
}

export class ReplayClient {
  readonly log: Exchange[] = [];
  id: unknown;
  /** What observe() returns. */
  private observation = "";
  /** The server's own text of the latest observation (what the solver reads). */
  serverObservation = "";
  vocabulary: string[] = [];

  private constructor(
    readonly fixture: ClientFixture,
    /** env_server_base: the server URL plus the path the client is pointed at. */
    readonly base: string,
  ) {}

  /** The client's constructor: create (and Wordle's vocabulary). */
  static async create(fixture: ClientFixture, base: string): Promise<ReplayClient> {
    const client = new ReplayClient(fixture, base);
    const created = await client.send(fixture.create, {});
    if (created.status !== fixture.create.status) {
      throw new ClientFailure(`Failed to create environment: <Response [${created.status}]>`);
    }
    for (const name of fixture.create.requires) field(created.reply, name, "create");
    client.id =
      fixture.create.id_from === "$body" ? created.reply : field(created.reply, "id", "create");
    for (const extra of fixture.after_create) {
      const got = await client.send(extra, { id: client.id });
      client.expectOk(got);
      if (!Array.isArray(got.reply) || !got.reply.every((word) => typeof word === "string")) {
        throw new ClientFailure(
          `${extra.path}: expected a list of words, got ${JSON.stringify(got.reply)}`,
        );
      }
      client.vocabulary = got.reply as string[];
    }
    return client;
  }

  private async send(spec: RequestSpec, values: Record<string, unknown>): Promise<Exchange> {
    const path = fill(spec.path, values) as string;
    const body =
      spec.body === undefined || spec.body === null ? undefined : fill(spec.body, values);
    const response = await fetch(this.base + path, {
      method: spec.method,
      ...(body === undefined
        ? {}
        : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let reply: unknown = text;
    try {
      reply = JSON.parse(text);
    } catch {
      // Kept as text: the client's res.json() would raise here.
    }
    const exchange = { method: spec.method, path, body, status: response.status, reply };
    this.log.push(exchange);
    return exchange;
  }

  private expectOk(exchange: Exchange): void {
    if (exchange.status !== 200) {
      throw new ClientFailure(
        `${exchange.method} ${exchange.path}: assert status 200, got ${exchange.status}`,
      );
    }
  }

  async reset(task: number): Promise<unknown> {
    const got = await this.send(this.fixture.reset, { id: this.id, task });
    this.expectOk(got);
    for (const name of this.fixture.reset.requires) field(got.reply, name, "reset");
    const observe = this.fixture.observe;
    if (observe.from === "reset") {
      const text = field(got.reply, observe.field, "reset") as string;
      this.serverObservation = text;
      this.observation = observe.client_prefix ? `<LMRL-Gym maze instructions>\n${text}` : text;
    } else if (observe.from === "client") {
      this.observation = `<LMRL-Gym Wordle instructions>\n${this.vocabulary.join("\n")}`;
      this.serverObservation = "";
    }
    return got.reply;
  }

  /** observe(): the first observation as the client gives it to the model. */
  async observe(): Promise<string> {
    const observe = this.fixture.observe;
    if (observe.from === "get") {
      const got = await this.send(observe, { id: this.id });
      this.expectOk(got);
      if (typeof got.reply !== "string") {
        throw new ClientFailure(`observe: expected a string, got ${JSON.stringify(got.reply)}`);
      }
      this.observation = got.reply;
      this.serverObservation = got.reply;
    }
    return this.observation;
  }

  /** step(reply): what the client sends for the model's reply, and the StepOutput it returns. */
  async step(reply: string): Promise<StepOutput> {
    const action = clientAction(this.fixture.action_rule, this.fixture.client, reply);
    if (action === undefined) return { state: ONLY_ONE_ACTION, reward: 0, done: false };
    const got = await this.send(this.fixture.step, { id: this.id, action });
    this.expectOk(got);
    for (const name of this.fixture.step.requires) field(got.reply, name, "step");
    const out = this.fixture.step.output;
    const state = field(got.reply, out.state, "step") as string;
    this.serverObservation = state;
    return {
      state,
      reward: field(got.reply, out.reward, "step") as number,
      done: field(got.reply, out.done, "step") as boolean,
    };
  }

  /** close(), when the client has one; false when it has none (AttributeError). */
  async close(): Promise<boolean> {
    if (!this.fixture.close) return false;
    const got = await this.send(this.fixture.close, { id: this.id });
    this.expectOk(got);
    return true;
  }
}

/** Plays the model: the env's reference solver, its turns written the way the client asks. */
export class ReferenceModel {
  private readonly agent: Agent;
  private readonly history: Turn[] = [];
  private lastAction = "";

  constructor(
    private readonly fixture: ClientFixture,
    taskIndex: number,
  ) {
    const def = findEnv(fixture.clade_env);
    this.agent = resolveAgent("reference", def).create({
      env: def.info,
      taskIndex,
      seed: 0,
      sampleIndex: 0,
    });
  }

  /** The model's reply to the server's latest observation text. */
  async reply(serverText: string): Promise<string> {
    const state = {
      instruction: "",
      observation: { text: serverText },
      history: this.history,
    };
    const turn = await this.agent.act(state, new AbortController().signal);
    this.lastAction = turn.action;
    const message = turn.message ?? turn.action;
    const thought = /Thought:\s*([\s\S]*?)\n\nAction:/.exec(message)?.[1] ?? "I act.";
    const values: Record<string, string> = {
      thought,
      action: turn.action,
      action_call: turn.action.replace(/^Action:\s*/, ""),
      sql: turn.action.replace(/^(query|answer):\s*/, ""),
      spaced: turn.action.split("").join(" "),
    };
    return this.fixture.reply.replace(/\{(\w+)\}/g, (m, key: string) => values[key] ?? m);
  }

  /** Tells the solver what came back for its last action. */
  observe(text: string, reward: number): void {
    this.history.push({
      action: this.lastAction,
      message: this.lastAction,
      observation: { text },
      reward,
    });
  }
}

/** One episode as AgentGym's evaluation loop runs it: reset, observe, step until done. */
export async function playEpisode(
  client: ReplayClient,
  task: number,
): Promise<{ first: string; outputs: StepOutput[] }> {
  const model = new ReferenceModel(client.fixture, task);
  await client.reset(task);
  const first = await client.observe();
  const outputs: StepOutput[] = [];
  let text = client.serverObservation;
  for (let round = 0; round < client.fixture.max_rounds; round++) {
    const output = await client.step(await model.reply(text));
    outputs.push(output);
    text = output.state;
    model.observe(text, output.reward);
    if (output.done) break;
  }
  return { first, outputs };
}
