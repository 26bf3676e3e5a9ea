/**
 * The Search page in a real browser (Debian's chromium through playwright-core), on a store
 * written by clade: a simulated HGM search (`clade evolve --simulate`) and a search over an agent
 * folder written event by event through SearchStore's log. The list shows both; the tree has one
 * mark per node and the final choice ringed; a click opens a node's diff, diagnosis, failed
 * improvements and evaluations; an event appended by another connection shows up by itself.
 */
import { describe, expect, it } from "vitest";
import { type SearchEvent, SearchStore } from "../../src/store/search-log.js";
import type { SearchResponse } from "../../src/web/api/searches.js";
import { runCli } from "../fixtures/cli.js";
import { type AgentSearchScript, storeAgentSearch } from "./fixtures/agent-search.js";
import { viewerInBrowser } from "./fixtures/viewer-in-browser.js";
import { api, noBrowser, openPage } from "./support.js";

const PATCH = `--- a/src/prompts.ts
+++ b/src/prompts.ts
@@ -1,2 +1,2 @@
-export const SYSTEM_PROMPT = "think about what to do";
+export const SYSTEM_PROMPT = "think about what to do (PLAN-EACH-STEP)";
 export const MAX_TURNS = 20;
`;
const PROPOSAL = "Tell the model to plan each step from the latest observation.";
const TYPECHECK =
  "typecheck failed: src/agent.ts(3,7): error TS2322: Type 'string' is not assignable";
const usage = { inputTokens: 10, outputTokens: 5, costUsd: 0.01 };

function childData(patch: string) {
  return {
    patch,
    plan: {
      log_summarization: "The agent turned left at every step.",
      potential_improvements: ["Plan each step anew"],
      improvement_proposal: PROPOSAL,
      implementation_suggestion: "Add an instruction to SYSTEM_PROMPT.",
      problem_description: "The prompt does not ask for a plan.",
    },
    target: { kind: "task", task: 0 },
    summary: "Added a plan-each-step instruction.",
    stopReason: "done",
    steps: 3,
  };
}

/** Root fails its two tasks; one improvement fails its typecheck; node 1 passes both. */
const AGENT_SEARCH: AgentSearchScript = {
  root: ["fail", "fail"],
  failed: { reason: TYPECHECK, usage, durationMs: 1 },
  made: { data: childData(PATCH), usage, durationMs: 1 },
  child: ["pass", "pass"],
};

describe.skipIf(noBrowser !== undefined)("the Search page", () => {
  const app = viewerInBrowser("searches-e2e", async (db) => {
    const evolved = await runCli(
      ...["evolve", "--simulate", "trap", "--method", "hgm", "--budget", "60", "--workers", "2"],
      ...["--run-id", "hgm1", "--db", db],
    );
    expect(evolved.code, evolved.stderr).toBe(0);
    storeAgentSearch(db, AGENT_SEARCH);
  });

  it("lists the searches, draws the tree with its final choice, opens a node", async () => {
    const watched = await openPage(app.browser);
    const { page, problems } = watched;
    await page.goto(`${app.viewer.url}#/searches`);
    await page.getByTestId("search-row").first().waitFor();
    expect(await page.getByTestId("search-row").count()).toBe(2);
    expect(await page.locator('[data-search="hgm1"]').textContent()).toMatch(
      /hgm.*trap \(simulated\)/i,
    );
    await watched.screenshot("searches-list");

    const { body } = await api<SearchResponse>(app.viewer, "/searches/hgm1");
    await page.click('[data-search="hgm1"] a');
    await page.getByTestId("search-tree").waitFor();
    expect(await page.getByTestId("tree-node").count()).toBe(body.nodes.length);
    const chosen = page.locator('[data-testid="tree-node"][data-chosen="true"]');
    expect(await chosen.count()).toBe(1);
    expect(await chosen.getAttribute("data-node")).toBe(String(body.finalChoice?.node));
    expect(await chosen.getByTestId("final-choice").count()).toBe(1);
    const parentsWithFailures = body.nodes.filter((n) => n.failedImprovements > 0).length;
    expect(await page.getByTestId("failed-mark").count()).toBe(parentsWithFailures);
    expect(await page.getByTestId("final-choice-card").textContent()).toContain(
      `node ${body.finalChoice?.node}`,
    );

    // Open the final choice: its evaluations, one row each, as the tree counts them.
    await chosen.click();
    const panel = page.getByTestId("node-panel");
    await panel.getByTestId("node-facts").waitFor();
    expect(await panel.getAttribute("data-node")).toBe(String(body.finalChoice?.node));
    expect(page.url()).toContain(`node=${body.finalChoice?.node}`);
    const node = body.nodes[body.finalChoice?.node ?? 0];
    const rows = panel.locator('[data-testid="node-evaluations"] tbody tr');
    expect(await rows.count()).toBeGreaterThanOrEqual((node?.s ?? 0) + (node?.f ?? 0));
    // A simulated agent: its hidden quality, as the API gives it.
    expect(await panel.getByTestId("node-facts").textContent()).toContain(
      `true quality${node?.quality?.toFixed(3)}`,
    );
    await watched.screenshot("search-tree-simulated");
    expect(problems).toEqual([]);
    await watched.close();
  });

  it("shows an agent node's diff, diagnosis and evaluations, and grows live", async () => {
    const watched = await openPage(app.browser);
    const { page, problems } = watched;
    await page.goto(`${app.viewer.url}#/searches/agent1?node=1`);
    const panel = page.getByTestId("node-panel");
    const diff = panel.getByTestId("node-diff");
    await diff.waitFor();
    // "+++"/"---" name the files; only changed lines are coloured as added or removed.
    expect(await diff.locator(".diff-add").allTextContents()).toEqual([
      '+export const SYSTEM_PROMPT = "think about what to do (PLAN-EACH-STEP)";',
    ]);
    expect(await diff.locator(".diff-del").allTextContents()).toEqual([
      '-export const SYSTEM_PROMPT = "think about what to do";',
    ]);
    expect(await diff.locator(".diff-hunk").count()).toBe(1);
    expect(await panel.getByTestId("node-diagnosis").textContent()).toContain(PROPOSAL);
    const rows = panel.locator('[data-testid="node-evaluations"] tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.first().textContent()).toMatch(/pass/);
    expect(await panel.getByTestId("node-run").getAttribute("href")).toBe("#/runs/agent1.n1");
    expect(await page.locator('[data-node="1"][data-chosen="true"]').count()).toBe(1);
    await watched.screenshot("search-node-agent");

    // The root's cross: its failed improvement and why.
    await page.getByTestId("failed-mark").click();
    await page
      .locator('[data-testid="node-panel"][data-node="0"] [data-testid="node-failed"]')
      .waitFor();
    expect(await page.getByTestId("node-failed").textContent()).toContain(TYPECHECK);

    // Another connection finishes the improvement in flight: node 2 appears by itself.
    const writer = SearchStore.open(app.db);
    const finished: SearchEvent = {
      type: "improvement_finished",
      work: 6,
      parent: 1,
      node: 2,
      data: childData(PATCH),
      usage,
      durationMs: 1,
    };
    writer.log("agent1").append(finished);
    writer.close();
    await page.locator('[data-testid="tree-node"][data-node="2"]').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId("tree-node").count()).toBe(3);
    expect(problems).toEqual([]);
    await watched.close();
  });
});
