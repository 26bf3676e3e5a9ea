/**
 * Remote environments: clade's client against clade's server (every built-in env, both the
 * AgentGym and the /v1 API, episode for episode equal to the in-process env), against a tiny
 * "env_idx" server written here, and against servers that fail in the ways real ones do.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { resolveAgent } from "../../src/agent/registry.js";
import type { Turn } from "../../src/agent/types.js";
import { mazeEnv } from "../../src/env/maze/index.js";
import { BUILTIN_ENVS } from "../../src/env/registry.js";
import {
  connectRemoteEnv,
  createRemoteEnv,
  EnvServerUnavailableError,
  RemoteEnv,
  RemoteEnvError,
  RemoteInstanceLostError,
  RemoteProtocolError,
  retryAfterMs,
} from "../../src/env/remote/index.js";
import {
  type Env,
  type EnvDefinition,
  EpisodeDoneError,
  NotResetError,
  UnknownTaskError,
} from "../../src/env/types.js";
import { type RunningEnvServer, startEnvServer } from "../../src/serve/index.js";
import { counterEnv } from "../fixtures/counter-env.js";

/** Tasks per built-in environment in the round trip. */
const ROUND_TRIP_TASKS = 2;
const NO_WAIT = { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 2 };

const servers: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(def: EnvDefinition, options = {}): Promise<RunningEnvServer> {
  const server = await startEnvServer(def, options);
  servers.push(server);
  return server;
}

/**
 * Plays one episode on the local and the remote env in lockstep with the reference solver,
 * expecting the same observation, reward, done flag and info at every step.
 */
async function expectSameEpisode(def: EnvDefinition, remote: Env, taskIndex: number, seed: number) {
  const local = def.create();
  const agent = resolveAgent("reference", def).create({
    env: def.info,
    taskIndex,
    seed,
    sampleIndex: 0,
  });
  const first = await local.reset(taskIndex, { seed });
  expect(await remote.reset(taskIndex, { seed })).toEqual(first);
  const history: Turn[] = [];
  let observation = first;
  let reward = 0;
  for (let turn = 0; turn < def.info.maxSteps; turn++) {
    const reply = await agent.act(
      { instruction: def.info.instruction, observation, history },
      new AbortController().signal,
    );
    const expected = await local.step(reply.action);
    const actual = await remote.step(reply.action);
    expect(actual, `${def.info.name} task ${taskIndex} turn ${turn}`).toEqual(expected);
    history.push({
      action: reply.action,
      message: reply.message ?? reply.action,
      observation: expected.observation,
      reward: expected.reward,
    });
    observation = expected.observation;
    reward = expected.reward;
    if (expected.done) break;
  }
  expect(reward).toBeGreaterThanOrEqual(def.info.successThreshold);
  await local.close?.();
}

describe("round trip: clade's client against clade's server", () => {
  for (const def of BUILTIN_ENVS) {
    it(`plays ${def.info.name} exactly as the in-process env, in both APIs`, async () => {
      const server = await serve(def);
      const tasks = Array.from(
        { length: ROUND_TRIP_TASKS },
        (_, i) => def.info.splits.test.start + i,
      );
      for (const dialect of ["id", "clade"] as const) {
        const remoteDef = await connectRemoteEnv({ url: server.url, dialect });
        expect(remoteDef.info).toEqual(def.info);
        const remote = remoteDef.create();
        for (const [i, task] of tasks.entries()) {
          await expectSameEpisode(def, remote, task, i);
        }
        await remote.close?.();
      }
      expect(server.pool.size).toBe(0);
    });
  }

  it("serves the AgentGym API under the env's prefix too", async () => {
    const server = await serve(mazeEnv);
    const remote = createRemoteEnv({ url: server.url, env: "/maze", info: mazeEnv.info });
    await expectSameEpisode(mazeEnv, remote, 3, 0);
    await remote.close();
  });

  it("steps 100 remote instances in parallel", async () => {
    const server = await serve(mazeEnv);
    const remoteDef = await connectRemoteEnv({ url: server.url });
    const envs = Array.from({ length: 100 }, () => remoteDef.create());
    await Promise.all(envs.map((env, task) => expectSameEpisode(mazeEnv, env, task, 0)));
    expect(server.pool.size).toBe(100);
    await Promise.all(envs.map((env) => env.close?.()));
    expect(server.pool.size).toBe(0);
  });
});

