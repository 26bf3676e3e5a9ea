/** `clade eval --sandbox none`: an explicit choice, recorded in the run and shown on its reports. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultSandboxMode } from "../../src/sandbox/mode.js";
import { runCli } from "../fixtures/cli.js";

const store = () => join(mkdtempSync(join(tmpdir(), "clade-sandbox-opt-")), "c.db");

describe("clade eval --sandbox", () => {
  it("none runs the coding env unsandboxed, says so in the stored version, and only for that command", async () => {
    const db = store();
    const base = ["eval", "--env", "coding", "--tasks", "0-1", "--db", db, "--json"];
    const plain = await runCli(...base, "--sandbox", "none", "--run-id", "unsandboxed");
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({ envVersion: "1.0.0+sandbox-none" });
    // The process-wide default is back to the sandbox once the command returns.
    expect(defaultSandboxMode()).toBe("bwrap");
    const listed = await runCli("runs", "--db", db);
    expect(listed.stdout).toMatch(/unsandboxed\s+coding v1\.0\.0\+sandbox-none/);

    const boxed = await runCli(...base, "--run-id", "sandboxed");
    expect(boxed.code).toBe(0);
    expect(JSON.parse(boxed.stdout)).toMatchObject({ envVersion: "1.0.0" });
    // Resuming the unsandboxed run inside the sandbox is another configuration.
    const mixed = await runCli(...base, "--run-id", "unsandboxed");
    expect(mixed.code).toBe(2);
  }, 60_000);

  it("refuses any other mode in one line", async () => {
    const result = await runCli("eval", "--env", "coding", "--sandbox", "docker", "--db", store());
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'clade: error: --sandbox must be "bwrap" (the sandbox) or "none" (got "docker")\n',
    );
  });
});
