/**
 * Scoring one analysis (src/env/blade/score.ts) on clade's own datasets, in the sandbox: the
 * reference solver's expert analysis against the naive one (hit rates, score, the conclusion
 * against the true effect behind the data), a transform that fails (variables and model still
 * scored), hostile transform code that tries to read host files, write them or reach the
 * network, and the Python runtime giving the same match as the SQL engine. The Python part is
 * skipped, saying why, where no python3 with pandas and statsmodels is installed.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expertAnalysis } from "../../../src/agent/reference/blade.js";
import { naiveAnalysis } from "../../../src/agent/reference/blade-naive.js";
import { readBladeDataset } from "../../../src/env/blade/dataset.js";
import { OWN_DATASETS_DIR } from "../../../src/env/blade/folders.js";
import { findPython } from "../../../src/env/blade/runtime/index.js";
import type { RuntimeName } from "../../../src/env/blade/runtime/types.js";
import { type BladeScore, scoreAnalysis } from "../../../src/env/blade/score.js";
import { runHitRates } from "../../../src/env/blade/scores.js";
import type { BladeDataset } from "../../../src/env/blade/specs.js";
import { parseAnalysis } from "../../../src/env/blade/submission.js";

const python = await findPython().catch((error: Error) => error);
const noPython = python instanceof Error ? python.message : undefined;
if (noPython) console.warn(`skipping the blade scoring tests on Python: ${noPython}`);

const datasets = new Map<string, BladeDataset>();
function dataset(name: string): BladeDataset {
  let found = datasets.get(name);
  if (!found) {
    found = readBladeDataset(join(OWN_DATASETS_DIR, name));
    datasets.set(name, found);
  }
  return found;
}

type Kind = "reference" | "naive";
const ANALYSES = { reference: expertAnalysis, naive: naiveAnalysis };

/** The analysis as submitted JSON, optionally changed. */
function analysisJson(
  name: string,
  kind: Kind,
  runtime: RuntimeName,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return { ...ANALYSES[kind](dataset(name), runtime), ...over };
}

const scores = new Map<string, Promise<BladeScore>>();
/** The score of the reference or naive analysis, computed once per file. */
function scoreOf(name: string, kind: Kind, runtime: RuntimeName = "sql"): Promise<BladeScore> {
  const key = `${name}/${kind}/${runtime}`;
  let score = scores.get(key);
  if (!score) {
    const analysis = parseAnalysis(analysisJson(name, kind, runtime), key);
    score = scoreAnalysis(dataset(name), analysis, runtime);
    scores.set(key, score);
  }
  return score;
}

/** Scores the naive analysis of `name` with the given transform code instead of none. */
function scoreWithTransform(name: string, runtime: RuntimeName, code: string) {
  const analysis = parseAnalysis(
    analysisJson(name, "naive", runtime, { transform_code: code }),
    "hostile",
  );
  return scoreAnalysis(dataset(name), analysis, runtime);
}

