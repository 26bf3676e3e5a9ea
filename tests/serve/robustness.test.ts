/**
 * The env server under load and abuse: parallel instances, per-instance serialisation, idle
 * expiry, the instance cap, slow and vanishing clients, oversized bodies, graceful shutdown.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { solveMaze } from "../../src/agent/reference/maze.js";
import { mazeEnv } from "../../src/env/maze/index.js";
import { requestJson } from "../../src/env/remote/transport.js";
import type { Env, EnvDefinition, StepResult } from "../../src/env/types.js";
import { type RunningEnvServer, startEnvServer } from "../../src/serve/index.js";
import { counterInfo } from "../fixtures/counter-env.js";

let server: RunningEnvServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** POST over keep-alive node:http (fetch costs several times the CPU at 100 clients). */
async function post(base: string, path: string, body: unknown) {
  const reply = await requestJson({
    method: "POST",
    url: new URL(base + path),
    body,
    timeoutMs: 5_000,
  });
  return {
    status: reply.status,
    headers: { get: (name: string) => reply.headers[name] },
    body: reply.body,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An env whose steps take a while and that notices overlapping calls. */
function slowEnv(stepMs: number, log: { overlaps: number; closed: number }): EnvDefinition {
  return {
    info: counterInfo,
    sampleAction: () => "inc",
    create: (): Env => {
      let active = 0;
      let steps = 0;
      return {
        info: counterInfo,
        reset: async () => ({ text: "ready" }),
        step: async (action: string): Promise<StepResult> => {
          active++;
          if (active > 1) log.overlaps++;
          await sleep(stepMs);
          active--;
          steps++;
          return { observation: { text: `${action} ${steps}` }, reward: 0, done: false, info: {} };
        },
        close: async () => {
          log.closed++;
        },
      };
    },
  };
}

/** Raw socket: what a slow or broken client sends. Resolves with all it got once closed. */
function rawExchange(url: string, write: (socket: Socket) => void): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
    socket.on("connect", () => write(socket));
  });
}

