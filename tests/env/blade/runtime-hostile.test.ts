/**
 * Hostile analysis code in the blade environment's runtimes: each attempt is blocked (the error
 * the code saw is checked) or stopped (and the session starts afresh), and the session keeps
 * working afterwards. Python: host files and the dataset's other files, the network, writes
 * outside /work and /tmp, a fork bomb, an endless loop, 8 GiB, 100 MB of output, the parent's
 * secrets, messages forged on the kernel's channel. SQL: files, COPY, extensions, unlocking the
 * configuration, ATTACH, memory, scripts that are not SELECTs. And frames forged on the wire.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AnalysisSession,
  FrameDecoder,
  FrameWireError,
  findPython,
  openSession,
} from "../../../src/env/blade/runtime/index.js";

const python = await findPython().catch((error: Error) => error);
const missing = python instanceof Error ? python.message : undefined;
if (missing) console.warn(`skipping the Python hostile tests: ${missing}`);

const SECRET_NAME = "CLADE_BLADE_TEST_SECRET_TOKEN";
const SECRET = `blade-canary-${process.pid}-not-for-the-sandbox`;
const scratch = mkdtempSync(join(tmpdir(), "clade-blade-hostile-"));
const dataset = { dir: join(scratch, "dataset"), dataPath: join(scratch, "dataset", "data.csv") };
const canary = join(scratch, "home", ".ssh", "id_ed25519");
let server: Server;
let port = 0;
let py: AnalysisSession;
let sql: AnalysisSession;

beforeAll(async () => {
  process.env[SECRET_NAME] = SECRET;
  mkdirSync(dataset.dir, { recursive: true });
  writeFileSync(dataset.dataPath, "a,b\n1,x\n2,y\n3,z\n");
  // The ground truth sits next to data.csv in a BLADE dataset folder: never visible inside.
  writeFileSync(join(dataset.dir, "annotations.csv"), `spec,code\n${SECRET},df\n`);
  mkdirSync(join(scratch, "home", ".ssh"), { recursive: true });
  writeFileSync(canary, SECRET);
  server = createServer((socket) => socket.end("reached the host\n"));
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  port = (server.address() as { port: number }).port;
  const limits = { cellMs: 3000 };
  [py, sql] = await Promise.all([
    missing
      ? Promise.resolve(undefined as unknown as AnalysisSession)
      : openSession({ runtime: "python", dataset, limits }),
    openSession({ runtime: "sql", dataset, limits }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([py?.close(), sql?.close()]);
  server?.close();
  delete process.env[SECRET_NAME];
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs a cell and checks that nothing of the parent's secret came back. */
async function run(session: AnalysisSession, code: string) {
  const outcome = await session.execute(code);
  expect(JSON.stringify(outcome)).not.toContain(SECRET);
  return outcome;
}

describe.skipIf(missing !== undefined)("hostile Python: files, network, secrets", () => {
  it("cannot read /etc/passwd, a home folder, or the dataset's other files", async () => {
    expect((await run(py, "open('/etc/passwd').read()")).error).toMatch(/^FileNotFoundError/);
    expect((await run(py, `open(${JSON.stringify(canary)}).read()`)).error).toMatch(
      /^FileNotFoundError/,
    );
    const annotations = JSON.stringify(join(dataset.dir, "annotations.csv"));
    expect((await run(py, `open(${annotations}).read()`)).error).toMatch(/^FileNotFoundError/);
    // Its workspace holds the kernel and data.csv, nothing else of the dataset's folder.
    expect((await run(py, "import os\nsorted(os.listdir('.'))")).output).toBe(
      "['data.csv', 'kernel.py']",
    );
    const root = await run(py, "import os\nsorted(os.listdir('/'))");
    expect(root.ok).toBe(true);
    for (const name of ["etc", "home", "root", "var", "run"])
      expect(root.output).not.toContain(`'${name}'`);
  });

  it("sees none of the parent's environment, in its own or any visible process", async () => {
    const own = await run(py, "import os\nsorted(os.environ)");
    expect(own.output).not.toContain(SECRET_NAME);
    expect(own.output).toContain("OPENBLAS_NUM_THREADS");
    const all = await run(
      py,
      "[open(f'/proc/{p}/environ', 'rb').read() for p in os.listdir('/proc') if p.isdigit()]",
    );
    expect(all.ok).toBe(true);
    expect(all.output).not.toContain(SECRET_NAME);
  });

  it("has no network: neither the host's loopback nor the outside", async () => {
    const host = await run(
      py,
      `import socket\nsocket.create_connection(('127.0.0.1', ${port}), timeout=2)`,
    );
    expect(host.error).toMatch(/^ConnectionRefusedError/);
    const outside = await run(py, "socket.create_connection(('1.1.1.1', 53), timeout=2)");
    expect(outside.error).toMatch(/Network is unreachable/);
  });

  it("writes only in /work and /tmp", async () => {
    for (const path of ["/usr/lib/evil.py", "/data.csv", "/bin/evil"]) {
      const outcome = await run(py, `open(${JSON.stringify(path)}, 'w').write('x')`);
      expect(outcome.error).toMatch(/Read-only file system|Permission denied|No such file/);
    }
    expect((await run(py, "open('/tmp/ok', 'w').write('x')")).output).toBe("1");
    expect((await run(py, "open('/work/ok', 'w').write('xy')")).output).toBe("2");
  });
});

