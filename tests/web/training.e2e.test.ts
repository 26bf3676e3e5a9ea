/**
 * The training page in chromium, over runs the real trainer wrote (gridworld, a ScalingInter
 * schedule and a fixed one): two runs overlaid give two series in every chart, a chart per
 * metric with its canvas, the schedule's stage boundaries marked; the selection lives in the
 * address; and a running run's curve grows in place when steps are stored, with no reload.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TrainingStore } from "../../src/store/training-log.js";
import type { ViewServer } from "../../src/web/server.js";
import { trainGridworldRuns } from "./fixtures/training-runs.js";
import { launchBrowser, noBrowser, openPage, scratchDir, startViewer } from "./support.js";

const METRICS = ["meanReward", "successRate", "horizon", "entropy", "kl"];

describe.skipIf(noBrowser !== undefined)("training page", () => {
  const scratch = scratchDir("training-e2e");
  const db = join(scratch.dir, "store.db");
  let store: TrainingStore;
  let viewer: ViewServer;
  let browser: Browser;

  beforeAll(async () => {
    store = TrainingStore.open(db);
    await trainGridworldRuns(store, scratch.dir);
    // A run still training: its steps are stored by the test while the page shows it.
    store.beginRun("live", { env: "gridworld", algo: "ppo", schedule: "custom:4x2,6" });
    store.appendStep("live", { step: 0, meanReward: 0.1, successRate: 0, horizon: 4 });
    store.appendStep("live", { step: 1, meanReward: 0.2, successRate: 0.5, horizon: 4 });
    [viewer, browser] = await Promise.all([startViewer(db), launchBrowser()]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    store?.close();
    scratch.remove();
  });

  it("overlays two runs: two series per chart, a chart per metric, the stages marked", async () => {
    const { page, problems, screenshot, close } = await openPage(browser);
    page.setDefaultTimeout(5_000);
    try {
      await page.goto(`${viewer.url}#/training?ids=scaling-ppo,fixed-grpo`);
      const charts = page.getByTestId("training-chart");
      await expect.poll(() => charts.count()).toBe(METRICS.length);
      expect(await charts.evaluateAll((all) => all.map((c) => c.dataset.metric))).toEqual(METRICS);
      // Each chart is drawn: a canvas, and uPlot's legend with the step and the two runs.
      for (const metric of METRICS) {
        const chart = page.locator(`[data-testid=training-chart][data-metric=${metric}]`);
        await expect.poll(() => chart.locator("canvas").count()).toBe(1);
        expect(await chart.locator(".u-legend .u-series").allInnerTexts()).toEqual([
          expect.stringContaining("step"),
          expect.stringContaining("scaling-ppo"),
          expect.stringContaining("fixed-grpo"),
        ]);
        expect(await chart.getAttribute("data-series")).toBe("2");
        // Steps 0..29 of one run and 0..11 of the other, on one axis.
        expect(await chart.getAttribute("data-points")).toBe("30");
      }
      const legend = page.getByTestId("legend-entry");
      expect(await legend.evaluateAll((all) => all.map((e) => e.dataset.run))).toEqual([
        "scaling-ppo",
        "fixed-grpo",
      ]);
      // scaling:3,5,8@10 over steps 0..29: stages start at 10 and 20; fixed:8 has one stage.
      const curves = page.getByTestId("training-curves");
      expect(await curves.getAttribute("data-stage-markers")).toBe("2");
      expect(await curves.getAttribute("data-runs")).toBe("2");
      // The list ticks the overlaid runs; the horizon chart's axis shows steps, not clock times.
      const toggles = page.getByTestId("overlay-toggle");
      expect(await toggles.count()).toBe(3);
      expect(await page.locator("[data-testid=overlay-toggle]:checked").count()).toBe(2);
      const axis = await page.locator("[data-metric=horizon] .u-axis").first().innerText();
      expect(axis).not.toMatch(/:\d\d|AM|PM/);
      await screenshot("training-overlay");

      // Unticking a run takes it out of the address and off the charts.
      await page.locator("[data-testid=overlay-toggle][data-run=fixed-grpo]").click();
      await expect.poll(() => new URL(page.url()).hash).toBe("#/training?ids=scaling-ppo");
      await expect.poll(() => legend.count()).toBe(1);
      await expect
        .poll(() => page.locator("[data-metric=kl]").getAttribute("data-series"))
        .toBe("1");

      // Another metric can be added as a chart; the choice lives in the address too.
      await page.getByTestId("add-metric").selectOption("gradNorm");
      await expect.poll(() => charts.count()).toBe(METRICS.length + 1);
      expect(new URL(page.url()).hash).toContain("more=gradNorm");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it("shows one run with its stages and checkpoints", async () => {
    const { page, problems, screenshot, close } = await openPage(browser);
    page.setDefaultTimeout(5_000);
    try {
      await page.goto(`${viewer.url}#/training/scaling-ppo`);
      await expect.poll(() => page.getByTestId("training-chart").count()).toBe(METRICS.length);
      expect(await page.getByTestId("training-curves").getAttribute("data-stage-markers")).toBe(
        "2",
      );
      expect(await page.locator("[data-testid=training-stages] tbody tr").allInnerTexts()).toEqual([
        expect.stringMatching(/1\s+0–9\s+3\s+done/),
        expect.stringMatching(/2\s+10–19\s+5\s+done/),
        expect.stringMatching(/3\s+20–\s+8\s+current/),
      ]);
      expect(await page.locator("[data-testid=training-checkpoints] tbody tr").count()).toBe(3);
      expect(await page.getByTestId("training-config").innerText()).toContain('"schedule"');
      await screenshot("training-run");
      await page.goto(`${viewer.url}#/training/nope`);
      await expect
        .poll(() => page.getByRole("alert").innerText())
        .toContain('no training run "nope"');
      expect(problems.filter((p) => !p.includes("404"))).toEqual([]);
    } finally {
      await close();
    }
  });

  it("grows a running run's curves in place as steps are stored", async () => {
    const { page, problems, screenshot, close } = await openPage(browser);
    page.setDefaultTimeout(5_000);
    try {
      await page.goto(`${viewer.url}#/training/live`);
      const reward = page.locator("[data-testid=training-chart][data-metric=meanReward]");
      await expect.poll(() => reward.getAttribute("data-points")).toBe("2");
      expect(await page.getByTestId("training-curves").getAttribute("data-stage-markers")).toBe(
        "0",
      );
      // Remember the page and the chart's canvas: neither may be rebuilt by the update.
      // (Strings, not functions: the tests compile without the DOM's types.)
      const CANVAS = `document.querySelector("[data-metric=meanReward] canvas")`;
      await page.evaluate(`window.kept = ${CANVAS}`);

      store.appendStep("live", { step: 2, meanReward: 0.4, successRate: 0.5, horizon: 6 });
      store.appendStep("live", { step: 3, meanReward: 0.6, successRate: 1, horizon: 6, kl: 0.02 });
      await expect.poll(() => reward.getAttribute("data-points"), { timeout: 10_000 }).toBe("4");
      // custom:4x2,6: the second stage starts at step 2, which is now on the charts.
      await expect
        .poll(() => page.getByTestId("training-curves").getAttribute("data-stage-markers"))
        .toBe("1");
      expect(await page.evaluate(`window.kept.isConnected && window.kept === ${CANVAS}`)).toBe(
        true,
      );
      await screenshot("training-live");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
