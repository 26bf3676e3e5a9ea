/**
 * The quality-diversity page in chromium, over CycleQD runs the library's stored loop wrote
 * (runStoredCycle on the three-task vector genome of the loop's tests, as `clade qd` stores a
 * run): every archive drawn as a heat map with exactly the API's filled cells, the slider moving
 * to generation 0 leaving fewer filled, a click on an elite opening its scores, the list linking
 * to a run, and a running run's maps advancing by themselves when generations are stored.
 */
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { MemoryGenomeStore } from "../../src/improve/qd/cycle.js";
import { QdStore } from "../../src/store/qd-log.js";
import type { QdArchivesResponse } from "../../src/web/api/qd.js";
import { writeBundle } from "../../src/web/bundle.js";
import { type Vec, vectorGenome } from "../improve/qd/vector-genome.js";
import { QD_BINS as BINS, storeQdRun, QD_TASKS as TASKS } from "./fixtures/qd-runs.js";
import { viewerInBrowser } from "./fixtures/viewer-in-browser.js";
import { api, noBrowser } from "./support.js";

/** More generations than a bundle holds (50 evenly spaced and the last). */
const LAST = 60;

const filled = (body: QdArchivesResponse) => body.archives.reduce((n, a) => n + a.cells.length, 0);

describe.skipIf(noBrowser !== undefined)("quality-diversity page", () => {
  const liveGenomes = new MemoryGenomeStore<Vec>();
  /** Stores the run left running, "live", up to `generations` (its genomes resume it). */
  const storeLive = (store: QdStore, generations: number) =>
    storeQdRun(store, "live", { genome: vectorGenome(), genomes: liveGenomes, generations });
  const app = viewerInBrowser("qd-e2e", async (db) => {
    const store = QdStore.open(db);
    try {
      const genomes = new MemoryGenomeStore<Vec>();
      await storeQdRun(store, "q1", { genome: vectorGenome(), genomes, generations: LAST });
      store.setStatus("q1", "complete");
      await storeLive(store, 4); // left running
    } finally {
      store.close();
    }
  });

  it("draws every archive as a heat map, and the slider changes the filled cells", async () => {
    const { page, problems, screenshot, close } = await app.open("#/qd/q1");
    page.setDefaultTimeout(5_000);
    try {
      const last = (await api<QdArchivesResponse>(app.viewer, "/qd/q1/archives")).body;
      const { body: first } = await api<QdArchivesResponse>(
        app.viewer,
        "/qd/q1/archives?generation=0",
      );
      expect(filled(first)).toBeLessThan(filled(last));
      await expect.poll(() => page.getByTestId("qd-heatmap").count()).toBe(3);
      const cells = page.getByTestId("qd-cell");
      await expect.poll(() => cells.count()).toBe(filled(last));
      // Every cell is drawn: the filled ones and the blank ones make three 15 × 15 grids.
      expect(await page.getByTestId("qd-empty").count()).toBe(3 * BINS * BINS - filled(last));
      expect(await page.getByTestId("qd-generation").textContent()).toBe(String(LAST));
      expect(await page.getByTestId("qd-legend").count()).toBe(3);
      expect(await page.getByTestId("qd-curve").count()).toBe(2);
      // The archive of maze shows the maze archive's elites at their bins.
      const maze = page.locator(
        '[data-testid="qd-heatmap"][data-task="maze"] [data-testid="qd-cell"]',
      );
      expect((await maze.evaluateAll((all) => all.map((c) => c.dataset.id))).sort()).toEqual(
        (last.archives[0]?.cells.map((c) => c.id) ?? []).sort(),
      );
      await screenshot("qd-run");

      await page.getByTestId("qd-slider").fill("0");
      await expect.poll(() => page.getByTestId("qd-generation").textContent()).toBe("0");
      await expect.poll(() => cells.count()).toBe(filled(first));
      expect(page.url()).toMatch(/generation=0/);
      await page.getByTestId("qd-slider").fill("20");
      await expect.poll(() => page.getByTestId("qd-generation").textContent()).toBe("20");
      const { body: middle } = await api<QdArchivesResponse>(
        app.viewer,
        "/qd/q1/archives?generation=20",
      );
      await expect.poll(() => cells.count()).toBe(filled(middle));
      // One archive alone, from the address.
      await page.getByTestId("qd-task").selectOption("gridworld");
      await expect.poll(() => page.getByTestId("qd-heatmap").count()).toBe(1);
      expect(await cells.count()).toBe(middle.archives[2]?.cells.length);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it("opens an elite's scores on every task when its cell is clicked", async () => {
    const { page, problems, screenshot, close } = await app.open("#/qd/q1");
    page.setDefaultTimeout(5_000);
    try {
      const last = (await api<QdArchivesResponse>(app.viewer, "/qd/q1/archives")).body;
      const elite = last.archives[1]?.cells.find((c) => c.generation > 0);
      expect(elite).toBeDefined();
      const target = page.locator(
        `[data-testid="qd-heatmap"][data-task="textcraft"] [data-id="${elite?.id}"]`,
      );
      await target.click();
      const panel = page.getByTestId("qd-elite");
      await expect.poll(() => panel.getAttribute("data-id")).toBe(elite?.id);
      const rows = page.locator('[data-testid="qd-elite-scores"] tbody tr');
      await expect.poll(() => rows.count()).toBe(3);
      const shown = await rows.evaluateAll((all) =>
        all.map((row) => [...row.querySelectorAll("td")].slice(0, 3).map((td) => td.textContent)),
      );
      expect(shown).toEqual(
        TASKS.map((label, k) => [label, elite?.scores[k]?.toFixed(3), String(elite?.bins[k])]),
      );
      expect(await panel.textContent()).toContain(`Born in generation ${elite?.generation}`);
      expect(await panel.textContent()).toContain("parents drawn from the archive of");
      // From the server: what each archive did when it was offered.
      const birth = page.locator('[data-testid="qd-elite-birth"] tbody tr');
      await expect.poll(() => birth.count()).toBe(3);
      // The elite is outlined wherever it holds a cell, and the address keeps it.
      expect(await page.locator(".qd-selected").count()).toBeGreaterThanOrEqual(1);
      expect(decodeURIComponent(page.url())).toContain(`elite=${elite?.id}`);
      await screenshot("qd-elite");
      await page.getByTestId("qd-elite-close").click();
      await expect.poll(() => panel.count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it("lists the runs and advances a running run's maps as generations are stored", async () => {
    const { page, problems, screenshot, close } = await app.open("#/qd");
    page.setDefaultTimeout(5_000);
    try {
      const rows = page.locator('[data-testid="qd-runs"] tbody tr');
      await expect.poll(() => rows.count()).toBe(2);
      await screenshot("qd-list");
      await page.getByRole("link", { name: "live" }).click();
      await expect.poll(() => page.getByTestId("qd-generation").textContent()).toBe("4");
      const before = (await api<QdArchivesResponse>(app.viewer, "/qd/live/archives")).body;
      await expect.poll(() => page.getByTestId("qd-cell").count()).toBe(filled(before));
      expect(await page.textContent("main")).toContain("following the run");

      const store = QdStore.open(app.db);
      try {
        await storeLive(store, 12);
      } finally {
        store.close();
      }
      await expect.poll(() => page.getByTestId("qd-generation").textContent()).toBe("12");
      const after = (await api<QdArchivesResponse>(app.viewer, "/qd/live/archives")).body;
      await expect.poll(() => page.getByTestId("qd-cell").count()).toBe(filled(after));
      await expect.poll(() => page.getByTestId("qd-slider").getAttribute("max")).toBe("12");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it("offers a static bundle's generations only: the slider snaps to those it holds", async () => {
    const dir = join(dirname(app.db), "bundle");
    await writeBundle({ db: app.db, dir, ids: ["q1"] });
    const { page, problems, screenshot, close } = await app.open(
      `${pathToFileURL(join(dir, "index.html")).href}#/qd/q1`,
    );
    page.setDefaultTimeout(5_000);
    try {
      const slider = page.getByTestId("qd-slider");
      await expect.poll(() => slider.getAttribute("max")).toBe("50");
      expect(await page.getByTestId("qd-generation").textContent()).toBe(String(LAST));
      expect(await page.textContent("main")).toContain("this bundle holds 51 of 61 generations");
      // Step 4 of 50 over generations 0-60 is generation round(4 × 1.2) = 5.
      await slider.fill("4");
      await expect.poll(() => page.getByTestId("qd-generation").textContent()).toBe("5");
      const five = (await api<QdArchivesResponse>(app.viewer, "/qd/q1/archives?generation=5")).body;
      await expect.poll(() => page.getByTestId("qd-cell").count()).toBe(filled(five));
      // An elite opens from its cell; what only a server knows is left out.
      await page.getByTestId("qd-cell").first().click();
      await expect
        .poll(() => page.locator('[data-testid="qd-elite-scores"] tbody tr').count())
        .toBe(3);
      expect(await page.getByTestId("qd-elite-birth").count()).toBe(0);
      await screenshot("qd-bundle");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
