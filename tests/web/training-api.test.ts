/**
 * The training API over a store that real training runs wrote (the embedded policy trained on
 * gridworld, stored as `clade train` stores it): the list, newest first and paged by cursor; one
 * run's curve as columns that match the stored steps, with the stages of its ScalingInter
 * schedule; `since`; bad input as 400 and one line; unknown runs as 404; and the bundle's
 * addresses.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { horizonAt, parseSchedule } from "../../src/improve/rl/schedule.js";
import { TrainingStore } from "../../src/store/training-log.js";
import type { TrainingListResponse, TrainingRunResponse } from "../../src/web/api/training.js";
import { trainingApi } from "../../src/web/api/training.js";
import type { ViewServer } from "../../src/web/server.js";
import { trainGridworldRuns } from "./fixtures/training-runs.js";
import { api, scratchDir, startViewer } from "./support.js";

const scratch = scratchDir("training-api");
const db = join(scratch.dir, "store.db");
let viewer: ViewServer;

beforeAll(async () => {
  const store = TrainingStore.open(db);
  try {
    await trainGridworldRuns(store, scratch.dir);
  } finally {
    store.close();
  }
  viewer = await startViewer(db);
}, 60_000);

afterAll(async () => {
  await viewer?.close();
  scratch.remove();
});

describe("GET /training", () => {
  it("lists the runs newest first with their env, algorithm and last step", async () => {
    const { status, body } = await api<TrainingListResponse>(viewer, "/training");
    expect(status).toBe(200);
    expect(body.nextCursor).toBeNull();
    expect(body.items.map((r) => r.id)).toEqual(["fixed-grpo", "scaling-ppo"]);
    const store = TrainingStore.open(db, { readonly: true });
    const last = store.steps("scaling-ppo").at(-1);
    store.close();
    expect(body.items[1]).toMatchObject({
      id: "scaling-ppo",
      env: "gridworld",
      algorithm: "ppo",
      estimator: "gae",
      schedule: "scaling:3,5,8@10",
      status: "complete",
      stopReason: null,
      steps: 30,
      lastStep: 29,
      meanReward: last?.meanReward,
      successRate: last?.successRate,
      horizon: 8,
    });
    expect(body.items[0]).toMatchObject({ algorithm: "grpo", estimator: "grpo", steps: 12 });
  });

  it("pages by cursor without overlap, and refuses a bad limit or cursor in one line", async () => {
    const first = await api<TrainingListResponse>(viewer, "/training?limit=1");
    expect(first.body.items.map((r) => r.id)).toEqual(["fixed-grpo"]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const cursor = encodeURIComponent(first.body.nextCursor as string);
    const second = await api<TrainingListResponse>(viewer, `/training?cursor=${cursor}&limit=1`);
    expect(second.body.items.map((r) => r.id)).toEqual(["scaling-ppo"]);
    expect(second.body.nextCursor).toBeNull();

    for (const bad of ["/training?limit=0", "/training?limit=abc", "/training?cursor=zzz"]) {
      const { status, body } = await api<{ error: string }>(viewer, bad);
      expect(status, bad).toBe(400);
      expect(body.error).toMatch(/^query\.(limit|cursor)/);
      expect(body.error).not.toContain("\n");
    }
  });
});

describe("GET /training/:id", () => {
  it("gives the curve as columns, equal to the stored steps, and the schedule's stages", async () => {
    const { status, body } = await api<TrainingRunResponse>(viewer, "/training/scaling-ppo");
    expect(status).toBe(200);
    expect(body.schedule).toEqual({
      spec: "scaling:3,5,8@10",
      kind: "scaling",
      stages: [
        { index: 0, horizon: 3, startStep: 0, endStep: 10 },
        { index: 1, horizon: 5, startStep: 10, endStep: 20 },
        { index: 2, horizon: 8, startStep: 20, endStep: null },
      ],
    });
    expect(body.config).toMatchObject({ env: "gridworld", algo: "ppo", hidden: 8 });
    expect(body.since).toBeNull();

    const store = TrainingStore.open(db, { readonly: true });
    const steps = store.steps("scaling-ppo");
    const checkpoints = store.checkpoints("scaling-ppo");
    store.close();
    const { curve } = body;
    expect(curve.step).toEqual(steps.map((s) => s.step));
    expect(curve.meanReward).toEqual(steps.map((s) => s.meanReward));
    expect(curve.successRate).toEqual(steps.map((s) => s.successRate));
    expect(curve.entropy).toEqual(steps.map((s) => s.entropy));
    expect(curve.kl).toEqual(steps.map((s) => s.kl));
    expect(curve.gradNorm).toEqual(steps.map((s) => s.gradNorm));
    // The trainer really updated: some KL, and entropy is a positive number of nats.
    expect(curve.kl.some((v) => v !== null && v > 0)).toBe(true);
    expect(curve.entropy.every((v) => v !== null && v > 0)).toBe(true);
    // The stored horizon is the schedule's at every step: the stages drawn are the ones trained.
    const schedule = parseSchedule("scaling:3,5,8@10");
    expect(curve.horizon).toEqual(curve.step.map((s) => horizonAt(schedule, s)));
    // Numbers beyond the columns come as columns too, nested ones by their path.
    expect(curve.extra.meanTurns).toHaveLength(30);
    expect(curve.extra["timing.rolloutMs"]).toHaveLength(30);
    expect(curve.extra.errorMessages).toBeUndefined();

    expect(body.checkpoints).toEqual(checkpoints);
    expect(body.checkpoints.map((c) => c.step)).toEqual([10, 20, 30]);
  });

  it("gives only the newer steps with since", async () => {
    const { body } = await api<TrainingRunResponse>(viewer, "/training/scaling-ppo?since=25");
    expect(body.since).toBe(25);
    expect(body.curve.step).toEqual([26, 27, 28, 29]);
    expect(body.curve.horizon).toEqual([8, 8, 8, 8]);
    expect(body.run.steps).toBe(30);
    const bad = await api<{ error: string }>(viewer, "/training/scaling-ppo?since=-1");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^query\.since/);
  });

  it("answers 404 and one line for a run that is not there", async () => {
    const { status, body } = await api<{ error: string }>(viewer, "/training/nope");
    expect(status).toBe(404);
    expect(body).toEqual({ error: 'no training run "nope"' });
  });

  it("shows a step appended while the viewer runs (a running run)", async () => {
    const store = TrainingStore.open(db);
    try {
      store.beginRun("live", { env: "gridworld", schedule: "custom:4x2,6" });
      store.appendStep("live", { step: 0, meanReward: 0.1, horizon: 4 });
      const before = await api<TrainingRunResponse>(viewer, "/training/live");
      expect(before.body.run).toMatchObject({ status: "running", steps: 1 });
      expect(before.body.curve.kl).toEqual([null]);
      store.appendStep("live", { step: 1, meanReward: 0.2, horizon: 4, kl: 0.01 });
      const after = await api<TrainingRunResponse>(viewer, "/training/live");
      expect(after.body.curve).toMatchObject({
        step: [0, 1],
        meanReward: [0.1, 0.2],
        kl: [null, 0.01],
      });
      expect(after.body.schedule?.stages.map((s) => s.startStep)).toEqual([0, 2]);
    } finally {
      store.db.prepare("DELETE FROM training_runs WHERE id = 'live'").run();
      store.close();
    }
  });
});

describe("no store yet", () => {
  it("lists nothing and has no run", async () => {
    const empty = scratchDir("training-none");
    const none = await startViewer(join(empty.dir, "absent.db"));
    try {
      expect((await api(none, "/training")).body).toEqual({ items: [], nextCursor: null });
      expect((await api(none, "/training/x")).status).toBe(404);
    } finally {
      await none.close();
      empty.remove();
    }
  });
});

describe("bundle", () => {
  it("names the list and each chosen training run's page, spelled as apiPath spells them", () => {
    const store = TrainingStore.open(db, { readonly: true });
    try {
      const bundle = trainingApi.bundle;
      expect(bundle).toBeDefined();
      if (!bundle) return;
      expect(bundle(store.db, "all")).toEqual([
        "/training",
        "/training/fixed-grpo",
        "/training/scaling-ppo",
      ]);
      expect(bundle(store.db, new Set(["scaling-ppo", "some-eval-run"]))).toEqual([
        "/training",
        "/training/scaling-ppo",
      ]);
      expect(bundle(store.db, new Set(["some-eval-run"]))).toEqual([]);
    } finally {
      store.close();
    }
  });
});
