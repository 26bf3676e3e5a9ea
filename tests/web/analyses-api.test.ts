/**
 * The Analyses API on real blade runs: the reference solver and the naive baseline on two of
 * clade's own datasets (coffee, icecream) on the embedded SQL engine, an agent that never
 * submits a valid analysis, and a maze run that is not blade. Checks the run list (figures,
 * pages), the run's report (the same as `clade blade report` builds), one analysis's decisions
 * beside the ground truth (matched and unmatched, on both sides), bad addresses, and bundle().
 * Skipped, saying why, where bubblewrap (the sandbox the analyses run in) is unavailable.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findEnv } from "../../src/env/registry.js";
import { buildBladeReport, reportedAnalyses, storedAnalyses } from "../../src/eval/blade/report.js";
import { runEvaluation } from "../../src/eval/evaluation.js";
import { checkSandbox } from "../../src/sandbox/index.js";
import { openDatabase } from "../../src/store/database.js";
import { RunStore } from "../../src/store/run-store.js";
import type {
  AnalysisResponse,
  AnalysisRunResponse,
  AnalysisRunsResponse,
} from "../../src/web/api/analyses.js";
import { analysesApi } from "../../src/web/api/analyses.js";
import type { ViewServer } from "../../src/web/server.js";
import { api, scratchDir, startViewer } from "./support.js";

const sandbox = await checkSandbox().catch((error: Error) => error);
const noSandbox = sandbox instanceof Error ? sandbox.message : undefined;
if (noSandbox) console.warn(`skipping the Analyses API tests: ${noSandbox}`);

/** Tasks 0 and 2 of clade's own datasets: coffee and icecream. */
const TASKS = [0, 2];

/** Builds the store: three blade runs and a maze run, with clade's own evaluation. */
async function bladeFixture(db: string): Promise<void> {
  const store = RunStore.open(db);
  try {
    const blade = findEnv("blade");
    const common = { env: blade, store, samples: 1, timeoutMs: 120_000, concurrency: 2 };
    await runEvaluation({ ...common, tasks: TASKS, agent: "reference", runId: "reference" });
    await runEvaluation({ ...common, tasks: TASKS, agent: "naive", runId: "naive" });
    // Never a valid analysis: the episode runs out of steps and counts as submitting nothing.
    const silent = { name: "silent", act: async () => ({ action: "submit: not an analysis" }) };
    await runEvaluation({ ...common, tasks: [0], agent: silent, runId: "silent" });
    await runEvaluation({ env: "maze", tasks: [0], store, runId: "maze-run" });
  } finally {
    store.close();
  }
}

