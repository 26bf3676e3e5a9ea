/**
 * The sql query pool: queries in child processes under a deadline, children replaced when they
 * die, never keeping their parent alive and never outliving it.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { QUERY_TIME_LIMIT_MS, QueryPool } from "../../src/env/sql/index.js";
import { WATCHDOG_GRACE_MS } from "../../src/env/sql/query-child.js";

const SQL_INDEX = join(import.meta.dirname, "..", "..", "src", "env", "sql", "index.ts");

/** About 30 s of SQLite work in one statement, through a plan the cost estimate lets pass. */
const HOSTILE =
  "SELECT count(*) FROM json_each('[' || replace(hex(zeroblob(10000)), '00', '1,') || '1]') a " +
  "JOIN json_each('[' || replace(hex(zeroblob(10000)), '00', '1,') || '1]') b " +
  "WHERE a.value + b.value > 1 AND length(a.key || b.key) > 0";

const pools: QueryPool[] = [];
afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
});

function newPool(size: number): QueryPool {
  const pool = new QueryPool({ size });
  pools.push(pool);
  return pool;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the process runs; a zombie (dead, not yet reaped by whoever adopted it) does not. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no procfs: kill(0) is all there is
  }
}

async function waitUntilDead(pid: number, withinMs: number): Promise<number> {
  const started = performance.now();
  while (alive(pid)) {
    if (performance.now() - started > withinMs) throw new Error(`process ${pid} still alive`);
    await sleep(50);
  }
  return performance.now() - started;
}

/**
 * A node process (TypeScript through tsx, as under this runner) running `body` with `pool` in
 * scope; resolves with the process and the first line it prints.
 */
async function script(body: string) {
  const code =
    `import(${JSON.stringify(SQL_INDEX)}).then(async ({ queryPool }) => {` +
    `const pool = queryPool(); ${body} });`;
  const started = spawn(process.execPath, ["--import", "tsx", "-e", code], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    started.stdout?.once("data", (data: Buffer) => resolve(data.toString().split("\n")[0] ?? ""));
    started.once("exit", (code) => reject(new Error(`script exited with ${code}`)));
  });
  return { process: started, line };
}

describe("sql query pool", () => {
  it("answers queued queries after a slow one is stopped, on a fresh child", async () => {
    const pool = newPool(1);
    expect(await pool.run("shop", "SELECT 1 AS one")).toMatchObject({ ok: true });
    const [first] = pool.pids();
    const started = performance.now();
    const [slow, queued] = await Promise.all([
      pool.run("shop", HOSTILE),
      pool.run("shop", "SELECT COUNT(*) FROM customers"),
    ]);
    expect(slow).toEqual({
      ok: false,
      error: `the query ran longer than ${QUERY_TIME_LIMIT_MS / 1000} s and was stopped`,
    });
    expect(queued).toMatchObject({ ok: true, result: { rows: [[expect.any(Number)]] } });
    expect(performance.now() - started).toBeLessThan(6_000);
    expect(pool.pids()).not.toContain(first);
    expect(await waitUntilDead(first as number, 1_000)).toBeLessThan(1_000);
  });

  it("gives an error, not a crash, when a child dies under a query", async () => {
    const pool = newPool(1);
    await pool.run("shop", "SELECT 1");
    const [pid] = pool.pids();
    const running = pool.run("shop", HOSTILE);
    await sleep(200);
    process.kill(pid as number, "SIGKILL");
    expect(await running).toEqual({
      ok: false,
      error: expect.stringMatching(/query process was killed by SIGKILL/),
    });
    expect(await pool.run("hr", "SELECT 2 AS two")).toMatchObject({
      ok: true,
      result: { rows: [[2]] },
    });
  });

  it("keeps a per-query deadline, refuses without a child, and answers all on close", async () => {
    const pool = newPool(1);
    const short = await pool.run("shop", HOSTILE, { timeLimitMs: 500 });
    expect(short).toEqual({ ok: false, error: "the query ran longer than 0.5 s and was stopped" });
    expect(await pool.run("shop", "DROP TABLE customers")).toMatchObject({
      ok: false,
      error: expect.stringContaining("DROP statements are not allowed"),
    });
    expect(await pool.run("nowhere", "SELECT 1")).toMatchObject({
      ok: false,
      error: expect.stringContaining("unknown database nowhere"),
    });
    const inFlight = pool.run("shop", HOSTILE);
    const queued = pool.run("shop", "SELECT 1");
    await sleep(100);
    pool.close();
    expect(await inFlight).toEqual({ ok: false, error: "the query pool was closed" });
    expect(await queued).toEqual({ ok: false, error: "the query pool was closed" });
  });

  it.runIf(process.platform === "linux")(
    "fails a query that builds gigabytes at once, by its child's memory limit",
    async () => {
      const pool = newPool(1);
      await pool.run("shop", "SELECT 1");
      // 400 MB per row, which SQLite's own length limit (1 GB) lets through; without the limit
      // it would end at the deadline instead.
      const huge = await pool.run(
        "shop",
        "SELECT length(replace(hex(zeroblob(10000)), '0', hex(zeroblob(9999 + id % 2)))) " +
          "FROM orders",
      );
      expect(huge).toEqual({ ok: false, error: "out of memory" });
      expect(await pool.run("shop", "SELECT 3 AS three")).toMatchObject({ ok: true });
    },
  );

  it("does not keep its process alive once the queries are answered", async () => {
    const { process: child, line } = await script(
      `const outcome = await pool.run("school", "SELECT 40 + 2 AS n");` +
        `console.log(JSON.stringify(outcome.result.rows));`,
    );
    expect(line).toBe("[[42]]");
    const started = performance.now();
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(0);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("ends its children when the parent is killed, idle or inside a query", async () => {
    const { process: idleParent, line: idleLine } = await script(
      `await pool.run("shop", "SELECT 1"); console.log(JSON.stringify(pool.pids()));` +
        "setInterval(() => {}, 1000);",
    );
    const [idleChild] = JSON.parse(idleLine) as number[];
    idleParent.kill("SIGKILL");
    expect(await waitUntilDead(idleChild as number, 2_000)).toBeLessThan(2_000);

    // Stuck in SQLite, a child cannot see its channel close: its watchdog thread kills it.
    const { process: busyParent, line: busyLine } = await script(
      `await pool.run("shop", "SELECT 1"); pool.run("shop", ${JSON.stringify(HOSTILE)});` +
        "setTimeout(() => console.log(JSON.stringify(pool.pids())), 200);",
    );
    const [busyChild] = JSON.parse(busyLine) as number[];
    busyParent.kill("SIGKILL");
    const limit = QUERY_TIME_LIMIT_MS + WATCHDOG_GRACE_MS + 1_500;
    expect(await waitUntilDead(busyChild as number, limit)).toBeLessThan(limit);
  });
});
