/**
 * Fair use of one env server by several clients: ids nobody can guess, per-client caps next to
 * the global one. Clients are told apart by remote address; on Linux the whole 127/8 block is
 * loopback, so 127.0.0.2 and 127.0.0.3 act as two other machines.
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { mazeEnv } from "../../src/env/maze/index.js";
import {
  clientOf,
  InstancePool,
  MAX_INSTANCE_ID,
  MIN_INSTANCE_ID,
  type RunningEnvServer,
  randomInstanceId,
  resolveEnvServerOptions,
  startEnvServer,
} from "../../src/serve/index.js";

const A = "127.0.0.2";
const B = "127.0.0.3";
const C = "127.0.0.4";

let server: RunningEnvServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent, to check how ids are written. */
  text: string;
  body: unknown;
}

/** One request from `from` (a local source address), on a fresh connection. */
function call(
  from: string,
  method: string,
  path: string,
  body?: unknown,
  base = (server as RunningEnvServer).url,
): Promise<Reply> {
  const url = new URL(base + path);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method,
        localAddress: from,
        agent: false,
        headers: payload === undefined ? {} : { "content-type": "application/json" },
      },
      (incoming) => {
        let text = "";
        incoming.setEncoding("utf8");
        incoming.on("data", (chunk: string) => {
          text += chunk;
        });
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            text,
            body: text === "" ? undefined : JSON.parse(text),
          }),
        );
      },
    );
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

async function createId(from: string): Promise<number> {
  const reply = await call(from, "POST", "/create", {});
  expect(reply.status).toBe(200);
  return (reply.body as { id: number }).id;
}

describe("instance ids", () => {
  it("are random integers in [2^31, 2^53), written as plain JSON integers", async () => {
    server = await startEnvServer(mazeEnv);
    const created = await call(A, "POST", "/create", {});
    const id = (created.body as { id: number }).id;
    expect(Number.isSafeInteger(id)).toBe(true);
    expect(id).toBeGreaterThanOrEqual(MIN_INSTANCE_ID);
    // A JSON number, digit for digit: what AgentGym's Python clients read as an int.
    expect(created.text).toContain(`"id":${id}`);
    const v1 = await call(A, "POST", "/v1/instances", {});
    expect(v1.text).toMatch(/^\{"id":\d{10,16}\}$/);
    // Given back as a JSON integer or in a query string, the id finds its instance.
    expect((await call(A, "POST", "/reset", { id, data_idx: 3 })).body).toMatchObject({
      id,
      task_index: 3,
    });
    expect((await call(A, "GET", `/observation?id=${id}`)).body).toEqual(expect.any(String));
  });

  it("draws uniformly over the range and never repeats a live or closed id", () => {
    for (let i = 0; i < 2000; i++) {
      const id = randomInstanceId();
      expect(Number.isSafeInteger(id) && id >= MIN_INSTANCE_ID && id <= MAX_INSTANCE_ID).toBe(true);
    }
    // Injected draws that collide: the pool skips ids in use and ids recently closed.
    const draws = [5_000_000_000, 5_000_000_000, 6_000_000_000, 5_000_000_000, 6_000_000_000];
    draws.push(7_000_000_000);
    const pool = new InstancePool(mazeEnv, {
      maxInstances: 10,
      idleTimeoutMs: 0,
      retryAfterSeconds: 1,
      randomId: () => draws.shift() as number,
    });
    const first = pool.create().id;
    const second = pool.create().id;
    expect([first, second]).toEqual([5_000_000_000, 6_000_000_000]);
    void pool.close(first);
    expect(pool.create().id).toBe(7_000_000_000);
    void pool.closeAll();
  });

  it("give another client nothing to guess: sequential and nearby ids are unknown", async () => {
    server = await startEnvServer(mazeEnv);
    const mine = await createId(A);
    await call(A, "POST", "/reset", { id: mine, data_idx: 1 });
    const guesses = [
      ...Array.from({ length: 64 }, (_, i) => i),
      mine - 1,
      mine + 1,
      MIN_INSTANCE_ID,
    ];
    for (const guess of guesses) {
      const step = await call(B, "POST", "/step", { id: guess, action: "move up" });
      expect(step.status).toBe(200);
      expect(step.body).toMatchObject({ code: "unknown_instance" });
    }
    const sample = guesses.slice(60);
    for (const guess of sample) {
      expect((await call(B, "GET", `/observation?id=${guess}`)).body).toMatchObject({
        code: "unknown_instance",
      });
      expect((await call(B, "POST", "/close", { id: guess })).body).toBe(false);
      expect((await call(B, "POST", `/v1/instances/${guess}/step`, { action: "x" })).status).toBe(
        404,
      );
      expect((await call(B, "DELETE", `/v1/instances/${guess}`)).status).toBe(404);
    }
    // A's instance is untouched by all that.
    expect((await call(A, "GET", `/detail?id=${mine}`)).body).toMatchObject({
      id: mine,
      steps: 0,
      task_index: 1,
    });
    expect(server.pool.size).toBe(1);
  });

  it("still say when an id was closed rather than never issued", async () => {
    server = await startEnvServer(mazeEnv);
    const id = await createId(A);
    await call(A, "POST", "/close", { id });
    const late = await call(A, "POST", "/step", { id, action: "move up" });
    expect(late.body).toMatchObject({
      code: "unknown_instance",
      error: expect.stringMatching(/no longer exists/),
    });
    const never = await call(A, "POST", "/step", { id: id + 1, action: "move up" });
    expect(never.body).toMatchObject({
      code: "unknown_instance",
      error: expect.stringMatching(/create one first/),
    });
  });
});