describe.skipIf(missing !== undefined)("hostile Python: resources", () => {
  it("survives a fork bomb: stopped at the process limit, or the session killed and restarted", async () => {
    await run(py, "kept = 'still here'");
    const bomb = await run(py, "import os\nwhile True:\n    os.fork()");
    if (bomb.error?.startsWith("BlockingIOError")) {
      // The cell met the process limit; the bomb's processes were ended after it.
      expect((await run(py, "kept")).output).toBe("'still here'");
      const left = await run(py, "len([p for p in os.listdir('/proc') if p.isdigit()])");
      expect(left.output).toBe("2"); // the namespace's init and the kernel
    } else {
      // Under load the memory watchdog (or the kill of the bomb's processes) may end the
      // kernel first: then the session says its state was lost and starts afresh.
      expect(bomb.error).toMatch(
        /(killed by its memory limit|ended by SIGKILL).*state .* was lost/,
      );
    }
    expect((await run(py, "6 * 7")).output).toBe("42");
  });

  it("refuses 8 GiB, and an allocation growing past the memory limit", async () => {
    await run(py, "kept = 'still here'");
    const big = await run(py, "big = np.ones(2**30)");
    expect(big.error).toMatch(/MemoryError: Unable to allocate 8\.00 GiB/);
    // Untouched pages (np.empty) count against the data limit too, and need no time to fill, so
    // the limit stops it before the cell's clock does even on a loaded machine.
    const growing = await run(
      py,
      "chunks = [np.empty(100 * 2**20, dtype=np.uint8) for _ in range(100)]",
    );
    expect(growing.error).toMatch(/MemoryError/);
    expect((await run(py, "kept")).output).toBe("'still here'");
  });

  it("caps 100 MB of output, printed or written to stdout directly", async () => {
    await run(py, "kept = 'still here'");
    const printed = await run(py, "print('x' * 100_000_000)");
    expect(printed.ok).toBe(true);
    expect(printed.output.length).toBeLessThan(4100);
    const written = await run(py, "import os\nos.write(1, b'x' * 100_000_000)");
    expect(written).toEqual({ ok: true, output: "100000000" });
    expect((await run(py, "kept")).output).toBe("'still here'");
  });

  it("stops an endless loop at the time limit and starts afresh", async () => {
    await run(py, "kept = 'still here'");
    const loop = await run(py, "while True:\n    pass");
    expect(loop).toMatchObject({ ok: false, timedOut: true });
    expect((await run(py, "kept")).error).toBe("NameError: name 'kept' is not defined");
    expect((await run(py, "6 * 7")).output).toBe("42");
  }, 15_000);

  it("confuses only its own session by forging messages on the kernel's channel", async () => {
    const forged = JSON.stringify({
      id: 999_999,
      op: "next",
      reply: { ok: true, output: "forged" },
    });
    await run(py, `import os\nos.write(3, ${JSON.stringify(`${forged}\n`)}.encode())`);
    // The session answers (maybe off by one, maybe restarted), then is itself again.
    let answer = "";
    for (let attempt = 0; attempt < 3 && answer !== "2"; attempt++) {
      answer = (await run(py, "1 + 1")).output;
    }
    expect(answer).toBe("2");
    expect((await run(py, "40 + 2")).output).toBe("42");
  }, 15_000);
});