describe("env server robustness", () => {
  it("steps 100 instances in parallel, each solving its own maze", async () => {
    server = await startEnvServer(mazeEnv);
    const base = server.url;
    const tasks = Array.from({ length: 100 }, (_, i) => i);
    const rewards = await Promise.all(
      tasks.map(async (task) => {
        const { id } = (await post(base, "/create", {})).body as { id: number };
        let reply = (await post(base, "/reset", { id, data_idx: task, include_instruction: false }))
          .body as { observation: string; done: boolean; reward: number };
        const agent = solveMaze({ env: mazeEnv.info, taskIndex: task, seed: 0, sampleIndex: 0 });
        for (let turn = 0; turn < mazeEnv.info.maxSteps && !reply.done; turn++) {
          const { action } = await agent.act(
            { instruction: "", observation: { text: reply.observation }, history: [] },
            new AbortController().signal,
          );
          reply = (await post(base, "/step", { id, action })).body as typeof reply;
        }
        await post(base, "/close", { id });
        return reply.reward;
      }),
    );
    expect(rewards).toEqual(tasks.map(() => 1));
    expect(server.pool.size).toBe(0);
  });

  it("runs one instance's calls one at a time, in arrival order", async () => {
    const log = { overlaps: 0, closed: 0 };
    server = await startEnvServer(slowEnv(5, log));
    const base = server.url;
    const { id } = (await post(base, "/create", {})).body as { id: number };
    await post(base, "/reset", { id, data_idx: 0 });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(base, "/step", { id, action: `a${i}` })),
    );
    expect(log.overlaps).toBe(0);
    const counts = replies.map((r) =>
      Number((r.body as { observation: string }).observation.split(" ")[1]),
    );
    expect(new Set(counts).size).toBe(20);
    expect(Math.max(...counts)).toBe(20);
  });

  it("closes instances left idle past the timeout, and not busy ones", async () => {
    const log = { overlaps: 0, closed: 0 };
    server = await startEnvServer(slowEnv(1, log), { idleTimeoutMs: 300 });
    const base = server.url;
    const idle = ((await post(base, "/create", {})).body as { id: number }).id;
    const busy = ((await post(base, "/create", {})).body as { id: number }).id;
    await post(base, "/reset", { id: busy, data_idx: 0 });
    for (let i = 0; i < 14; i++) {
      await sleep(50);
      await post(base, "/step", { id: busy, action: "inc" });
    }
    expect(server.pool.ids()).toEqual([busy]);
    expect(log.closed).toBe(1);
    const gone = await post(base, "/reset", { id: idle, data_idx: 0 });
    expect(gone.body).toMatchObject({ code: "unknown_instance" });
    expect((gone.body as { error: string }).error).toMatch(/expired after 0.3 s/);
    await sleep(700);
    expect(server.pool.size).toBe(0);
  });

  it("refuses instances past the cap with 503 + Retry-After in both APIs", async () => {
    server = await startEnvServer(mazeEnv, {
      maxInstances: 2,
      maxInstancesPerClient: 2,
      retryAfterSeconds: 3,
    });
    const base = server.url;
    await post(base, "/create", {});
    await post(base, "/v1/instances", {});
    const agentgym = await post(base, "/create", {});
    expect(agentgym.status).toBe(503);
    expect(agentgym.headers.get("retry-after")).toBe("3");
    expect(agentgym.body).toMatchObject({
      code: "capacity",
      error: expect.stringMatching(/all 2/),
    });
    const v1 = await post(base, "/v1/instances", {});
    expect(v1.status).toBe(503);
    expect(v1.headers.get("retry-after")).toBe("3");
    expect(server.pool.size).toBe(2);
  });

  it("times out a client that never finishes its headers, and keeps serving", async () => {
    server = await startEnvServer(mazeEnv, { headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const started = Date.now();
    const received = await rawExchange(server.url, (socket) => {
      socket.write("POST /create HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    });
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await post(server.url, "/create", {})).body).toMatchObject({ id: expect.any(Number) });
  });

  it("times out a client that never finishes its body, and keeps serving", async () => {
    server = await startEnvServer(mazeEnv, { headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const received = await rawExchange(server.url, (socket) => {
      socket.write(
        "POST /create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          "Content-Length: 100\r\n\r\n{",
      );
    });
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(server.pool.size).toBe(0);
    expect((await post(server.url, "/create", {})).body).toMatchObject({ id: expect.any(Number) });
  });

  it("survives clients that vanish mid-body and bodies past the drain limit", async () => {
    server = await startEnvServer(mazeEnv, { maxBodyBytes: 1024, maxDrainBytes: 4096 });
    await rawExchange(server.url, (socket) => {
      socket.write('POST /step HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{"id":');
      socket.destroy();
    });
    const declared = await rawExchange(server.url, (socket) => {
      socket.write("POST /step HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n");
    });
    expect(declared).toMatch(/^HTTP\/1\.1 200[\s\S]*too_large/);
    expect(declared).toMatch(/connection: close/i);
    const undeclared = await rawExchange(server.url, (socket) => {
      socket.write("POST /v1/instances HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
      const chunk = "z".repeat(2000);
      for (let i = 0; i < 4; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    });
    expect(undeclared).toMatch(/^HTTP\/1\.1 413[\s\S]*too_large/);
    expect((await post(server.url, "/create", {})).body).toMatchObject({ id: expect.any(Number) });
  });

  it("shuts down gracefully: requests in flight finish, instances close", async () => {
    const log = { overlaps: 0, closed: 0 };
    const running = await startEnvServer(slowEnv(200, log));
    const base = running.url;
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(((await post(base, "/create", {})).body as { id: number }).id);
    await post(base, "/reset", { id: ids[0], data_idx: 0 });
    const inFlight = post(base, "/step", { id: ids[0], action: "late" });
    await sleep(50);
    const closing = running.close();
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(finished.body).toMatchObject({ observation: "late 1" });
    await closing;
    expect(log.closed).toBe(3);
    expect(running.pool.size).toBe(0);
    await expect(fetch(`${base}/`)).rejects.toThrow();
  });

  it("cuts requests that outlast the shutdown grace", async () => {
    const log = { overlaps: 0, closed: 0 };
    const running = await startEnvServer(slowEnv(1_000, log), { shutdownGraceMs: 50 });
    const base = running.url;
    const { id } = (await post(base, "/create", {})).body as { id: number };
    await post(base, "/reset", { id, data_idx: 0 });
    const stuck = post(base, "/step", { id, action: "x" }).then(
      () => "answered",
      () => "cut",
    );
    await sleep(20);
    const started = Date.now();
    await running.close();
    expect(Date.now() - started).toBeLessThan(800);
    expect(await stuck).toBe("cut");
    expect(log.closed).toBe(1);
  });

  it("binds to loopback by default", async () => {
    server = await startEnvServer(mazeEnv);
    expect(server.host).toBe("127.0.0.1");
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("says which port is taken", async () => {
    server = await startEnvServer(mazeEnv);
    await expect(startEnvServer(mazeEnv, { port: server.port })).rejects.toThrow(/already in use/);
  });
});
