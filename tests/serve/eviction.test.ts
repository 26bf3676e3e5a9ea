/**
 * When instances are closed without being asked: only to make room for a new one (least
 * recently used first, finished episodes before unfinished ones, never one with a call in
 * flight), or after the long idle timeout; each time with a log line naming the instance and
 * why, and a late call told what happened.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_EVICT_IDLE_AFTER_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  FINISHED_EVICTION_GRACE_MS,
  InstancePool,
  type InstancePoolOptions,
  type RunningEnvServer,
  resolveEnvServerOptions,
  type ServeError,
  startEnvServer,
} from "../../src/serve/index.js";
import { counterEnv } from "../fixtures/counter-env.js";

const pools: InstancePool[] = [];
let server: RunningEnvServer | undefined;

afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.closeAll();
  await server?.close();
  server = undefined;
});

function pool(options: Partial<InstancePoolOptions> = {}) {
  const log: string[] = [];
  const created = new InstancePool(counterEnv, {
    maxInstances: 3,
    idleTimeoutMs: 0,
    retryAfterSeconds: 1,
    evictIdleAfterMs: 60_000,
    log: (line) => log.push(line),
    ...options,
  });
  pools.push(created);
  return { pool: created, log };
}

/** Pretends the instance's last call was `ms` ago. */
function age(p: InstancePool, id: number, ms: number) {
  p.get(id).lastUsedAt = Date.now() - ms;
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as ServeError).code;
  }
  return "created";
}

describe("eviction to make room", () => {
  it("defaults: expiry after a day, eviction after a minute without calls", () => {
    expect(DEFAULT_IDLE_TIMEOUT_MS).toBe(24 * 3600_000);
    expect(DEFAULT_EVICT_IDLE_AFTER_MS).toBe(60_000);
    expect(resolveEnvServerOptions({})).toMatchObject({
      idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
      evictIdleAfterMs: DEFAULT_EVICT_IDLE_AFTER_MS,
    });
  });

  it("closes nothing while there is room, however long an instance waits", async () => {
    const { pool: p, log } = pool();
    const id = p.create("a").id;
    await p.reset(id, 0, 0);
    age(p, id, 10 * 60_000);
    expect(p.closeIdle()).toEqual([]);
    await p.step(id, "inc");
    expect(log).toEqual([]);
  });

  it("takes the least recently used instance idle long enough, and logs it", async () => {
    const { pool: p, log } = pool();
    const [a, b, c] = [p.create("a").id, p.create("b").id, p.create("c").id];
    await p.reset(a, 3, 0);
    await p.step(a, "inc");
    age(p, a, 90_000);
    age(p, b, 120_000); // never reset, idle longest
    age(p, c, 30_000); // too recent
    const fresh = p.create("d").id;
    expect(p.ids()).toEqual([a, c, fresh]);
    expect(log).toEqual([
      `instance ${b} (client b, never reset) evicted after 120 s without calls, to make room ` +
        "for a new instance (the server holds its maximum of 3 instances)",
    ]);
    // The next one goes too; then only recent instances are left and creation is refused.
    p.create("d");
    expect(log[1]).toMatch(
      new RegExp(`^instance ${a} \\(client a, task 3, 1 step, episode unfinished\\) evicted`),
    );
    expect(refusal(() => p.create("e"))).toBe("capacity");
    // A late call hears what happened.
    expect(() => p.get(b)).toThrow(
      /no longer exists \(closed to make room for a new instance after 120 s without calls\)/,
    );
  });

  it("lets finished episodes go after a second", async () => {
    const { pool: p, log } = pool({ maxInstances: 2 });
    const [done, open] = [p.create("a").id, p.create("a").id];
    for (const id of [done, open]) await p.reset(id, 0, 0);
    await p.step(done, "inc"); // task 0: target 1, so this finishes the episode
    expect(p.get(done).episode?.done).toBe(true);
    age(p, done, FINISHED_EVICTION_GRACE_MS - 200);
    age(p, open, 50_000);
    expect(refusal(() => p.create("b"))).toBe("capacity");
    age(p, done, FINISHED_EVICTION_GRACE_MS);
    p.create("b");
    expect(p.ids()).not.toContain(done);
    expect(log[0]).toMatch(/episode finished with reward 1\) evicted after 1 s/);
  });

  it("takes from a client at its own cap only its own instances", async () => {
    const { pool: p, log } = pool({ maxInstances: 4, maxInstancesPerClient: 2 });
    const other = p.create("b").id;
    const [a1, a2] = [p.create("a").id, p.create("a").id];
    age(p, other, 500_000);
    age(p, a1, 70_000);
    age(p, a2, 5_000);
    p.create("a");
    expect(p.ids()).toEqual([other, a2, expect.any(Number)]);
    expect(log[0]).toMatch(/client a holds its maximum of 2 instances/);
    // With none of its own idle long enough, the client waits (429), the other keeps its own.
    expect(refusal(() => p.create("a"))).toBe("client_capacity");
    expect(p.ids()).toContain(other);
  });

  it("never takes an instance with a call in flight", async () => {
    let release = () => {};
    const slow = {
      ...counterEnv,
      create: () => {
        const env = counterEnv.create();
        return {
          info: env.info,
          reset: (task: number) => env.reset(task),
          step: (action: string) =>
            new Promise<Awaited<ReturnType<typeof env.step>>>((resolve) => {
              release = () => void env.step(action).then(resolve);
            }),
        };
      },
    };
    const log: string[] = [];
    const p = new InstancePool(slow, {
      maxInstances: 1,
      idleTimeoutMs: 0,
      retryAfterSeconds: 1,
      evictIdleAfterMs: 0,
      log: (line) => log.push(line),
    });
    pools.push(p);
    const id = p.create().id;
    await p.reset(id, 0, 0);
    const stepping = p.step(id, "inc");
    await new Promise((resolve) => setTimeout(resolve, 10));
    age(p, id, 1_000_000);
    expect(refusal(() => p.create())).toBe("capacity");
    release();
    await stepping;
    p.create();
    expect(log).toHaveLength(1);
  });

  it("does nothing of the kind when eviction is off (the pool's default)", () => {
    const p = new InstancePool(counterEnv, {
      maxInstances: 1,
      idleTimeoutMs: 0,
      retryAfterSeconds: 1,
    });
    pools.push(p);
    const id = p.create().id;
    age(p, id, 10_000_000);
    expect(refusal(() => p.create())).toBe("capacity");
  });
});