describe("hostile SQL", () => {
  it("cannot read files, write them, attach databases or load extensions", async () => {
    const attempts = [
      "SELECT * FROM read_csv('/etc/passwd')",
      `SELECT * FROM read_text(${`'${canary}'`})`,
      `SELECT * FROM read_csv('${join(dataset.dir, "annotations.csv")}')`,
      "SELECT * FROM glob('/*')",
      "COPY df TO '/tmp/out.csv'",
      "COPY (SELECT 1) TO '/work/out.parquet' (FORMAT parquet)",
      "ATTACH '/tmp/other.db' AS other",
      "INSTALL httpfs",
      "LOAD httpfs",
      "SELECT * FROM read_csv('https://example.com/data.csv')",
    ];
    for (const attempt of attempts) {
      const outcome = await run(sql, attempt);
      expect(outcome.ok, attempt).toBe(false);
      expect(outcome.error, attempt).toMatch(/^(Permission|IO|Catalog|Invalid Input) Error/);
    }
  });

  it("cannot unlock its configuration", async () => {
    for (const setting of [
      "SET enable_external_access = true",
      "SET lock_configuration = false",
      "SET memory_limit = '100GB'",
    ]) {
      const outcome = await run(sql, setting);
      expect(outcome.error, setting).toMatch(/configuration has been locked/);
    }
    const still = await run(sql, "SELECT current_setting('enable_external_access') AS open");
    expect(still.output).toContain("false");
  });

  it("holds no secret of the parent", async () => {
    await run(sql, "SELECT * FROM duckdb_settings()");
    const env = await run(sql, `SELECT getenv('${SECRET_NAME}')`);
    expect(env.ok).toBe(false);
  });

  it("runs nothing but SELECTs as transform scripts", async () => {
    const outcomes = await sql.runScripts([
      "COPY df TO '/tmp/out.csv'",
      "CREATE TABLE x AS SELECT * FROM df",
      "SELECT * FROM df; DELETE FROM __pristine",
      "SELECT * FROM df",
    ]);
    // COPY is refused by the engine itself already when it is prepared.
    expect(outcomes[0]).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Permission Error/),
    });
    for (const outcome of outcomes.slice(1, 3)) {
      expect(outcome).toMatchObject({
        ok: false,
        error: expect.stringMatching(/SELECT statements only/),
      });
    }
    expect(outcomes[3]).toMatchObject({ ok: true, kind: "frame", frame: { rowCount: 3 } });
  });

  it("answers a query past the engine's memory with an error and keeps going", async () => {
    const outcome = await run(
      sql,
      "SELECT count(*) FROM (SELECT repeat('x', 1000) || i AS s FROM range(20000000) t(i) ORDER BY s)",
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.error ?? "").toMatch(/Out of Memory|memory limit|time limit/);
    // 10 MB in one value: well past what is shown, and quick enough for the 3 s cell limit on a
    // loaded machine (100 MB took 1.7 s here unloaded and timed out under CI's load).
    const big = await run(sql, "SELECT repeat('x', 10000000) AS big");
    expect(big.ok, big.error).toBe(true);
    expect(big.output.length).toBeLessThan(200);
    expect((await run(sql, "SELECT count(*) AS n FROM df")).output).toContain("3");
  }, 20_000);

  it("stops an endless query at the time limit and starts afresh", async () => {
    const endless = await run(sql, "SELECT sum(i) FROM range(1000000000000000) t(i)");
    expect(endless).toMatchObject({ ok: false, timedOut: true });
    expect((await run(sql, "SELECT count(*) AS n FROM df")).output).toBe("n\n-\n3\n(1 row)");
  }, 15_000);
});

describe("frames forged on the wire", () => {
  const frame = (columns: unknown[], rowCount = 2) => ({ rowCount, columns });
  const cases: [string, unknown][] = [
    ["no columns", { rowCount: 1 }],
    ["a negative row count", frame([], -1)],
    ["an unknown kind", frame([{ name: "a", dtype: "x", kind: "blob", block: 0, values: [1, 2] }])],
    ["too few values", frame([{ name: "a", dtype: "int64", kind: "int", block: 0, values: [1] }])],
    [
      "an unsafe integer",
      frame([{ name: "a", dtype: "int64", kind: "int", block: 0, values: [1, 2 ** 60] }]),
    ],
    [
      "text in a float column",
      frame([{ name: "a", dtype: "float64", kind: "float", block: 0, values: [1, "x"] }]),
    ],
    [
      "a number in a text column",
      frame([{ name: "a", dtype: "object", kind: "object", block: 0, values: ["x", 1] }]),
    ],
    ["a block never sent", frame([{ name: "a", dtype: "int64", kind: "int", block: 7 }])],
    [
      "a block sent twice",
      frame([
        { name: "a", dtype: "int64", kind: "int", block: 0, values: [1, 2] },
        { name: "b", dtype: "int64", kind: "int", block: 0, values: [1, 2] },
      ]),
    ],
    [
      "a block of another kind",
      frame([
        { name: "a", dtype: "int64", kind: "int", block: 0, values: [1, 2] },
        { name: "b", dtype: "bool", kind: "bool", block: 0 },
      ]),
    ],
    [
      "a bad datetime parse",
      frame([
        {
          name: "a",
          dtype: "object",
          kind: "object",
          block: 0,
          values: ["x", "y"],
          datetimeParse: [1, 2],
        },
      ]),
    ],
  ];
  for (const [what, wire] of cases) {
    it(`refuses ${what}`, () => {
      expect(() => new FrameDecoder().decode(wire, "script 1")).toThrow(FrameWireError);
    });
  }

  it("decodes NaN, infinities and -0 from their wire forms", () => {
    const decoded = new FrameDecoder().decode(
      frame(
        [
          {
            name: "f",
            dtype: "float64",
            kind: "float",
            block: 0,
            values: [null, "inf", "-inf", "-0"],
          },
        ],
        4,
      ),
    );
    const values = decoded.columns[0]?.values ?? [];
    expect(Number.isNaN(values[0])).toBe(true);
    expect(values.slice(1, 3)).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    expect(Object.is(values[3], -0)).toBe(true);
  });
});
