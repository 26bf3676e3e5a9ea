/**
 * `clade demo` does real work: besides the environments' runs and the simulated search (whose
 * shape tests/cli/json-contract.test.ts checks), it trains the embedded policy on small mazes until
 * it beats the random agent on held-out ones, and runs HGM over training branches of that policy.
 * Training is a function of its seed and the search runs one worker, so the numbers are the same
 * every run; no timing is asserted.
 */
import { describe, expect, it, vi } from "vitest";
import type { goalsJson } from "../../src/cli/commands/demo-goals.js";
import {
  type BranchesDemo,
  branchesText,
  DEMO_BRANCHES,
  DEMO_TRAINING,
  type TrainingDemo,
  trainingText,
} from "../../src/cli/commands/demo-rl.js";
import { runCli } from "../fixtures/cli.js";

type GoalsJson = ReturnType<typeof goalsJson>;

// The demo over maze alone: the RL steps are the same, the environments' runs stay quick.
vi.mock(import("../../src/env/registry.js"), async (importOriginal) => {
  const actual = await importOriginal();
  return { ...actual, BUILTIN_ENVS: actual.BUILTIN_ENVS.filter((e) => e.info.name === "maze") };
});

describe("clade demo", () => {
  it("trains the policy past the random agent, then HGM trains and evaluates branches of it", async () => {
    const result = await runCli("demo", "--json");
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as { training: TrainingDemo; branches: BranchesDemo };

    const training = out.training;
    expect(training).toMatchObject({
      env: "maze",
      algo: "ppo",
      steps: DEMO_TRAINING.steps,
      seed: DEMO_TRAINING.seed,
      maxCells: 36,
      trainTasks: 91,
      testTasks: 24,
    });
    // Every step played 8 tasks × 8 samples of up to 30 turns.
    expect(training.envSteps).toBeGreaterThan(DEMO_TRAINING.steps * 64);
    expect(training.trained.episodes).toBe(24);
    expect(training.random.episodes).toBe(24 * DEMO_TRAINING.randomSamples);
    // Measured: 0.29 (7/24) against 0.02 (8/480).
    expect(training.random.successRate).toBeLessThan(0.05);
    expect(training.trained.successRate).toBeGreaterThan(training.random.successRate + 0.15);

    const branches = out.branches;
    expect(branches.nodes).toBeGreaterThan(1);
    expect(branches.expanded).toBe(branches.nodes - 1);
    expect(branches.evaluations).toBe(DEMO_BRANCHES.budget);
    expect(branches.stopReason).toBe("budget");
    expect(branches.tasks).toBe(24);
    // The root is the trained policy, evaluated on every held-out maze as step 1 played them.
    expect(branches.root.s + branches.root.f).toBe(24);
    expect(branches.root.s).toBe(training.trained.successes);
    expect(branches.best).not.toBeNull();
    const best = branches.best as NonNullable<BranchesDemo["best"]>;
    expect(best.s + best.f).toBeGreaterThan(0);
    if (best.node !== 0) expect(best.recipe).not.toBeNull();

    expect(trainingText(training)).toContain(
      `trained policy (greedy) ${training.trained.successRate.toFixed(2)} (${training.trained.successes}/24)`,
    );
    expect(branchesText(branches)).toContain(`${branches.expanded} branches trained`);

    // Goals: the faulty helpdesk assistant on the 100 test sessions, from the ground truth, as
    // data/helpdesk/README.md reports it (233 goals, 76.8 %; 123 multi-turn, 61.0 %).
    const goals = (JSON.parse(result.stdout) as { goals: GoalsJson }).goals;
    expect(goals.conversations).toBe(100);
    expect(goals.gsr).toMatchObject({ count: 179, total: 233 });
    expect(goals.multiTurnGsr).toMatchObject({ count: 75, total: 123 });
    expect(goals.gsr.interval.low).toBeLessThan(goals.gsr.percent);
    expect(goals.gsr.interval.high).toBeGreaterThan(goals.gsr.percent);
    // Every failed goal has its cause, and the faults produce several different ones.
    const failed = goals.causes.reduce((sum, c) => sum + c.count, 0);
    expect(failed).toBe(233 - 179);
    expect(goals.causes.filter((c) => c.count > 0).length).toBeGreaterThanOrEqual(5);

    // The viewer's API read the store the demo wrote: every run of its table (and the goals'
    // and BLADE's runs beside them), all complete.
    const { view, runs } = JSON.parse(result.stdout);
    expect(view.runs).toBeGreaterThan(runs.length);
    expect(view.complete).toBe(view.runs);
    expect(view.capabilities.runs).toBe(view.runs);
    expect(view.capabilities.analyses).toBeGreaterThan(0);
  }, 240_000);
});