describe("remote env errors against clade's server", () => {
  it("keeps the env API's contract: reset first, nothing after done", async () => {
    const server = await serve(counterEnv);
    for (const dialect of ["id", "clade"] as const) {
      const remote = (await connectRemoteEnv({ url: server.url, dialect })).create();
      await expect(remote.step("inc")).rejects.toBeInstanceOf(NotResetError);
      await remote.reset(0);
      expect((await remote.step("inc")).done).toBe(true);
      await expect(remote.step("inc")).rejects.toBeInstanceOf(EpisodeDoneError);
      await remote.close?.();
    }
  });

  it("raises the server's errors as typed errors", async () => {
    const server = await serve(counterEnv);
    for (const dialect of ["id", "clade"] as const) {
      const remote = createRemoteEnv({ url: server.url, dialect, retry: NO_WAIT });
      const unknown = await remote.reset(999).catch((error: unknown) => error);
      expect(unknown).toBeInstanceOf(UnknownTaskError);
      await remote.reset(1);
      const crash = await remote.step("explode").catch((error: unknown) => error);
      expect(crash).toBeInstanceOf(RemoteEnvError);
      expect((crash as Error).message).toMatch(/env crashed/);
      await remote.close();
    }
  });

  it("replaces an instance the server dropped when resetting", async () => {
    const server = await serve(mazeEnv);
    const remote = createRemoteEnv({ url: server.url, info: mazeEnv.info });
    await remote.reset(1);
    const firstId = remote.instanceId as number;
    expect(firstId).toBeGreaterThanOrEqual(2 ** 31);
    await server.pool.close(firstId);
    await expect(remote.step("move up")).rejects.toBeInstanceOf(RemoteInstanceLostError);
    await remote.reset(1);
    expect(remote.instanceId).not.toBe(firstId);
    expect((await remote.step("move up")).done).toBe(false);
    await remote.close();
    expect(server.pool.size).toBe(0);
  });

  it("retries create on 503, honouring Retry-After, until an instance frees up", async () => {
    const server = await serve(mazeEnv, { maxInstances: 1, retryAfterSeconds: 2 });
    const holder = createRemoteEnv({ url: server.url, info: mazeEnv.info });
    await holder.reset(0);
    const waits: number[] = [];
    const waiting = createRemoteEnv({
      url: server.url,
      info: mazeEnv.info,
      retry: { maxRetries: 3 },
      sleep: async (ms) => {
        waits.push(ms);
        await holder.close();
      },
    });
    await waiting.reset(2);
    expect(waits).toEqual([2000]);
    await waiting.close();
  });

  it("retries create on 429 when this client holds its share, in both dialects", async () => {
    const server = await serve(mazeEnv, { maxInstances: 4, maxInstancesPerClient: 1 });
    for (const dialect of ["id", "clade"] as const) {
      const holder = createRemoteEnv({ url: server.url, dialect, info: mazeEnv.info });
      await holder.reset(0);
      const waits: number[] = [];
      const waiting = createRemoteEnv({
        url: server.url,
        dialect,
        info: mazeEnv.info,
        retry: { maxRetries: 3 },
        sleep: async (ms) => {
          waits.push(ms);
          await holder.close();
        },
      });
      await waiting.reset(2);
      expect(waits).toEqual([1000]);
      expect(waiting.instanceId).toBeGreaterThanOrEqual(2 ** 31);
      await waiting.close();
    }
  });

  it("gives up on a full server with its message after the retries", async () => {
    const server = await serve(mazeEnv, { maxInstances: 1 });
    await createRemoteEnv({ url: server.url }).reset(0);
    const remote = createRemoteEnv({
      url: server.url,
      retry: { maxRetries: 2 },
      sleep: async () => {},
    });
    await expect(remote.reset(0)).rejects.toThrow(/all 1 environment instances are in use/);
  });

  it("never throws from close, even when the server is gone", async () => {
    const server = await serve(mazeEnv);
    const remote = createRemoteEnv({ url: server.url, retry: { maxRetries: 0 } });
    await remote.reset(0);
    await server.close();
    await expect(remote.close()).resolves.toBeUndefined();
  });
});

