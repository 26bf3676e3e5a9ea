/**
 * Failing fast through the CLI: a model server that is down stops the run after a few episodes
 * with the error in one line, instead of retrying every episode; the same command resumes.
 */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startFakeModelServer } from "../../src/testing/fake-model-server.js";
import { runCli } from "../fixtures/cli.js";

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("clade eval against a model server that is down", () => {
  it("stops after --fail-on-error episodes fail alike, says why in one line, and resumes", async () => {
    const port = await closedPort();
    const db = join(mkdtempSync(join(tmpdir(), "clade-failfast-")), "c.db");
    const args = [
      "eval",
      "--env",
      "maze",
      "--model",
      `openai-compatible:http://127.0.0.1:${port}/v1#m`,
      "--tasks",
      "0-39",
      "--max-turns",
      "2",
      "--concurrency",
      "2",
      "--fail-on-error",
      "3",
      "--run-id",
      "down",
      "--db",
      db,
    ];
    const stopped = await runCli(...args, "--json");
    expect(stopped.code).toBe(6);
    const lines = stopped.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    const error = JSON.parse(lines[0] ?? "");
    expect(error).toMatchObject({
      schema: "clade.error/1",
      error: { kind: "run", name: "FailFastStop" },
    });
    expect(`clade: error: ${error.error.message}`).toMatch(
      /^clade: error: stopped after \d+ episodes failed with the same error: .*connection refused: no server is running at http:\/\/127\.0\.0\.1:\d+\/v1/,
    );
    // The streak of 3, plus at most the one episode that was in flight beside it.
    const count = Number(/after (\d+) episodes/.exec(error.error.message)?.[1]);
    expect(count).toBeGreaterThanOrEqual(3);
    expect(count).toBeLessThanOrEqual(4);
    const result = JSON.parse(stopped.stdout);
    expect(result.stopReason).toBe("fail-fast");
    // At most the episodes in flight ran (2 workers); the rest wait for the resume.
    expect(result.ran).toBeLessThanOrEqual(4);
    expect(result.notRun).toBe(40 - result.ran);
    expect(result.metrics.errors).toBe(result.ran);
    expect(result.metrics.finished).toBe(0);

    // The server comes back on the same port: the same command runs everything.
    const server = await startFakeModelServer({
      port,
      rule: () => ({ content: "Thought: go\nAction: move up" }),
    });
    try {
      const resumed = await runCli(...args, "--json");
      expect(resumed.stderr).toBe("");
      expect(resumed.code).toBe(0);
      const done = JSON.parse(resumed.stdout);
      expect(done.resumed).toBe(true);
      expect(done.metrics.finished).toBe(40);
      expect(done.metrics.errors).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);

  it("--fail-on-error 0 never stops: every episode ends in its error (exit 5)", async () => {
    const port = await closedPort();
    const db = join(mkdtempSync(join(tmpdir(), "clade-failfast-")), "c.db");
    const result = await runCli(
      "eval",
      "--env",
      "maze",
      "--model",
      `openai-compatible:http://127.0.0.1:${port}/v1#m`,
      "--tasks",
      "0-5",
      "--max-turns",
      "1",
      "--concurrency",
      "6",
      "--fail-on-error",
      "0",
      "--db",
      db,
      "--json",
    );
    expect(result.code).toBe(5);
    const out = JSON.parse(result.stdout);
    expect(out.metrics.errors).toBe(6);
    expect(out.notRun).toBe(0);
  }, 60_000);

  it("rejects a negative or non-numeric threshold in one line", async () => {
    const result = await runCli("eval", "--env", "maze", "--fail-on-error", "-1");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^clade: error: --fail-on-error must be at least 0/);
  });
});
