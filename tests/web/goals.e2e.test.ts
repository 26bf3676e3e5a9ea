/**
 * The goals pages in a real browser (Debian's chromium), over a real judging job: three scripted
 * judges over three support conversations, disagreeing on a cause (c2) and on where a goal
 * starts (c3). The evaluation's page shows GSR with its interval; a conversation shows its goals
 * and every judge's label and rationale side by side; in the review queue a reviewer's label is
 * saved (who and when appear) and the GSR on the page changes. A screenshot of each page.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBundle } from "../../src/web/bundle.js";
import type { ViewServer } from "../../src/web/server.js";
import { JUDGES, storeJudgingJob, THREE_CONVERSATIONS } from "./fixtures/judging-job.js";
import { launchBrowser, noBrowser, openPage, scratchDir, startViewer } from "./support.js";

describe.skipIf(noBrowser !== undefined)("the goals pages in a browser", () => {
  const scratch = scratchDir("goals-e2e");
  const db = join(scratch.dir, "clade.db");
  let viewer: ViewServer;
  let browser: Browser;

  beforeAll(async () => {
    await storeJudgingJob(db, THREE_CONVERSATIONS);
    viewer = await startViewer(db);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    scratch.remove();
  });

  it("lists the evaluation and shows its GSR, causes and conversations", async () => {
    const { page, problems, screenshot, close } = await openPage(browser);
    try {
      await page.goto(`${viewer.url}#/goals`);
      const row = page.getByTestId("goal-run");
      await expect.poll(() => row.count()).toBe(1);
      expect(await row.innerText()).toMatch(/support[\s\S]*complete[\s\S]*50\.0%/);
      await screenshot("goals-list");

      await row.getByRole("link", { name: "support" }).click();
      await expect.poll(() => page.getByTestId("gsr-value").innerText()).toBe("50.0%");
      expect(await page.getByTestId("gsr").innerText()).toMatch(
        /\[\d+\.\d, \d+\.\d\] · 2\/4 goals/,
      );
      expect(await page.getByTestId("open-review").innerText()).toMatch(/2 open/);
      expect(await page.getByTestId("causes").innerText()).toMatch(/E1\s+Language understanding/);
      await expect.poll(() => page.getByTestId("conversation-row").count()).toBe(3);
      await screenshot("goals-evaluation");

      await page.getByTestId("status-filter").selectOption("queued");
      await expect.poll(() => page.url()).toMatch(/status=queued/);
      await expect.poll(() => page.getByTestId("conversation-row").count()).toBe(2);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it("shows a conversation by goals with the judges' labels and rationales side by side", async () => {
    const { page, problems, screenshot, close } = await openPage(browser);
    try {
      await page.goto(`${viewer.url}#/goals/support/conversations/2`);
      const goals = page.getByTestId("goal");
      await expect.poll(() => goals.count()).toBe(1);
      expect(await goals.first().getAttribute("data-outcome")).toBe("failure");
      expect(await goals.first().innerText()).toMatch(/failure at turn 3: root cause E1/);
      const turn2 = page.locator('[data-testid="turn"][data-turn="2"]');
      expect(await turn2.getByTestId("judge-column").allInnerTexts()).toEqual(
        JUDGES.map((model, j) => `judge ${j + 1}\n${model}`),
      );
      expect(await turn2.getByTestId("rationale").allInnerTexts()).toEqual([
        "why N s",
        "why . s",
        "why . s",
      ]);
      // The judges disagree on whether turn 2 starts a goal: that row is highlighted, queued.
      const newGoal = turn2.locator('tr[data-field="is_new_goal"]');
      expect(await newGoal.getAttribute("data-disagree")).toBe("yes");
      expect(await newGoal.innerText()).toMatch(/queued/);
      expect(await turn2.locator('tr[data-field="quality"]').getAttribute("data-disagree")).toBe(
        "no",
      );
      await screenshot("goals-conversation");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it("saves a reviewer's label from the queue, who and when shown, and the GSR changes", async () => {
    const { page, problems, screenshot, close } = await openPage(browser);
    try {
      await page.goto(`${viewer.url}#/goals/support/queue`);
      const items = page.getByTestId("queue-item");
      await expect.poll(() => items.count()).toBe(2);
      await expect.poll(() => page.getByTestId("gsr-value").innerText()).toBe("50.0%");
      await screenshot("goals-queue");

      const save = page.locator('[data-conversation="c3"]').getByTestId("review-save");
      expect(await save.isDisabled()).toBe(true);
      await page.getByTestId("reviewer").fill("alice");
      const item = page.locator('[data-conversation="c3"]');
      await item.getByTestId("review-value").selectOption("true");
      await item.getByTestId("review-note").fill("turn 2 asks about something else");
      await item.getByTestId("review-save").click();

      const saved = page.getByTestId("saved");
      await expect.poll(() => saved.count()).toBe(1);
      expect(await saved.innerText()).toMatch(/alice set new goal of c3 turn 2 to yes/);
      expect(await saved.getByTestId("saved-at").innerText()).toMatch(
        /^at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
      );
      expect(await saved.getByTestId("saved-gsr").innerText()).toBe("50.0% → 60.0%");
      // The page asks again when the store changes: the card follows, the field leaves the queue.
      await expect.poll(() => page.getByTestId("gsr-value").innerText()).toBe("60.0%");
      await expect.poll(() => items.count()).toBe(1);
      expect(await page.getByTestId("queue-counts").innerText()).toMatch(/1 open/);
      await screenshot("goals-queue-saved");

      // Every queued field, with the review that settled it; the reviewer's name is remembered.
      await page.getByTestId("show-all").check();
      await expect.poll(() => page.getByTestId("item-review").count()).toBe(1);
      expect(await page.getByTestId("item-review").innerText()).toMatch(
        /reviewed: yes by alice at /,
      );
      await page.reload();
      await expect.poll(() => page.getByTestId("reviewer").inputValue()).toBe("alice");

      // The conversation now has two goals, the first achieved, and shows the review.
      await page.goto(`${viewer.url}#/goals/support/conversations/2`);
      await expect.poll(() => page.getByTestId("goal").count()).toBe(2);
      expect(
        await page
          .getByTestId("goal")
          .evaluateAll((els) => els.map((e) => e.getAttribute("data-outcome"))),
      ).toEqual(["success", "failure"]);
      expect(await page.getByTestId("review").innerText()).toMatch(
        /alice set new goal to yes at .* — turn 2 asks about something else/,
      );
      await screenshot("goals-conversation-reviewed");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it("opens from a static bundle: the queue and a conversation, with no review form", async () => {
    const written = await writeBundle({ db, dir: join(scratch.dir, "bundle"), ids: ["support"] });
    const { page, problems, screenshot, close } = await openPage(browser);
    try {
      await page.goto(`${pathToFileURL(written.index).href}#/goals/support/queue`);
      await expect.poll(() => page.getByTestId("queue-item").count()).toBeGreaterThan(0);
      expect(await page.getByTestId("read-only").innerText()).toMatch(/static copy/);
      expect(await page.getByTestId("review-form").count()).toBe(0);
      expect(await page.getByTestId("gsr-value").innerText()).toMatch(/%$/);
      await page.goto(`${pathToFileURL(written.index).href}#/goals/support?status=queued`);
      await expect.poll(() => page.getByTestId("conversation-row").count()).toBe(2);
      await page.getByRole("link", { name: "c2" }).click();
      await expect.poll(() => page.getByTestId("judge-column").count()).toBeGreaterThan(0);
      await screenshot("goals-bundle-conversation");
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