describe("idle expiry", () => {
  it("logs which instance expired and why, and tells a late call", async () => {
    const { pool: p, log } = pool({ idleTimeoutMs: 5_000 });
    const id = p.create("a").id;
    await p.reset(id, 2, 0);
    expect(p.closeIdle(Date.now() + 6_000)).toEqual([id]);
    expect(log).toEqual([
      `instance ${id} (client a, task 2, 0 steps, episode unfinished) expired after 6 s ` +
        "without calls (idle timeout 5 s)",
    ]);
    expect(() => p.get(id)).toThrow(/expired after 5 s without calls/);
  });

  it("sends the server's log lines to the log option", async () => {
    const lines: string[] = [];
    server = await startEnvServer(counterEnv, {
      maxInstances: 1,
      evictIdleAfterMs: 0,
      log: (line) => lines.push(line),
    });
    const create = () => fetch(`${server?.url}/create`, { method: "POST" });
    const first = ((await (await create()).json()) as { id: number }).id;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await create()).status).toBe(200);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^instance ${first} \\(client 127\\.0\\.0\\.1, never reset\\) evicted`),
      ),
    ]);
    const late = await fetch(`${server.url}/step`, {
      method: "POST",
      body: JSON.stringify({ id: first, action: "inc" }),
    });
    expect(await late.json()).toMatchObject({
      code: "unknown_instance",
      error: expect.stringMatching(/closed to make room/),
    });
  });
});

describe("clade serve-env", () => {
  it("names the AgentGym task routes and logs evictions on stderr", async () => {
    const bin = join(import.meta.dirname, "..", "..", "bin", "clade.js");
    const child = spawn(
      process.execPath,
      [bin, "serve-env", "--env", "sql", "--port", "0", "--max-instances", "1"].concat([
        "--max-instances-per-client",
        "1",
        "--evict-idle-after",
        "0",
      ]),
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.once("data", (data: Buffer) => resolve(data.toString().trim()));
        child.once("exit", (code) => reject(new Error(`serve-env exited with ${code}`)));
      });
      expect(stderr).toContain(`AgentGym task "sqlgym" (SqlGymEnvClient): ${url}/sqlgym`);
      const create = async () =>
        (await fetch(`${url}/sqlgym/create`, { method: "POST" })).json() as Promise<number>;
      const first = await create();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await create();
      for (let i = 0; i < 50 && !stderr.includes("evicted"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(stderr).toMatch(
        new RegExp(
          `\\n\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z instance ${first} \\(client 127\\.0\\.0\\.1, never reset\\) evicted after`,
        ),
      );
    } finally {
      child.kill("SIGTERM");
    }
  });
});
