/**
 * The runs, run and compare pages in chromium over a store written by real maze runs (reference
 * and random agents) and RunStore (errors, not run, parse errors, a killed run): statuses in the
 * list, filters and sorting changing the rows, per-task outcomes and the failures/errors filters
 * on a run, and the flipped tasks of two runs with the only-flipped toggle.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { RunStore } from "../../src/store/run-store.js";
import { markOwnerGone, mazeEpisode, storeMazeRuns } from "./fixtures/maze-runs.js";
import { viewerInBrowser } from "./fixtures/viewer-in-browser.js";
import { noBrowser } from "./support.js";

/** ref passes tasks 0-3, rand fails them; mixed: 0 pass, 1 pass/fail, 2 fail, 3 error/pass. */
async function buildStore(db: string): Promise<void> {
  await storeMazeRuns(db, "0-3");
  const store = RunStore.open(db);
  try {
    const envVersion = store.getRun("ref")?.envVersion as string;
    const header = (id: string) => ({ id, env: "maze", envVersion, agent: "llm", config: {} });
    store.startRun(header("mixed"));
    store.saveEpisodes("mixed", [
      mazeEpisode(0, 0, "success"),
      mazeEpisode(0, 1, "success"),
      mazeEpisode(1, 0, "success"),
      mazeEpisode(1, 1, "failure", { parseErrors: 1 }),
      mazeEpisode(2, 0, "failure"),
      mazeEpisode(2, 1, "failure"),
      mazeEpisode(3, 0, "error", { error: "provider error: HTTP 529 overloaded" }),
      mazeEpisode(3, 1, "success"),
    ]);
    store.markNotRun("mixed", [{ taskIndex: 4, sampleIndex: 0, seed: 0 }]);
    store.setStatus("mixed", "interrupted", "budget");
    store.startRun(header("killed"));
    store.saveEpisodes("killed", [mazeEpisode(0, 0, "failure")]);
  } finally {
    store.close();
  }
  markOwnerGone(db, "killed");
}

