/**
 * The episode page in chromium over a store written by real runs: a ReAct agent on the fake
 * OpenAI server (two cache hits and a call retried after a 503 in one episode) and the
 * reference agent (no model calls). Turns, the calls table and a call's request and response.
 */
import { describe, expect, it } from "vitest";
import type { EpisodeResponse } from "../../src/web/api/episodes.js";
import { type LlmEpisodes, REPLY, storeLlmRuns } from "./fixtures/llm-runs.js";
import { viewerInBrowser } from "./fixtures/viewer-in-browser.js";
import { api, noBrowser } from "./support.js";

describe.skipIf(noBrowser !== undefined)("episode page", () => {
  let ids: LlmEpisodes;
  const app = viewerInBrowser("episode-e2e", async (db) => {
    ids = await storeLlmRuns(db);
  });

  it("shows the turns, the calls with cache hits and retries, and a call's request and response", async () => {
    const { body } = await api<EpisodeResponse>(app.viewer, `/episodes/${ids.mixed}`);
    const watched = await app.open(`#/episodes/${ids.mixed}`);
    const { page } = watched;
    try {
      await page.getByTestId("episode").waitFor();
      expect(await page.getByTestId("outcome").textContent()).toBe("failure");
      expect(await page.getByTestId("run-link").getAttribute("href")).toBe("#/runs/mixed");
      expect(await page.getByTestId("end-reason").textContent()).toContain("max_turns");
      // The instruction's 13 lines are folded to 12 until opened.
      const instruction = page.getByTestId("instruction");
      expect(await instruction.textContent()).toContain("You are in a maze");
      expect(await instruction.textContent()).not.toContain("count too.");
      await instruction.getByTestId("fold").click();
      expect(await instruction.textContent()).toContain("moves into walls count too.");
      expect(await page.getByTestId("total-tokens").textContent()).toContain(
        `${body.totals.inputTokens} / ${body.totals.outputTokens}`,
      );

      const turns = page.getByTestId("turn");
      expect(await turns.count()).toBe(3);
      const second = turns.nth(1);
      expect(await second.getByTestId("action").textContent()).toBe("move up");
      expect(await second.getByTestId("thought").textContent()).toBe(REPLY);
      expect(await second.getByTestId("observation").textContent()).toContain("wall above you");

      // One call per turn: the first two from the cache, the third retried once after a 503.
      const calls = page.getByTestId("call");
      expect(await calls.count()).toBe(3);
      expect(await page.getByTestId("cache").allTextContents()).toEqual(["hit", "hit", "miss"]);
      expect(await page.getByTestId("retries").allTextContents()).toEqual(["0", "0", "1"]);
      expect(await page.getByTestId("attempt-error").allTextContents()).toEqual([
        expect.stringMatching(/^attempt 1 failed: HTTP 503/),
      ]);

      expect(await page.getByTestId("call-body").count()).toBe(0);
      await calls.nth(2).getByTestId("open-call").click();
      const callBody = page.getByTestId("call-body");
      await callBody.getByTestId("request").waitFor();
      // The whole conversation of the third turn: system, instruction, "OK.", and two exchanges.
      const roles = await callBody
        .getByTestId("message")
        .evaluateAll((nodes) => nodes.map((n) => n.querySelector(".role")?.textContent));
      expect(roles).toEqual([
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
      ]);
      expect(await callBody.getByTestId("response-content").textContent()).toBe(REPLY);
      const requestJson = JSON.parse(
        (await callBody.getByTestId("request-json").textContent()) ?? "",
      );
      expect(requestJson.messages).toHaveLength(8);
      await watched.screenshot("episode");

      await calls.nth(2).getByTestId("open-call").click();
      expect(await page.getByTestId("call-body").count()).toBe(0);
      expect(watched.problems).toEqual([]);
    } finally {
      await watched.close();
    }
  });

  it("shows a reference-agent episode, which made no model calls", async () => {
    const { body } = await api<EpisodeResponse>(app.viewer, `/episodes/${ids.reference}`);
    const watched = await app.open(`#/episodes/${ids.reference}`);
    const { page } = watched;
    try {
      await page.getByTestId("episode").waitFor();
      expect(await page.getByTestId("outcome").textContent()).toBe("success");
      expect(await page.getByTestId("turn").count()).toBe(body.steps.length);
      expect(await page.getByTestId("calls").count()).toBe(0);
      expect(await page.getByTestId("total-calls").textContent()).toContain("0");
      expect(await page.getByTestId("step-reward").last().textContent()).toBe("1");
      await watched.screenshot("episode-reference");
      expect(watched.problems).toEqual([]);
    } finally {
      await watched.close();
    }
  });

  it("says so in one line for an unknown episode and for an address that is no episode's", async () => {
    const watched = await app.open("#/episodes/999999");
    const { page } = watched;
    try {
      await page.getByRole("alert").waitFor();
      expect(await page.getByRole("alert").textContent()).toBe("no episode with id 999999");
      await watched.screenshot("episode-unknown");
      await page.goto(new URL("#/episodes/abc", app.viewer.url).href);
      await page.getByText("not an episode address").waitFor();
      // The browser logs the 404 answer itself; nothing else may go wrong.
      expect(watched.problems.filter((p) => !/status of 404/.test(p))).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});
