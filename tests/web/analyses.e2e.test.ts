/**
 * The Analyses page in Debian's chromium, on real blade runs (the reference solver and the naive
 * baseline on coffee and icecream, embedded SQL): the list of blade runs, a run's score cards and
 * analyses, and one analysis beside the ground truth, matched pairs on one row and unmatched
 * decisions alone on the agent's side and on the experts'. Screenshots of each page. Skipped,
 * saying why, without chromium or without the sandbox the analyses run in.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findEnv } from "../../src/env/registry.js";
import { runEvaluation } from "../../src/eval/evaluation.js";
import { checkSandbox } from "../../src/sandbox/index.js";
import { RunStore } from "../../src/store/run-store.js";
import type { ViewServer } from "../../src/web/server.js";
import { launchBrowser, noBrowser, openPage, scratchDir, startViewer } from "./support.js";

const sandbox = await checkSandbox().catch((error: Error) => error);
const noSandbox = sandbox instanceof Error ? sandbox.message : undefined;
if (noSandbox) console.warn(`skipping the Analyses page tests: ${noSandbox}`);

describe.skipIf(noBrowser !== undefined || noSandbox !== undefined)("the Analyses page", () => {
  const scratch = scratchDir("analyses-e2e");
  const db = join(scratch.dir, "clade.db");
  let viewer: ViewServer;
  let browser: Browser;

  beforeAll(async () => {
    const store = RunStore.open(db);
    try {
      const common = { env: findEnv("blade"), store, tasks: [0, 2], timeoutMs: 120_000 };
      await runEvaluation({ ...common, agent: "reference", runId: "reference" });
      await runEvaluation({ ...common, agent: "naive", runId: "naive" });
    } finally {
      store.close();
    }
    viewer = await startViewer(db);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    scratch.remove();
  });

  it("lists the blade runs and opens a run's scores and analyses", async () => {
    const { page, problems, screenshot, close } = await openPage(browser);
    try {
      await page.goto(`${viewer.url}#/analyses`);
      const runs = page.getByTestId("analysis-runs");
      await runs.waitFor();
      expect(await runs.locator("tbody tr").count()).toBe(2);
      await expect(page.locator("[data-nav=analyses]").textContent()).resolves.toMatch(/Analyses/);
      await screenshot("analyses-list");

      await page.locator("a[data-run=reference]").click();
      await page.getByTestId("analysis-run").waitFor();
      const weighted = page.getByTestId("score-weighted");
      await expect(weighted.locator(".value").textContent()).resolves.toMatch(/^0\.\d{3}$/);
      await expect(
        page.getByTestId("conclusion-direction").locator(".value").textContent(),
      ).resolves.toBe("1.000");
      const rows = page.getByTestId("analyses").locator("tbody tr");
      expect(await rows.count()).toBe(2);
      await expect(rows.nth(0).textContent()).resolves.toMatch(/coffee.*success/);
      expect(await page.getByTestId("categories").locator("tbody tr").count()).toBe(5);
      await screenshot("analyses-run");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it("shows an analysis beside the ground truth, matched and unmatched on both sides", async () => {
    const { page, problems, screenshot, close } = await openPage(browser);
    try {
      await page.goto(`${viewer.url}#/analyses/naive`);
      await page.getByTestId("analyses").locator("a", { hasText: "icecream" }).click();
      await page.getByTestId("analysis-view").waitFor();
      expect(page.url()).toMatch(/#\/analyses\/naive\?episode=\d+$/);

      // Variables: the IV and DV matched, aligned on one row with a ✓; the experts' controls alone.
      const variables = page.getByTestId("decisions-variables");
      const matched = variables.locator("tr[data-matched=true]");
      expect(await matched.count()).toBe(2);
      await expect(matched.nth(0).locator("td.mark").textContent()).resolves.toMatch(
        /✓.*similarity 10/,
      );
      await expect(matched.nth(0).locator("[data-side=gt]").textContent()).resolves.toMatch(
        /In-store price promotion/,
      );
      expect(await matched.locator("[data-absent]").count()).toBe(0);
      const gtAlone = variables.locator("tr[data-matched=false]");
      expect(await gtAlone.count()).toBe(4);
      expect(await gtAlone.locator("[data-side=agent][data-absent]").count()).toBe(4);
      await expect(gtAlone.nth(0).locator("[data-side=gt]").textContent()).resolves.toMatch(
        /Weather/,
      );

      // Model: the agent's linear regression alone, the experts' Poisson models alone.
      const model = page.getByTestId("decisions-model");
      const agentAlone = model.locator("tr:has([data-side=gt][data-absent])");
      expect(await agentAlone.count()).toBe(1);
      await expect(agentAlone.locator("[data-side=agent]").textContent()).resolves.toMatch(
        /Linear regression.*ols\(units_sold ~ promotion\)/s,
      );
      expect(await model.locator("tr:has([data-side=agent][data-absent])").count()).toBe(3);

      // Transforms: none given by the agent; the experts' code is shown.
      const transforms = page.getByTestId("decisions-transforms");
      await expect(transforms.locator("pre.code").first().textContent()).resolves.toMatch(/SELECT/);
      await expect(page.getByTestId("decisions-conclusion").textContent()).resolves.toMatch(
        /direction right/,
      );
      await screenshot("analyses-analysis-naive");

      // The reference's coffee analysis: its transform units paired with the experts'.
      await page.goto(`${viewer.url}#/analyses/reference`);
      await page.getByTestId("analyses").locator("a", { hasText: "coffee" }).click();
      const units = page.getByTestId("decisions-transforms").locator("tr[data-matched=true]");
      await units.first().waitFor();
      expect(await units.count()).toBe(3);
      await expect(units.nth(0).locator("[data-side=agent] pre").textContent()).resolves.toBe(
        "SELECT * FROM df WHERE systolic_bp > 0",
      );
      await expect(units.nth(0).locator("td.mark").textContent()).resolves.toMatch(
        /by value and by graph/,
      );
      await screenshot("analyses-analysis-reference");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
