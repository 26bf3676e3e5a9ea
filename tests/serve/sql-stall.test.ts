/**
 * The sql env served over HTTP under a hostile query: the server keeps answering other clients
 * while the query runs, the query ends at its deadline, and shutdown (in-process and SIGTERM to
 * `clade serve-env`) stays prompt.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { QUERY_TIME_LIMIT_MS, queryPool, sqlEnv } from "../../src/env/sql/index.js";
import { type RunningEnvServer, startEnvServer } from "../../src/serve/index.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "clade.js");

/** A self-join of json_each over a built string: about 30 s of SQLite work in one statement. */
const HOSTILE =
  "SELECT count(*) FROM json_each('[' || replace(hex(zeroblob(10000)), '00', '1,') || '1]') a " +
  "JOIN json_each('[' || replace(hex(zeroblob(10000)), '00', '1,') || '1]') b " +
  "WHERE a.value + b.value > 1 AND length(a.key || b.key) > 0";

let server: RunningEnvServer | undefined;
let child: ChildProcess | undefined;

afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  await server?.close();
  server = undefined;
});

interface Reply {
  status: number;
  body: Record<string, unknown>;
  ms: number;
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const started = performance.now();
  const response = await fetch(base + path, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text === "" ? {} : JSON.parse(text),
    ms: performance.now() - started,
  };
}

/** Two instances reset on shop tasks, ids returned. */
async function twoInstances(base: string): Promise<[number, number]> {
  const ids: number[] = [];
  for (const task of [0, 5]) {
    const created = await call(base, "POST", "/v1/instances");
    const id = created.body.id as number;
    expect((await call(base, "POST", `/v1/instances/${id}/reset`, { task })).status).toBe(200);
    ids.push(id);
  }
  return ids as [number, number];
}

const step = (base: string, id: number, action: string) =>
  call(base, "POST", `/v1/instances/${id}/step`, { action });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const observationText = (reply: Reply) =>
  (reply.body.observation as { text: string } | undefined)?.text ?? "";

describe("sql env server under a hostile query", () => {
  it("answers other clients while the query runs, and stops it at the deadline", async () => {
    server = await startEnvServer(sqlEnv);
    const base = server.url;
    const [hostileId, otherId] = await twoInstances(base);
    // Both children of the pool up, so that the other instance's step needs no process start.
    while (queryPool().pids().length < 2) {
      await Promise.all(Array.from({ length: 4 }, () => queryPool().run("shop", "SELECT 1")));
    }

    const hostile = step(base, hostileId, `query: ${HOSTILE}`);
    await sleep(300);
    const info = await call(base, "GET", "/v1/info");
    expect(info.status).toBe(200);
    expect(info.ms).toBeLessThan(1_000);
    const other = await step(base, otherId, "query: SELECT COUNT(*) AS n FROM customers");
    expect(other.status).toBe(200);
    expect(other.ms).toBeLessThan(1_000);
    expect(observationText(other)).toMatch(/Result \(1 row\):\nn\n\d+/);

    const stopped = await hostile;
    expect(stopped.status).toBe(200);
    expect(stopped.ms).toBeLessThan(6_000);
    expect(observationText(stopped)).toContain(
      `the query ran longer than ${QUERY_TIME_LIMIT_MS / 1000} s and was stopped`,
    );
    expect(stopped.body).toMatchObject({ done: false, info: { kind: "query" } });
    // The instance goes on, on a fresh child.
    const after = await step(base, hostileId, "query: SELECT 1 AS one");
    expect(observationText(after)).toContain("Result (1 row):\none\n1");
  });

  it("shuts down promptly while a hostile query runs", async () => {
    server = await startEnvServer(sqlEnv);
    const [id] = await twoInstances(server.url);
    const hostile = step(server.url, id, `query: ${HOSTILE}`).catch(() => undefined);
    await sleep(300);
    const started = performance.now();
    await server.close();
    server = undefined;
    // The request in flight is let finish: at most the query's deadline.
    expect(performance.now() - started).toBeLessThan(QUERY_TIME_LIMIT_MS + 2_000);
    await hostile;
  });

  it("lets `clade serve-env --env sql` answer and exit on SIGTERM during the query", async () => {
    const started = spawn(process.execPath, [BIN, "serve-env", "--env", "sql", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = started;
    const url = await new Promise<string>((resolve, reject) => {
      started.stdout?.once("data", (data: Buffer) => resolve(data.toString().trim()));
      started.once("exit", (code) => reject(new Error(`serve-env exited with ${code}`)));
    });
    const [id] = await twoInstances(url);
    const hostile = step(url, id, `query: ${HOSTILE}`).catch(() => undefined);
    await sleep(500);
    const info = await call(url, "GET", "/v1/info");
    expect(info.status).toBe(200);
    expect(info.ms).toBeLessThan(1_000);
    const exited = new Promise<number | null>((resolve) => started.once("exit", resolve));
    const signalled = performance.now();
    started.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(QUERY_TIME_LIMIT_MS + 3_000);
    await hostile;
  });
});