describe("no server listening", () => {
  async function deadUrl(): Promise<string> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return `http://127.0.0.1:${port}`;
  }

  it("says to start the environment server", async () => {
    const url = await deadUrl();
    const remote = createRemoteEnv({ url, retry: NO_WAIT });
    const error = await remote.reset(0).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EnvServerUnavailableError);
    expect((error as Error).message).toBe(
      `no environment server at ${url} — is the environment server started? ` +
        "(connection refused, 4 attempts)",
    );
    await expect(connectRemoteEnv({ url, retry: NO_WAIT })).rejects.toThrow(
      /is the environment server started\?/,
    );
  });

  it("rejects URLs that cannot name a server", () => {
    expect(() => createRemoteEnv({ url: "not a url" })).toThrow(/not a URL/);
    expect(() => createRemoteEnv({ url: "ftp://127.0.0.1/" })).toThrow(/must be http/);
  });
});

/** A scripted HTTP server: each request is answered by `answer`, and all are recorded. */
interface FakeServer {
  url: string;
  requests: Array<{ method: string; path: string; body: unknown }>;
  close(): Promise<void>;
}

type Answer = (
  request: { method: string; path: string; body: unknown; count: number },
  response: ServerResponse,
) => void;

async function fakeServer(answer: Answer): Promise<FakeServer> {
  const requests: FakeServer["requests"] = [];
  const counts = new Map<string, number>();
  const server: Server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString();
      const body = text ? JSON.parse(text) : undefined;
      const path = request.url ?? "/";
      const key = `${request.method} ${path.split("?")[0]}`;
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      requests.push({ method: request.method ?? "", path, body });
      answer({ method: request.method ?? "", path, body, count }, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const fake = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(fake);
  return fake;
}

function reply(response: ServerResponse, status: number, body: unknown, headers = {}) {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

/** A WebShop-like env_idx server: a counter to 2 per instance. */
function envIdxServer(options: { terminated?: boolean } = {}): Answer {
  const counts = new Map<number, number>();
  let next = 0;
  return ({ method, path, body }, response) => {
    const input = (body ?? {}) as Record<string, unknown>;
    const envIdx = Number(input.env_idx ?? new URL(path, "http://x").searchParams.get("env_idx"));
    if (method === "POST" && path === "/create") {
      counts.set(next, 0);
      return reply(response, 200, next++);
    }
    if (!counts.has(envIdx))
      return reply(response, 200, { error: `The id ${envIdx} is not valid.` });
    const count = counts.get(envIdx) as number;
    if (path === "/reset") {
      counts.set(envIdx, 0);
      return reply(response, 200, [null, null]);
    }
    if (path.startsWith("/observation")) return reply(response, 200, `count ${count}`);
    if (path === "/step") {
      if (count >= 2) {
        return reply(response, 200, { error: `The task with environment ${envIdx} has finished.` });
      }
      counts.set(envIdx, count + 1);
      const done = count + 1 >= 2;
      const result = options.terminated
        ? {
            observation: `count ${count + 1}`,
            reward: done ? 1 : 0,
            terminated: done,
            truncated: false,
            info: { n: count + 1 },
          }
        : { state: `count ${count + 1}`, reward: done ? 1 : 0, done, info: { n: count + 1 } };
      return reply(response, 200, result);
    }
    if (path === "/close") {
      counts.delete(envIdx);
      return reply(response, 200, true);
    }
    return reply(response, 404, { detail: "Not Found" });
  };
}

describe("env_idx dialect against a tiny fake server", () => {
  it("creates, resets (observation fetched), steps to done and closes", async () => {
    const fake = await fakeServer(envIdxServer());
    const remote = createRemoteEnv({ url: fake.url, dialect: "env_idx", info: { name: "shop" } });
    expect(await remote.reset(7)).toEqual({ text: "count 0" });
    expect(await remote.step("click[buy]")).toEqual({
      observation: { text: "count 1" },
      reward: 0,
      done: false,
      info: { n: 1 },
    });
    expect(await remote.step("click[buy]")).toMatchObject({ reward: 1, done: true });
    await expect(remote.step("click[buy]")).rejects.toBeInstanceOf(EpisodeDoneError);
    await remote.close();
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /create",
      "POST /reset",
      "GET /observation?env_idx=0",
      "POST /step",
      "POST /step",
      "POST /close",
    ]);
    expect(fake.requests[1]?.body).toEqual({ env_idx: 0, id: 7, item_id: 7, session_id: 7 });
    expect(fake.requests[3]?.body).toEqual({ env_idx: 0, action: "click[buy]" });
  });

  it("reads terminated/truncated as done and sends the task under the field asked", async () => {
    const fake = await fakeServer(envIdxServer({ terminated: true }));
    const remote = createRemoteEnv({ url: fake.url, dialect: "env_idx", taskField: "item_id" });
    await remote.reset(3);
    expect(fake.requests[1]?.body).toEqual({ env_idx: 0, item_id: 3 });
    await remote.step("a");
    expect(await remote.step("a")).toEqual({
      observation: { text: "count 2" },
      reward: 1,
      done: true,
      info: { n: 2 },
    });
  });

  it("maps errors-as-200 to typed errors", async () => {
    const fake = await fakeServer(({ path, count }, response) => {
      if (path === "/create") return reply(response, 200, 0);
      if (path === "/reset") return reply(response, 200, { state: "start" });
      if (count === 1)
        return reply(response, 200, { error: "The task with environment 0 has finished." });
      return reply(response, 200, { error: "The id 0 is not valid." });
    });
    const remote = createRemoteEnv({ url: fake.url, dialect: "env_idx", info: { name: "shop" } });
    expect(await remote.reset(0)).toEqual({ text: "start" });
    const done = await remote.step("a").catch((caught: unknown) => caught);
    expect(done).toBeInstanceOf(EpisodeDoneError);
    expect((done as Error).message).toMatch(/has finished/);
    const lost = await remote.step("a").catch((caught: unknown) => caught);
    expect(lost).toBeInstanceOf(RemoteInstanceLostError);
    expect((lost as Error).message).toMatch(
      /shop: the environment server said: The id 0 is not valid/,
    );
  });
});

