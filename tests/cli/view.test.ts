/** `clade view` from the command line: a real server process, bad options, and --bundle. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RunStore } from "../../src/store/run-store.js";
import { runCli } from "../fixtures/cli.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "clade.js");
const dir = mkdtempSync(join(tmpdir(), "clade-view-cli-"));
const db = join(dir, "store.db");
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const store = RunStore.open(db);
store.startRun({ id: "one", env: "maze", envVersion: "1", agent: "reference", config: {} });
store.close();

function view(...args: string[]): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, [BIN, "view", "--db", db, "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const url = new Promise<string>((resolve, reject) => {
    child.stdout?.once("data", (data: Buffer) => resolve(data.toString().trim()));
    child.once("exit", (code) => reject(new Error(`clade view exited with ${code}`)));
  });
  return { child, url };
}

describe("clade view", () => {
  it("serves the store on loopback and stops cleanly on SIGTERM", async () => {
    const { child, url } = view();
    const address = await url;
    expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const meta = await (await fetch(`${address}api/meta`)).json();
    expect(meta).toMatchObject({ store: { path: db, exists: true }, capabilities: { runs: 1 } });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("uses the token it is given", async () => {
    const { url } = view("--token", "a-token-of-twenty-chars");
    const address = await url;
    const page = await (await fetch(address)).text();
    expect(page).toContain('content="a-token-of-twenty-chars"');
  });

  it.each([
    [["--port", "70000"], /--port must be at most 65535/],
    [["--token", "short"], /--token must be 16-200/],
    [["--run", "one"], /--run chooses what --bundle writes/],
    [["--bundle", join(dir, "b1"), "--run", "missing"], /no run, search.*"missing"/],
  ])("refuses %j in one line with exit 2", async (args, message) => {
    const result = await runCli("view", "--db", db, ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("refuses a store that is not there, for a bundle", async () => {
    const result = await runCli("view", "--db", join(dir, "none.db"), "--bundle", join(dir, "b2"));
    expect(result).toMatchObject({ code: 2 });
    expect(result.stderr).toMatch(/no store at/);
    expect(existsSync(join(dir, "b2"))).toBe(false);
  });

  it("writes a bundle and says where to open it (--json)", async () => {
    const out = join(dir, "bundle");
    const result = await runCli("view", "--db", db, "--bundle", out, "--run", "one", "--json");
    expect(result.code).toBe(0);
    const written = JSON.parse(result.stdout);
    expect(written).toMatchObject({
      schema: "clade.bundle/1",
      dir: out,
      index: join(out, "index.html"),
      items: [{ kind: "run", id: "one" }],
    });
    expect(existsSync(written.index)).toBe(true);
  });
});