describe.skipIf(noBrowser !== undefined)("runs pages", () => {
  const app = viewerInBrowser("runs-e2e", buildStore);

  /** The run ids the list shows, once it shows `count` of them. */
  async function listed(page: Page, count: number): Promise<string[]> {
    const links = page.locator("[data-testid=runs-table] [data-testid=run-link]");
    await expect.poll(() => links.count()).toBe(count);
    return links.allTextContents();
  }

  it("lists the runs with their statuses; filters and sorting change the rows", async () => {
    const watched = await app.open("#/runs");
    const { page } = watched;
    try {
      expect((await listed(page, 4)).sort()).toEqual(["killed", "mixed", "rand", "ref"]);
      const status = (id: string) =>
        page
          .locator("tr", { has: page.getByRole("link", { name: id, exact: true }) })
          .locator("[data-status]");
      expect(await status("killed").getAttribute("data-status")).toBe("killed (resumable)");
      expect(await status("mixed").getAttribute("data-status")).toBe("interrupted (budget)");
      expect(await status("ref").getAttribute("data-status")).toBe("complete");
      // Errors apart from failures: one error, not in the rate's denominator (4 / (4 + 3)).
      const mixedRow = page.locator("tr", {
        has: page.getByRole("link", { name: "mixed", exact: true }),
      });
      expect(await mixedRow.getByTestId("error-count").textContent()).toBe("1");
      expect(await mixedRow.getByTestId("success-rate").textContent()).toBe("0.571");
      await watched.screenshot("runs-list");

      await page.getByTestId("filter-status").selectOption("killed");
      expect(await listed(page, 1)).toEqual(["killed"]);
      expect(page.url()).toContain("status=killed");
      await page.getByTestId("filter-status").selectOption("");
      await listed(page, 4);
      await page.getByTestId("filter-agent").selectOption("reference");
      expect(await listed(page, 1)).toEqual(["ref"]);
      await page.getByTestId("filter-agent").selectOption("");
      await page.getByTestId("filter-q").fill("ran");
      await page.getByTestId("filter-q").press("Enter");
      expect(await listed(page, 1)).toEqual(["rand"]);
      await page.getByTestId("filter-q").fill("");
      await page.getByTestId("filter-q").press("Enter");
      await listed(page, 4);

      // Sort by success rate: highest first, then lowest first (runs with none finished last).
      await page.locator("th[data-sort=success]").click();
      await expect.poll(() => page.url()).toContain("sort=success");
      await expect.poll(async () => (await listed(page, 4))[0]).toBe("ref");
      expect(await listed(page, 4)).toEqual(["ref", "mixed", "rand", "killed"]);
      await page.locator("th[data-sort=success]").click();
      await expect.poll(() => page.url()).toContain("dir=asc");
      await expect.poll(async () => (await listed(page, 4))[0]).toBe("killed");
      expect(await listed(page, 4)).toEqual(["killed", "rand", "mixed", "ref"]);
      await watched.screenshot("runs-list-sorted");
      expect(watched.problems).toEqual([]);
    } finally {
      await watched.close();
    }
  });

  it("shows a run's metrics, per-task outcomes, and filters its episodes", async () => {
    const watched = await app.open("#/runs/mixed");
    const { page } = watched;
    try {
      await page.getByTestId("run-page").waitFor();
      const success = page.locator("[data-metric='success rate']");
      await success.waitFor();
      expect(await success.locator(".value").textContent()).toBe("0.571");
      expect(await success.getAttribute("title")).toMatch(
        /errored and not-run episodes are left out/,
      );
      expect(await success.textContent()).toMatch(/95% \[/);
      expect(await page.getByTestId("total-error").textContent()).toContain("1");
      expect(await page.getByTestId("total-failure").textContent()).toContain("3");
      expect(await page.getByTestId("error-groups").textContent()).toContain(
        "provider error: HTTP # overloaded",
      );

      // Per task across samples: one cell per sample, by outcome.
      const cells = page.getByTestId("task-cells");
      await expect.poll(() => cells.count()).toBe(5);
      const outcomes = await cells.evaluateAll((rows) =>
        rows.map((r) => (r.getAttribute("data-outcomes") ?? "").split(",")),
      );
      expect(outcomes).toEqual([
        ["success", "success"],
        ["success", "failure"],
        ["failure", "failure"],
        ["error", "success"],
        ["not_run"],
      ]);

      const shown = page.locator("[data-testid=episodes-table] [data-testid=episode-outcome]");
      await expect.poll(() => shown.count()).toBe(9);
      await watched.screenshot("run-page");
      await page.locator("[data-testid=episode-filters] [data-filter=failure]").click();
      await expect.poll(() => shown.allTextContents()).toEqual(["failure", "failure", "failure"]);
      expect(page.url()).toContain("outcome=failure");
      await page.locator("[data-testid=episode-filters] [data-filter=error]").click();
      await expect.poll(() => shown.allTextContents()).toEqual(["error"]);
      await page.locator("[data-testid=episode-filters] [data-filter=parse_errors]").click();
      await expect.poll(() => shown.allTextContents()).toEqual(["failure"]);
      await page.locator("[data-testid=episode-filters] [data-filter=success]").click();
      await expect.poll(() => shown.count()).toBe(4);
      await page.locator("[data-testid=episode-filters] [data-filter=not_run]").click();
      await expect.poll(() => shown.allTextContents()).toEqual(["not_run"]);
      // An episode links to its page.
      expect(await page.getByTestId("episode-link").first().getAttribute("href")).toMatch(
        /^#\/episodes\/\d+$/,
      );
      await watched.screenshot("run-page-not-run");
      expect(watched.problems).toEqual([]);
    } finally {
      await watched.close();
    }
  });

  it("compares two ticked runs: flipped tasks marked, and only those on the toggle", async () => {
    const watched = await app.open("#/runs");
    const { page } = watched;
    try {
      await listed(page, 4);
      await page.locator("[data-testid=pick-run][data-run=ref]").check();
      await page.locator("[data-testid=pick-run][data-run=mixed]").check();
      await page.getByTestId("compare-picked").click();
      await page.getByTestId("compare-page").waitFor();
      expect(page.url()).toContain("#/compare?a=ref&b=mixed");
      const metrics = page.getByTestId("compare-metrics");
      await metrics.waitFor();
      // B − A of the success rate over the shared tasks 0-3: 4/7 − 1.
      expect(await metrics.textContent()).toContain("-0.429");

      const tasks = page.locator("[data-testid=compare-table] [data-testid=compare-task]");
      await expect.poll(() => tasks.count()).toBe(4);
      const flipped = page.locator(
        "[data-testid=compare-table] tr.flipped [data-testid=compare-task]",
      );
      expect(await flipped.allTextContents()).toEqual(["2"]);
      await watched.screenshot("compare");

      await page.getByTestId("only-flipped").check();
      await expect.poll(() => page.url()).toContain("only=flipped");
      await expect.poll(() => tasks.allTextContents()).toEqual(["2"]);
      await page.getByTestId("only-flipped").uncheck();
      await expect.poll(() => tasks.count()).toBe(4);

      // Reference against random: every task flipped.
      await page.goto(new URL("#/compare?a=ref&b=rand&only=flipped", app.viewer.url).href);
      await expect.poll(() => tasks.allTextContents()).toEqual(["0", "1", "2", "3"]);
      await watched.screenshot("compare-only-flipped");
      expect(watched.problems).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});
