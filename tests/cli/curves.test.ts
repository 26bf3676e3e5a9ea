/**
 * `clade curves RUN` as text: a table of at most 30 evenly spaced steps with the first and the
 * last, plots of mean reward and success rate only on a terminal, a run with no steps yet, and
 * an unknown run (or an evaluation run's id) in one line with exit code 2.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { downsample, plotMetric } from "../../src/cli/commands/curves.js";
import { RunStore } from "../../src/store/run-store.js";
import { TrainingStore } from "../../src/store/training-log.js";
import { runCli, runCliAs } from "../fixtures/cli.js";

let db: string;

beforeAll(() => {
  db = join(mkdtempSync(join(tmpdir(), "clade-curves-")), "clade.db");
  const runs = RunStore.open(db);
  runs.startRun({ id: "ev", env: "maze", envVersion: "1", agent: "random", config: {} });
  const store = new TrainingStore(runs.db);
  store.beginRun("long", { env: "maze", estimator: "grpo", seed: 3 });
  for (let step = 0; step < 100; step++) {
    store.appendStep("long", {
      step,
      meanReward: step / 99,
      successRate: step < 50 ? 0.25 : 0.75,
      horizon: step < 50 ? 5 : 10,
      entropy: 1.4 - step / 100,
      kl: step === 0 ? 0 : 0.00005 * step,
      clipFraction: 0.1,
      gradNorm: 12.345,
      envSteps: 64 * (step + 1),
      seconds: 0.5 * (step + 1),
      errors: step === 99 ? 2 : 0,
    });
  }
  store.setStatus("long", "stopped", "signal");
  store.beginRun("empty", {});
  runs.close();
});

const interactiveCli = (...argv: string[]) => runCliAs({ interactive: true }, ...argv);

describe("clade curves RUN", () => {
  it("shows at most 30 evenly spaced steps, the last included, and no plot off a terminal", async () => {
    const result = await runCli("curves", "long", "--db", db);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(
      "training run long: stopped, signal; 100 steps (0..99), 50.0 s, 6400 env steps",
    );
    expect(lines[1]).toBe("config: env=maze, estimator=grpo, seed=3");
    expect(result.stdout).toMatch(/^step\s+mean reward\s+success\s+horizon\s+entropy\s+kl/m);
    const rows = lines.filter((l) => /^\d+\s+[-\d]/.test(l));
    expect(rows).toHaveLength(30);
    expect(rows[0]).toMatch(
      /^0\s+0\.000\s+0\.250\s+5\s+1\.400\s+0\s+0\.100\s+12\.3\s+64\s+0\.5\s+0$/,
    );
    expect(rows.at(-1)).toMatch(
      /^99\s+1\.000\s+0\.750\s+10\s+0\.410\s+0\.00495\s+0\.100\s+12\.3\s+6400\s+50\.0\s+2$/,
    );
    expect(result.stdout).toContain("30 of 100 steps shown");
    expect(result.stdout).not.toMatch(/[▁▂▃▄▅▆▇█]/);
  });

  it("plots mean reward and success rate on a terminal", async () => {
    const result = await interactiveCli("curves", "long", "--db", db);
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    const reward = lines.indexOf("mean reward");
    const success = lines.indexOf("success rate");
    expect(reward).toBeGreaterThan(1);
    expect(success).toBeGreaterThan(reward);
    // Reward rises from the bottom to the top; the success rate steps up from 0.25 to 0.75.
    expect(lines[reward + 1]).toMatch(/^1\.000 ┤ +.*█$/);
    expect(lines[reward + 4]).toMatch(/^0\.000 ┤▁/);
    expect(lines[success + 1]).toBe("1.000 ┤");
    expect(lines[success + 2]).toMatch(/^ {6}┤ {30}█{30}$/);
    expect(lines[success + 4]).toMatch(/^0\.000 ┤█{60}$/);
    expect(result.stdout).toContain("(steps 0..99, 60 columns of means)");
  });

  it("a run with no steps yet", async () => {
    const result = await runCli("curves", "empty", "--db", db);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("training run empty: running; no steps yet\nconfig: (empty)\n");
  });

  it("an unknown run is one line, exit code 2", async () => {
    const unknown = await runCli("curves", "nope", "--db", db);
    expect(unknown).toEqual({
      code: 2,
      stdout: "",
      stderr: `clade: error: no training run "nope" in ${db}\n`,
    });
    const evaluation = await runCli("curves", "ev", "--db", db);
    expect(evaluation.code).toBe(2);
    expect(evaluation.stderr).toBe(
      `clade: error: no training run "ev" in ${db} (it is an evaluation run: clade show ev)\n`,
    );
    const noStore = await runCli("curves", "long", "--db", join(db, "..", "none.db"));
    expect(noStore.code).toBe(2);
    expect(noStore.stderr).toMatch(/^clade: error: no training run "long" in .*none\.db\n$/);
  });
});

describe("downsampling and plots", () => {
  it("keeps every row up to the limit, else evenly spaced ones with both ends", () => {
    expect(downsample(3)).toEqual([0, 1, 2]);
    expect(downsample(30)).toHaveLength(30);
    const picked = downsample(1000);
    expect(picked).toHaveLength(30);
    expect(picked[0]).toBe(0);
    expect(picked.at(-1)).toBe(999);
    expect(downsample(0)).toEqual([]);
  });

  it("leaves steps without a value blank and says when there is none", () => {
    expect(plotMetric("kl", [null, null])).toEqual(["kl: no values"]);
    const lines = plotMetric("r", [0, null, 1]);
    expect(lines).toHaveLength(5);
    expect(lines[1]).toBe("1.000 ┤  █");
    expect(lines[4]).toBe("0.000 ┤▁ █");
    // One value: the axis spans it by ±0.5.
    expect(plotMetric("c", [2])[1]).toBe("2.500 ┤");
  });
});