const scratch = mkdtempSync(join(tmpdir(), "clade-blade-score-"));
const CANARY = `blade-score-canary-${process.pid}`;
const canaryPath = join(scratch, "secret.txt");
writeFileSync(canaryPath, `${CANARY}\n`);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.each(["tutoring", "coffee"])("%s on the SQL engine", (name) => {
  it("the reference analysis matches every variable, its model and every transform by value", async () => {
    const { score, record } = await scoreOf(name, "reference");
    const gt = dataset(name).groundTruth;
    expect(record).toMatchObject({ dataset: name, runtime: "sql", score });
    expect(record.transforms).toMatchObject({ status: "matched", split: "units" });
    expect(record.transforms.units).toBeGreaterThan(0);
    expect(record.run.status).toBe("scored");
    expect(record.run.gtCvarCount).toBe(gt.cvars.length);
    expect(record.run.gtModelCount).toBe(gt.models.length);
    const hits = runHitRates(record.run);
    expect(hits.cvar).toBe(1);
    expect(hits.model).toBe(1);
    expect(hits.modelCvar).toBe(1);
    expect(hits.transformValue).toBe(1);
    expect(record.cvars.unmatchedGt).toEqual([]);
    expect(record.model.fit).toMatchObject({ ok: true });
    expect(record.conclusion?.direction).toBe("right");
    expect(score).toBeGreaterThan(0.5);
    expect(score).toBeLessThanOrEqual(1);
  });

  it("the reference analysis matches every transform by its data-flow graph too", async () => {
    // The reference submits one expert's analysis, so each of its transforms sits in a path of
    // the experts' graph.
    const { record } = await scoreOf(name, "reference");
    const unmatched = record.transforms.agent.filter((t) => !t.graph).map((t) => t.name);
    expect(unmatched).toEqual([]);
    expect(runHitRates(record.run).transformGraph).toBe(1);
  });

  it("the naive analysis (outcome on cause, nothing else) scores lower", async () => {
    const reference = await scoreOf(name, "reference");
    const naive = await scoreOf(name, "naive");
    expect(naive.record.transforms.status).toBe("LM_SUBMISSION_TRANSFORM_CODE_EMPTY");
    expect(naive.record.run.agentTransformCount).toBe(0);
    expect(naive.record.run.matchedModelCvar).toEqual([]);
    expect(naive.record.cvars.unmatchedGt.length).toBeGreaterThan(0);
    expect(naive.score).toBeGreaterThanOrEqual(0);
    expect(naive.score).toBeLessThan(reference.score - 0.3);
  });
});

describe("conclusions against the true effect", () => {
  it("coffee: the naive analysis finds an effect of coffee that is not there", async () => {
    const truth = dataset("coffee").trueEffect;
    expect(truth?.direction).toBe("none");
    const { record } = await scoreOf("coffee", "naive");
    expect(record.conclusion).toMatchObject({ term: truth?.iv, direction: "wrong" });
    expect(record.conclusion?.pValue).toBeLessThan(0.05);
    // Adjusted for smoking and age, the reference finds none.
    const reference = await scoreOf("coffee", "reference");
    expect(reference.record.conclusion).toMatchObject({ term: truth?.iv, direction: "right" });
    expect(reference.record.conclusion?.pValue).toBeGreaterThan(0.05);
  });
});

describe("transform code that fails", () => {
  it("records LM_SUBMISSION_EXECUTION_FAILED and still scores variables and model", async () => {
    const naive = await scoreOf("tutoring", "naive");
    const { score, record } = await scoreWithTransform(
      "tutoring",
      "sql",
      "SELECT *, ln(household_income) AS log_income FROM df; SELECT no_such_column FROM df",
    );
    expect(record.transforms.status).toBe("LM_SUBMISSION_EXECUTION_FAILED");
    expect(record.transforms.error).toMatch(/^transform unit 1 .*no_such_column/);
    expect(record.transforms.agent).toEqual([]);
    expect(record.run).toMatchObject({
      status: "scored",
      agentTransformCount: 0,
      matchedValueAgent: [],
      matchedGraphAgent: [],
    });
    // Variables and model as without any transform.
    expect(record.run.matchedCvarsGt).toEqual(naive.record.run.matchedCvarsGt);
    expect(record.run.matchedModels).toEqual(naive.record.run.matchedModels);
    expect(record.run.matchedModels).toHaveLength(1);
    expect(runHitRates(record.run).cvar).toBeGreaterThan(0);
    expect(score).toBeGreaterThan(0);
  });

  it("the experts' SQL given as one transform_code scores like the same units", async () => {
    // An agent that writes the experts' own SQL (scalar subqueries included) as plain code.
    const units = analysisJson("stress", "reference", "sql").transform_units as { code: string }[];
    const asUnits = await scoreOf("stress", "reference");
    const asCode = await scoreAnalysis(
      dataset("stress"),
      parseAnalysis(
        analysisJson("stress", "reference", "sql", {
          transform_units: undefined,
          transform_code: units.map((u) => u.code).join(";\n"),
        }),
        "code",
      ),
      "sql",
    );
    expect(asCode.record.transforms.split).toBe("offline");
    expect(asCode.record.transforms.status).toBe("matched");
    expect(runHitRates(asCode.record.run).transformValue).toBe(
      runHitRates(asUnits.record.run).transformValue,
    );
  });
});