describe.skipIf(noSandbox !== undefined)("the Analyses API", () => {
  const scratch = scratchDir("analyses-api");
  const db = join(scratch.dir, "clade.db");
  let viewer: ViewServer;

  beforeAll(async () => {
    await bladeFixture(db);
    viewer = await startViewer(db);
  }, 60_000);
  afterAll(async () => {
    await viewer?.close();
    scratch.remove();
  });

  const get = <T>(address: string) => api<T>(viewer, address);
  const episodeOf = async (run: string, dataset: string) => {
    const { body } = await get<AnalysisRunResponse>(`/analyses/${run}`);
    const row = body.analyses.find((a) => a.dataset === dataset);
    if (!row) throw new Error(`no ${dataset} analysis in ${run}`);
    return row.episode;
  };

  it("lists the blade runs newest first, with their datasets, mean score and conclusions", async () => {
    const { status, body } = await get<AnalysisRunsResponse>("/analyses");
    expect(status).toBe(200);
    expect(body.items.map((r) => r.id)).toEqual(["silent", "naive", "reference"]);
    expect(body.nextCursor).toBeNull();
    const [silent, naive, reference] = body.items;
    expect(reference).toMatchObject({
      agent: "reference",
      status: "complete",
      datasets: ["coffee", "icecream"],
      episodes: 2,
      analyses: 2,
      errored: 0,
      conclusionRight: 2,
      conclusionTotal: 2,
    });
    // The naive baseline finds coffee raising blood pressure (there is no effect): wrong there.
    expect(naive).toMatchObject({ datasets: ["coffee", "icecream"], conclusionRight: 1 });
    expect(naive?.conclusionTotal).toBe(2);
    expect(reference?.meanScore).toBeGreaterThan(naive?.meanScore ?? 1);
    // The mean score is the mean reward of the analyses, which is each one's weighted score.
    const store = RunStore.open(db, { readonly: true });
    const rewards = store.episodes("naive").map((e) => e.reward);
    store.close();
    expect(naive?.meanScore).toBeCloseTo((rewards[0] ?? 0) / 2 + (rewards[1] ?? 0) / 2, 12);
    // Submitting nothing: an analysis, scored 0, with no dataset named by a record.
    expect(silent).toMatchObject({ analyses: 1, meanScore: 0, datasets: [] });
  });

  it("pages the list with a cursor and refuses a bad one or a bad limit", async () => {
    const seen: string[] = [];
    let address = "/analyses?limit=1";
    for (let i = 0; i < 5; i++) {
      const { body } = await get<AnalysisRunsResponse>(address);
      expect(body.items).toHaveLength(1);
      seen.push(body.items[0]?.id ?? "");
      if (body.nextCursor === null) break;
      address = `/analyses?cursor=${body.nextCursor}&limit=1`;
    }
    expect(seen).toEqual(["silent", "naive", "reference"]);
    const badCursor = await get<{ error: string }>("/analyses?cursor=nonsense");
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error).toMatch(/cursor/);
    const badLimit = await get<{ error: string }>("/analyses?limit=0");
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error).toMatch(/^query\.limit: /);
  });

  it("gives a run's report as clade blade report builds it, and a row per analysis", async () => {
    const { status, body } = await get<AnalysisRunResponse>("/analyses/reference");
    expect(status).toBe(200);
    const store = RunStore.open(db, { readonly: true });
    const expected = buildBladeReport(reportedAnalyses(storedAnalyses(store, "reference")));
    store.close();
    expect(body.report).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(body.report?.scores.datasets.map((d) => d.name)).toEqual(["coffee", "icecream"]);
    expect(body.report?.conclusions?.direction.count).toBe(2);
    expect(body.run).toMatchObject({ id: "reference", agent: "reference", runtime: "sql" });
    expect(body.analyses.map((a) => [a.dataset, a.kind, a.outcome])).toEqual([
      ["coffee", "scored", "success"],
      ["icecream", "scored", "success"],
    ]);
    const coffee = body.analyses[0];
    // The reference solver is one of the experts: every variable matched, the model too.
    expect(coffee?.matched?.variables).toEqual({ agent: 7, agentOf: 7, gt: 7, gtOf: 7 });
    expect(coffee?.matched?.model).toBe(true);
    expect(coffee?.matched?.transformStatus).toBe("matched");
    expect(coffee?.matched?.transformsValue.gt).toBeGreaterThan(0);
    expect(coffee?.matched?.transformsValue.gt).toBeLessThan(coffee?.matched?.transformsGt ?? 0);
    expect(coffee?.matched?.conclusion).toBe("right");
  });

  it("counts an analysis never submitted as one, scored 0, with nothing to compare", async () => {
    const run = await get<AnalysisRunResponse>("/analyses/silent");
    expect(run.body.analyses).toEqual([
      expect.objectContaining({ kind: "not-submitted", score: 0, matched: null }),
    ]);
    expect(run.body.report?.notSubmitted ?? run.body.reportError).toBeTruthy();
    const episode = run.body.analyses[0]?.episode;
    const one = await get<AnalysisResponse>(`/analyses/silent/episodes/${episode}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ kind: "not-submitted", scores: null, variables: [] });
    expect(one.body.dataset).toBe("coffee");
  });

  it("sets the naive analysis beside the ground truth: matched pairs and unmatched on each side", async () => {
    const id = await episodeOf("naive", "icecream");
    const { status, body } = await get<AnalysisResponse>(`/analyses/naive/episodes/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ kind: "scored", dataset: "icecream", groundTruthError: null });
    expect(body.question).toMatch(/promotions/);
    expect(body.scores?.weighted).toBeCloseTo(body.episode.reward, 12);

    // Variables: the IV and the DV matched (paired on a row), the experts' controls alone.
    const pairs = body.variables.filter((r) => r.agent && r.gt);
    expect(pairs.map((r) => [r.agent?.role, r.gt?.concept, r.matched])).toEqual([
      ["IV", "In-store price promotion", true],
      ["DV", "Daily unit sales", true],
    ]);
    expect(pairs[0]?.how).toMatch(/^similarity 10: /);
    const gtAlone = body.variables.filter((r) => r.agent === null);
    expect(gtAlone.map((r) => r.gt?.concept)).toEqual([
      "Weather (temperature)",
      "Day of the week",
      "Store",
      "Seasonal trend",
    ]);
    expect(gtAlone.every((r) => !r.matched && r.gt?.role === "Control")).toBe(true);

    // Model: linear regression where the experts fit Poisson models: the agent's alone.
    const agentModel = body.model.filter((r) => r.agent !== null);
    expect(agentModel).toEqual([
      expect.objectContaining({ matched: false, gt: null, how: "matches no expert model" }),
    ]);
    expect(agentModel[0]?.agent).toMatchObject({
      specification: "Linear regression",
      code: "ols(units_sold ~ promotion)",
    });
    expect(agentModel[0]?.agent?.fit).toMatch(
      /^gaussian\/identity: units_sold ~ Intercept \+ promotion$/,
    );
    const gtModels = body.model.filter((r) => r.gt !== null);
    expect(gtModels).toHaveLength(3);
    expect(gtModels.every((r) => !r.matched && r.agent === null)).toBe(true);
    expect(gtModels.map((r) => r.how)).toEqual([
      "undecided by the rules (no judge model)",
      "rules: different models",
      "rules: different models",
    ]);
    expect(gtModels[0]?.gt?.code).toMatch(/^poisson\(/); // the experts' SQL-engine form

    // Transforms: none given, so none compared; the experts' stand alone, code shown.
    expect(body.transformStage).toMatchObject({ status: "LM_SUBMISSION_TRANSFORM_CODE_EMPTY" });
    expect(body.transforms.length).toBeGreaterThan(0);
    expect(body.transforms.every((r) => r.agent === null && !r.matched)).toBe(true);
    expect(body.transforms[0]?.how).toBe("not compared: the agent gave no transforms");

    // Conclusion: a positive effect, as the truth has; its size is on another scale.
    expect(body.conclusion).toEqual([
      expect.objectContaining({
        matched: true,
        agent: expect.objectContaining({ direction: "right", term: "promotion" }),
        gt: expect.objectContaining({ iv: "promotion", direction: "positive" }),
      }),
    ]);
  });

  it("pairs the reference's transform units with the experts' transforms they matched", async () => {
    const id = await episodeOf("reference", "coffee");
    const { body } = await get<AnalysisResponse>(`/analyses/reference/episodes/${id}`);
    expect(body.transformStage).toMatchObject({ status: "matched", split: "units", units: 3 });
    const paired = body.transforms.filter((r) => r.agent && r.gt);
    expect(paired.map((r) => [r.agent?.index, r.gt?.name, r.matched])).toEqual([
      [0, "drop_device_errors", true],
      [1, "drop_missing_bmi", true],
      [2, "log_activity", true],
    ]);
    expect(paired[0]?.how).toBe("by value and by graph; same verb and columns");
    expect(paired[0]?.agent?.code).toBe("SELECT * FROM df WHERE systolic_bp > 0");
    expect(paired[0]?.gt?.code).toBe("SELECT * FROM df WHERE systolic_bp > 0");
    // The alternative the reference did not take: imputing BMI, after the same parent.
    const impute = body.transforms.find((r) => r.gt?.name === "impute_bmi_median");
    expect(impute).toMatchObject({ agent: null, matched: false });
    expect(impute?.gt?.after).toEqual([["drop_device_errors"]]);
    expect(body.transforms.find((r) => r.gt?.name === "log_activity")?.gt?.after).toEqual([
      ["drop_missing_bmi"],
      ["impute_bmi_median"],
    ]);
    // The model matched the experts' three linear models: the agent's beside each.
    expect(body.model.map((r) => [r.agent?.specification, r.gt?.name, r.matched, r.how])).toEqual([
      ["Linear regression", "ols_adjusted", true, "rules: the same model"],
      ["Linear regression", "ols_indicators", true, "rules: the same model"],
      ["Linear regression", "ols_heavy_coffee", true, "rules: the same model"],
    ]);
    expect(body.modelCvar).toHaveLength(1);
    expect(body.variables.every((r) => r.matched && r.agent && r.gt)).toBe(true);
  });

  it("answers 404 or 400 with one line for what is not there", async () => {
    const cases: [string, number, RegExp][] = [
      ["/analyses/nope", 404, /^no run "nope"$/],
      ["/analyses/maze-run", 404, /^run "maze-run" is a maze run, not blade$/],
      ["/analyses/reference/episodes/999999", 404, /^no episode 999999 in run "reference"$/],
      ["/analyses/reference/episodes/abc", 400, /^param\.id: must be an episode id/],
    ];
    const naiveEpisode = await episodeOf("naive", "coffee");
    cases.push([`/analyses/reference/episodes/${naiveEpisode}`, 404, /^no episode \d+ in run/]);
    for (const [address, status, error] of cases) {
      const response = await get<{ error: string }>(address);
      expect(response.status, address).toBe(status);
      expect(response.body.error, address).toMatch(error);
    }
  });

  it("bundles the list, each chosen run and each of its analyses, all answered", async () => {
    const connection = openDatabase(db, { readonly: true });
    let all: string[];
    let chosen: string[];
    try {
      all = analysesApi.bundle?.(connection, "all") ?? [];
      chosen = analysesApi.bundle?.(connection, new Set(["naive", "maze-run"])) ?? [];
    } finally {
      connection.close();
    }
    expect(all[0]).toBe("/analyses");
    expect(all.filter((a) => /^\/analyses\/[^/]+$/.test(a))).toEqual([
      "/analyses/silent",
      "/analyses/naive",
      "/analyses/reference",
    ]);
    expect(all.filter((a) => a.includes("/episodes/"))).toHaveLength(5);
    expect(chosen.filter((a) => !a.includes("/episodes/"))).toEqual([
      "/analyses",
      "/analyses/naive",
    ]);
    expect(chosen.filter((a) => a.includes("/episodes/"))).toHaveLength(2);
    for (const address of all) expect((await get(address)).status, address).toBe(200);
  });
});