describe("instance ids", () => {
  it("sends back ids up to 2^53 - 1 exactly, whether numbers or digit strings", async () => {
    const largest = Number.MAX_SAFE_INTEGER;
    for (const created of [{ id: largest }, { id: String(largest) }, largest]) {
      const fake = await fakeServer(({ path }, response) => {
        if (path === "/create") return reply(response, 200, created);
        if (path === "/reset") return reply(response, 200, { observation: "start" });
        return reply(response, 200, { observation: "moved", reward: 0, done: false });
      });
      const remote = createRemoteEnv({ url: fake.url });
      await remote.reset(0);
      await remote.step("go");
      expect(remote.instanceId).toBe(largest);
      expect(fake.requests.map((r) => (r.body as { id?: unknown } | undefined)?.id)).toEqual([
        undefined,
        largest,
        largest,
      ]);
      await fake.close();
    }
  });

  it("refuses an id JSON cannot carry exactly instead of using a rounded one", async () => {
    const fake = await fakeServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"id": 9007199254740993}');
    });
    const remote = createRemoteEnv({ url: fake.url, retry: NO_WAIT });
    const error = await remote.reset(0).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RemoteProtocolError);
    expect((error as Error).message).toMatch(/between 0 and 2\^53 - 1/);
  });
});