describe("hostile transform code on the SQL engine", () => {
  it("cannot read host files; scoring goes on", async () => {
    for (const code of [
      "SELECT * FROM read_csv('/etc/passwd')",
      "SELECT *, (SELECT count(*) FROM read_csv('/etc/passwd')) AS n FROM df",
      `SELECT *, (SELECT content FROM read_text('${canaryPath}')) AS leak FROM df`,
    ]) {
      const { record } = await scoreWithTransform("tutoring", "sql", code);
      expect(record.transforms.status, code).toBe("LM_SUBMISSION_EXECUTION_FAILED");
      expect(record.transforms.error).toMatch(/Permission Error|disabled/);
      const stored = JSON.stringify(record);
      expect(stored).not.toContain(CANARY);
      expect(stored).not.toMatch(/root:x:0:0/);
      expect(record.run.matchedModels).toHaveLength(1);
    }
  });

  it("cannot write host files with COPY", async () => {
    const target = join(scratch, "copied.csv");
    for (const code of [
      `COPY (SELECT * FROM df) TO '${target}'`,
      `SELECT * FROM df; COPY df TO '${target}' (FORMAT csv)`,
    ]) {
      const { record } = await scoreWithTransform("tutoring", "sql", code);
      expect(record.transforms.status, code).toBe("LM_SUBMISSION_EXECUTION_FAILED");
      expect(existsSync(target)).toBe(false);
    }
  });
});

describe.skipIf(noPython !== undefined)("the Python runtime", () => {
  let server: Server;
  let port = 0;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.end("reached the host\n");
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    port = (server.address() as { port: number }).port;
  });

  afterAll(() => {
    server?.close();
  });

  it("matches the reference analysis of tutoring exactly as the SQL engine does", async () => {
    const [sql, py] = await Promise.all([
      scoreOf("tutoring", "reference", "sql"),
      scoreOf("tutoring", "reference", "python"),
    ]);
    expect(py.record.runtime).toBe("python");
    expect(py.record.transforms.status).toBe("matched");
    expect(py.record.run).toEqual(sql.record.run);
    expect(py.score).toBe(sql.score);
    expect(py.record.model.fit).toMatchObject({ ok: true, family: "gaussian", link: "identity" });
    expect(py.record.conclusion?.direction).toBe("right");
    expect(py.record.conclusion?.estimate).toBeCloseTo(sql.record.conclusion?.estimate ?? 0, 6);
  });

  it("cannot read host files or reach the host's network; scoring goes on", async () => {
    for (const code of [
      "df['leak'] = open('/etc/passwd').read()",
      `df['leak'] = open(${JSON.stringify(canaryPath)}).read()`,
      `import socket\nsocket.create_connection(('127.0.0.1', ${port}), timeout=2).recv(64)\ndf['x'] = 1`,
    ]) {
      const { record } = await scoreWithTransform("tutoring", "python", code);
      expect(record.transforms.status, code).toBe("LM_SUBMISSION_EXECUTION_FAILED");
      expect(record.transforms.error).toMatch(
        /FileNotFoundError|ConnectionRefused|OSError|unreachable/,
      );
      const stored = JSON.stringify(record);
      expect(stored).not.toContain(CANARY);
      expect(stored).not.toMatch(/root:x:0:0|reached the host/);
      expect(record.run.matchedModels).toHaveLength(1);
    }
    expect(connections).toBe(0);
  });
});