describe("per-client caps", () => {
  it("refuse a client at its cap with 429 + Retry-After while others still get instances", async () => {
    server = await startEnvServer(mazeEnv, {
      maxInstances: 8,
      maxInstancesPerClient: 3,
      retryAfterSeconds: 2,
    });
    const ofA = [await createId(A), await createId(A), await createId(A)];
    const refused = await call(A, "POST", "/create", {});
    expect(refused.status).toBe(429);
    expect(refused.headers["retry-after"]).toBe("2");
    expect(refused.body).toMatchObject({
      code: "client_capacity",
      error: expect.stringMatching(/holds 3 /),
    });
    const refusedV1 = await call(A, "POST", "/v1/instances", {});
    expect(refusedV1.status).toBe(429);
    expect(refusedV1.headers["retry-after"]).toBe("2");

    // Another client is not affected, and has its own count.
    await createId(B);
    expect((await call(B, "GET", "/v1/info")).body).toMatchObject({
      instances: { active: 4, max: 8, maxPerClient: 3, yours: 1 },
    });
    // A closing one of its instances makes room for A again.
    expect((await call(A, "POST", "/close", { id: ofA[0] })).body).toBe(true);
    await createId(A);
    expect(server.pool.countOf(A)).toBe(3);
    expect(server.pool.countOf(B)).toBe(1);
  });

  it("count instances closed by idle expiry as gone", async () => {
    server = await startEnvServer(mazeEnv, {
      maxInstances: 4,
      maxInstancesPerClient: 1,
      idleTimeoutMs: 100,
    });
    await createId(A);
    expect((await call(A, "POST", "/create", {})).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.pool.countOf(A)).toBe(0);
    await createId(A);
  });

  it("leave the global cap in force: 503 once every instance is taken", async () => {
    server = await startEnvServer(mazeEnv, { maxInstances: 4, maxInstancesPerClient: 2 });
    await Promise.all([createId(A), createId(A), createId(B), createId(B)]);
    const full = await call(C, "POST", "/create", {});
    expect(full.status).toBe(503);
    expect(full.body).toMatchObject({ code: "capacity", error: expect.stringMatching(/all 4/) });
    expect(full.headers["retry-after"]).toBe("1");
    // A client at its own cap on a full server hears about the server first.
    expect((await call(A, "POST", "/create", {})).status).toBe(503);
  });

  it("default to half of maxInstances and refuse more than maxInstances", () => {
    expect(resolveEnvServerOptions({}).maxInstancesPerClient).toBe(512);
    expect(resolveEnvServerOptions({ maxInstances: 10 }).maxInstancesPerClient).toBe(5);
    expect(resolveEnvServerOptions({ maxInstances: 1 }).maxInstancesPerClient).toBe(1);
    expect(
      resolveEnvServerOptions({ maxInstances: 10, maxInstancesPerClient: 10 })
        .maxInstancesPerClient,
    ).toBe(10);
    expect(() => resolveEnvServerOptions({ maxInstances: 10, maxInstancesPerClient: 11 })).toThrow(
      /must not exceed/,
    );
    expect(() => resolveEnvServerOptions({ maxInstancesPerClient: 0 })).toThrow();
  });

  it("count an IPv4 client of a dual-stack listener under its IPv4 address", async () => {
    try {
      server = await startEnvServer(mazeEnv, { host: "::", maxInstancesPerClient: 1 });
    } catch {
      return; // No IPv6 here: nothing to map.
    }
    const base = `http://127.0.0.1:${server.port}`;
    expect((await call(A, "POST", "/create", {}, base)).status).toBe(200);
    expect(server.pool.countOf(A)).toBe(1);
    expect((await call(A, "POST", "/create", {}, base)).status).toBe(429);
  });

  it("tell clients apart by address, IPv4-mapped IPv6 written as IPv4", () => {
    expect(clientOf("::ffff:127.0.0.2")).toBe("127.0.0.2");
    expect(clientOf("::FFFF:10.1.2.3")).toBe("10.1.2.3");
    expect(clientOf("10.1.2.3")).toBe("10.1.2.3");
    expect(clientOf("::1")).toBe("::1");
    expect(clientOf("2001:DB8::1")).toBe("2001:db8::1");
    expect(clientOf(undefined)).toBe("unknown");
  });
});
