/** `clade serve-env` as a real process, driven by `clade eval --env-url`. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "clade.js");
/** Servers started by the current test; the first is `child`. */
const children: ChildProcess[] = [];
let child: ChildProcess | undefined;

afterEach(() => {
  for (const running of children.splice(0)) running.kill("SIGKILL");
  child = undefined;
});

function serve(...args: string[]): Promise<string> {
  const started = spawn(process.execPath, [BIN, "serve-env", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(started);
  child ??= started;
  return new Promise((resolve, reject) => {
    started.stdout?.once("data", (data: Buffer) => resolve(data.toString().trim()));
    started.once("exit", (code) => reject(new Error(`serve-env exited with ${code}`)));
  });
}

describe("clade serve-env", () => {
  it("serves an environment that clade eval can run on through both APIs", async () => {
    const url = await serve("--env", "maze");
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const db = join(mkdtempSync(join(tmpdir(), "clade-serve-")), "c.db");
    for (const dialect of ["id", "clade"]) {
      const result = await runCli(
        "eval",
        "--env",
        "maze",
        "--env-url",
        url,
        "--dialect",
        dialect,
        "--agent",
        "reference",
        "--tasks",
        "0-4",
        "--run-id",
        `r-${dialect}`,
        "--db",
        db,
        "--json",
      );
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout);
      expect(summary.metrics).toMatchObject({ episodes: 5, successRate: 1, errors: 0 });
    }
    // AgentGym's Maze and Wordle servers live under a prefix and name the task field differently.
    const prefixed = await runCli(
      "eval",
      "--env",
      "maze",
      "--env-url",
      url,
      "--env-path",
      "/maze",
      "--task-field",
      "game",
      "--agent",
      "reference",
      "--tasks",
      "0-2",
      "--run-id",
      "r-prefixed",
      "--db",
      db,
      "--json",
    );
    expect(prefixed.code).toBe(0);
    expect(JSON.parse(prefixed.stdout).metrics).toMatchObject({ episodes: 3, successRate: 1 });
    // The random baseline plays the served env exactly as it plays the in-process one.
    const episodesOf = async (...where: string[]) => {
      const id = `random-${where.length}`;
      await runCli(
        "eval",
        "--env",
        "textcraft",
        ...where,
        "--agent",
        "random",
        "--tasks",
        "0-4",
        "--samples",
        "2",
        "--run-id",
        id,
        "--db",
        db,
        "--json",
      );
      const shown = JSON.parse(
        (await runCli("show", id, "--episodes", "--db", db, "--json")).stdout,
      );
      return shown.episodes.map((e: { reward: number; turns: number }) => [e.reward, e.turns]);
    };
    const textcraft = await serve("--env", "textcraft");
    expect(await episodesOf("--env-url", textcraft)).toEqual(await episodesOf());
    const show = JSON.parse((await runCli("show", "r-id", "--db", db, "--json")).stdout);
    expect(show.run.config).toMatchObject({ envUrl: url, dialect: "id" });
    const exited = new Promise((resolve) => child?.once("exit", (code) => resolve(code)));
    child?.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("says when no server is listening, in one line, writing nothing", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "clade-serve-")), "c.db");
    const result = await runCli(
      "eval",
      "--env",
      "maze",
      "--env-url",
      "http://127.0.0.1:9",
      "--agent",
      "random",
      "--tasks",
      "0-1",
      "--db",
      db,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^clade: error: no environment server at http:\/\/127\.0\.0\.1:9 .*is the environment server started\?/,
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(db)).toBe(false);
  });

  it("refuses a clade server that serves another environment than --env names", async () => {
    const url = await serve("--env", "maze");
    const db = join(mkdtempSync(join(tmpdir(), "clade-serve-")), "c.db");
    const result = await runCli(
      "eval",
      "--env",
      "wordle",
      "--env-url",
      url,
      "--dialect",
      "clade",
      "--agent",
      "reference",
      "--tasks",
      "0",
      "--db",
      db,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/serves "maze", not "wordle"/);
    expect(existsSync(db)).toBe(false);
  });

  it("says in one line when the port is taken", async () => {
    const url = await serve("--env", "maze");
    const port = new URL(url).port;
    const result = await runCli("serve-env", "--env", "maze", "--port", port);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^clade: error: .*port ${port} .*already in use\\n$`));
  });

  it("caps instances per client: 429 past --max-instances-per-client, ids large", async () => {
    const url = await serve(
      "--env",
      "maze",
      "--max-instances",
      "4",
      "--max-instances-per-client",
      "2",
    );
    const create = () =>
      fetch(`${url}/create`, { method: "POST", body: "{}" }).then(async (response) => ({
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        body: (await response.json()) as { id?: number; code?: string },
      }));
    const first = await create();
    expect(first.status).toBe(200);
    expect(Number.isSafeInteger(first.body.id) && (first.body.id as number) >= 2 ** 31).toBe(true);
    expect((await create()).status).toBe(200);
    const refused = await create();
    expect(refused).toMatchObject({
      status: 429,
      retryAfter: "1",
      body: { code: "client_capacity" },
    });
  });

  it("validates --max-instances-per-client against --max-instances", async () => {
    const over = await runCli(
      "serve-env",
      "--env",
      "maze",
      "--max-instances",
      "10",
      "--max-instances-per-client",
      "11",
    );
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(
      /^clade: error: --max-instances-per-client must be at most --max-instances \(10\) \(got "11"\)\n$/,
    );
    const zero = await runCli("serve-env", "--env", "maze", "--max-instances-per-client", "0");
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--max-instances-per-client must be at least 1/);
    const fraction = await runCli(
      "serve-env",
      "--env",
      "maze",
      "--max-instances-per-client",
      "1.5",
    );
    expect(fraction.code).toBe(2);
    expect(fraction.stderr).toMatch(/--max-instances-per-client must be a whole number/);
  });

  it("documents the caps and ids in --help", async () => {
    const help = await runCli("serve-env", "--help");
    expect(help.stdout).toMatch(/--max-instances-per-client <n>/);
    expect(help.stdout).toMatch(/half of --max-instances/);
    expect(help.stdout).toMatch(/unguessable/);
  });

  it("rejects an unknown environment before binding", async () => {
    const result = await runCli("serve-env", "--env", "chess", "--port", "0");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown environment "chess"/);
  });
});