describe("retries and their limits", () => {
  it("retries create and reset after a dropped connection, but never a step", async () => {
    const fake = await fakeServer(({ path, count }, response) => {
      if (count === 1 && path !== "/close") {
        response.socket?.destroy();
        return;
      }
      if (path === "/create") return reply(response, 200, { id: 5 });
      if (path === "/reset") return reply(response, 200, { id: 5, observation: "start" });
      return reply(response, 200, { observation: "moved", reward: 0, done: false });
    });
    const remote = createRemoteEnv({ url: fake.url, retry: NO_WAIT });
    expect(await remote.reset(0)).toEqual({ text: "start" });
    const error = await remote.step("go").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RemoteEnvError);
    expect((error as Error).message).toMatch(/\/step, 1 attempt/);
    const paths = fake.requests.map((r) => r.path);
    expect(paths).toEqual(["/create", "/create", "/reset", "/reset", "/step"]);
    expect(await remote.step("go")).toMatchObject({ observation: { text: "moved" } });
  });

  it("retries a step answered 503, which the server did not act on", async () => {
    const waits: number[] = [];
    const fake = await fakeServer(({ path, count }, response) => {
      if (path === "/create") return reply(response, 200, { id: 0 });
      if (path === "/reset") return reply(response, 200, { observation: "start" });
      if (count === 1) return reply(response, 503, { error: "busy" }, { "retry-after": "0" });
      return reply(response, 200, { observation: "ok", reward: 1, done: true });
    });
    const remote = createRemoteEnv({
      url: fake.url,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await remote.reset(0);
    expect(await remote.step("go")).toMatchObject({ reward: 1, done: true });
    expect(waits).toEqual([0]);
    expect(fake.requests.filter((r) => r.path === "/step")).toHaveLength(2);
  });

  it("does not wait longer than allowed for a Retry-After", async () => {
    const fake = await fakeServer((_request, response) =>
      reply(response, 503, { error: "come back tomorrow" }, { "retry-after": "86400" }),
    );
    const waits: number[] = [];
    const remote = createRemoteEnv({
      url: fake.url,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    await expect(remote.reset(0)).rejects.toThrow(/come back tomorrow/);
    expect(waits).toEqual([]);
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterMs("2")).toBe(2000);
    expect(retryAfterMs("0.5")).toBe(500);
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(retryAfterMs("Wed, 01 Jan 2025 00:00:03 GMT", now)).toBe(3000);
    expect(retryAfterMs("-3")).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });

  it("explains replies of the wrong shape and HTTP errors", async () => {
    const fake = await fakeServer(({ path }, response) => {
      if (path === "/create") return reply(response, 200, { id: 0 });
      if (path === "/reset") return reply(response, 200, { observation: "start" });
      if (path === "/step") return reply(response, 200, { nothing: true });
      return reply(response, 404, { detail: "Not Found" });
    });
    const remote = createRemoteEnv({ url: fake.url });
    await remote.reset(0);
    const shape = await remote.step("x").catch((caught: unknown) => caught);
    expect(shape).toBeInstanceOf(RemoteProtocolError);
    expect((shape as Error).message).toMatch(/dialect "id"/);

    const wrongPrefix = createRemoteEnv({ url: fake.url, env: "nope" });
    await expect(wrongPrefix.reset(0)).rejects.toThrow(/HTTP 404.*check the URL/);
  });

  it("uses caller-given info for servers that are not clade's", async () => {
    const fake = await fakeServer((_request, response) =>
      reply(response, 404, { detail: "Not Found" }),
    );
    const def = await connectRemoteEnv({
      url: fake.url,
      env: "/textcraft",
      info: { maxSteps: 30, instruction: "Craft things." },
    });
    expect(def.info).toMatchObject({
      name: "textcraft",
      maxSteps: 30,
      instruction: "Craft things.",
    });
    expect(def.create()).toBeInstanceOf(RemoteEnv);
    expect(def.sampleAction(() => 0.6, { text: "", availableActions: ["a", "b"] })).toBe("b");
  });
});
