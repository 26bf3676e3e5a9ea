/**
 * `clade train` as a user runs it: bad input is one line and exit 2 with nothing written; a run
 * stores its curve (`clade curves`) and its policy (`--out`, playable with `--agent policy:FILE`);
 * the same command with more steps resumes from the newest checkpoint on the same curve.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../fixtures/cli.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-train-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small, quick run: 4 tasks × 4 samples per step, short horizon, a small network. */
const SMALL = ["--env", "gridworld", "--group", "4", "--batch", "4", "--schedule", "fixed:8"];

describe("clade train", () => {
  it.each([
    [["--env", "gridworld", "--algo", "a2c"], /--algo must be one of grpo, ppo, rloo/],
    [["--env", "gridworld", "--schedule", "scaling:10,20"], /--schedule: invalid horizon schedule/],
    [["--env", "nope"], /unknown environment "nope"/],
    [["--env", "gridworld", "--steps", "0"], /--steps must be at least 1/],
    [["--env", "gridworld", "--novelty-bonus", "-1"], /--novelty-bonus must be/],
  ])("%j: one line, exit 2, nothing written", async (args, message) => {
    const db = join(dir, "bad.db");
    const result = await runCli("train", ...args, "--run-id", "bad", "--db", db);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(existsSync(db)).toBe(false);
  });

  it("stores the curve and the policy; more steps resume on the same curve", async () => {
    const db = join(dir, "t.db");
    const out = join(dir, "policy.safetensors");
    const args = [...SMALL, "--checkpoint-every", "1", "--run-id", "t1", "--db", db];
    const first = await runCli("train", ...args, "--steps", "2", "--out", out, "--json");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      schema: "clade.train/1",
      steps: 2,
      stopped: false,
      resumedFrom: null,
      policy: out,
    });
    const before = JSON.parse((await runCli("curves", "t1", "--db", db, "--json")).stdout);
    expect(before.steps.map((s: { step: number }) => s.step)).toEqual([0, 1]);

    const more = await runCli("train", ...args, "--steps", "3", "--json");
    expect(more.code).toBe(0);
    expect(JSON.parse(more.stdout)).toMatchObject({ steps: 3, resumedFrom: 2 });
    const after = JSON.parse((await runCli("curves", "t1", "--db", db, "--json")).stdout);
    expect(after.steps).toHaveLength(3);
    // The steps before the resume are the stored ones, untouched.
    const reproducible = (s: Record<string, unknown>) => ({ ...s, seconds: 0, at: "" });
    expect(after.steps.slice(0, 2).map(reproducible)).toEqual(before.steps.map(reproducible));

    // Another configuration under the same id is refused.
    const other = await runCli("train", ...args, "--steps", "3", "--lr", "0.1");
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(
      /training run "t1" already exists with a different configuration \(lr\)/,
    );
    const noBonus = await runCli("train", ...args, "--steps", "3", "--novelty-bonus", "0");
    expect(noBonus.stderr).toMatch(/different configuration \(noveltyBonus\)/);

    // The policy file plays: greedy, on test tasks, no errors.
    const played = await runCli(
      ...["eval", "--agent", `policy:${out}`, "--env", "gridworld", "--tasks", "0-3"],
      ...["--db", db, "--json"],
    );
    expect(played.code).toBe(0);
    expect(JSON.parse(played.stdout).metrics).toMatchObject({ finished: 4, errors: 0 });
  }, 120_000);
});
