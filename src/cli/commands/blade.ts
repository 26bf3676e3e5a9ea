/**
 * `clade blade`: BLADE outside an evaluation run.
 * - `report RUN`: BLADE's scores of a stored blade run (hit rate, coverage@k, F1 with intervals),
 *   conclusions on clade's own datasets, and every expert decision with how often it was matched.
 * - `score FILE --dataset NAME`: the same for analyses produced elsewhere (BLADE's submission
 *   JSON), scored here in the sandbox.
 * - `hash DATA.csv`: each column's value and categorical hash, as BLADE computes them on the
 *   frame pandas' read_csv gives, for users asking why a column did not match.
 */
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { hashFrame } from "../../env/blade/column-hash.js";
import type { Frame } from "../../env/blade/frame.js";
import { readCsvFile } from "../../env/blade/read-csv.js";
import { requirePythonRuntime } from "../../env/blade/runtime/availability.js";
import { openSession } from "../../env/blade/runtime/index.js";
import { scoreAnalysis } from "../../env/blade/score.js";
import { CATEGORIES } from "../../env/blade/scores.js";
import { parseAnalysisText, parseSubmissionFile } from "../../env/blade/submission.js";
import {
  bladeTaskSource,
  OWN_DATASETS_DIR,
  taskDataset,
  taskIndexOf,
} from "../../env/blade/tasks.js";
import {
  type BladeReport,
  buildBladeReport,
  CATEGORY_LABELS,
  type ReportedAnalysis,
  reportedAnalyses,
  type StoredAnalysis,
  storedAnalyses,
  storedRunSource,
} from "../../eval/blade/report.js";
import { type ModelRoles, modelRoles } from "../../eval/blade/roles.js";
import type { Judge } from "../../eval/judge-loop.js";
import { createModelClient } from "../../model/client.js";
import { loadConfig } from "../../model/config.js";
import { checkKey, publicModelSpec, resolveModel } from "../../model/resolve.js";
import { type RunRow, RunStore } from "../../store/run-store.js";
import { type CliIo, UsageError } from "../io.js";
import { integerOption, parseOptions } from "../options.js";
import { formatInterval, formatRate, renderTable } from "../table.js";

const reportSchema = z.object({
  db: z.string(),
  k: integerOption(1, 1000).optional(),
  resamples: integerOption(1, 100_000).optional(),
  seed: integerOption(0, 2 ** 31).optional(),
  judge: z.string().min(1, "must not be empty").optional(),
  config: z.string().min(1, "must not be empty").optional(),
  json: z.boolean().optional(),
});

const runtimeSchema = z.enum(["sql", "python"], { message: 'must be "sql" or "python"' });

const scoreSchema = reportSchema.omit({ db: true }).extend({
  dataset: z.string().min(1).optional(),
  bladeDir: z.string().min(1).optional(),
  runtime: runtimeSchema.optional(),
});

/** The model roles of a --judge model: variables, undecided models, splitting Python code. */
async function judgeRoles(spec: string, configPath: string | undefined): Promise<ModelRoles> {
  const { config } = await loadConfig(configPath);
  const resolved = resolveModel(spec, config);
  checkKey(resolved);
  const judge: Judge = {
    label: `judge (${publicModelSpec(resolved)})`,
    model: publicModelSpec(resolved),
    client: createModelClient(resolved),
  };
  return modelRoles(judge);
}

const hashSchema = z.object({ pandas: z.boolean().optional(), json: z.boolean().optional() });

// ---- rendering ----

function renderReport(report: BladeReport, title: string): string {
  const { scores, bootstrap } = report;
  const ci = (value: { interval: { low: number; high: number } } | undefined) =>
    value ? formatInterval(value.interval) : "";
  const lines: string[] = [title, ""];
  lines.push(
    renderTable(
      ["score", "value", "95% CI (bootstrap over analyses)", "definition"],
      [
        [
          "weighted",
          formatRate(scores.weighted),
          ci(bootstrap?.weighted),
          "Σ category weight × F1 (weights from the ground truth's sizes)",
        ],
        [
          "unweighted",
          formatRate(scores.unweighted),
          ci(bootstrap?.unweighted),
          "(F1 cvar + F1 model + F1 model+cvar + ½F1 graph + ½F1 value) / 4",
        ],
        [
          "unweighted (BLADE's code)",
          formatRate(scores.unweightedAsBladeCodes),
          ci(bootstrap?.unweightedAsBladeCodes),
          "what BLADE's final_metrics.py computes: a typo adds 0.5 and counts F1 value fully",
        ],
      ],
    ),
  );
  lines.push(
    renderTable(
      ["category", "hit rate", "CI", `coverage@${report.k}`, "CI", "F1", "CI", "weight"],
      CATEGORIES.map((c) => [
        CATEGORY_LABELS[c],
        formatRate(scores.hitRate[c]),
        ci(bootstrap?.hitRate[c]),
        formatRate(scores.coverage[c]),
        ci(bootstrap?.coverage[c]),
        formatRate(scores.f1[c]),
        ci(bootstrap?.f1[c]),
        formatRate(scores.weights[c]),
      ]),
    ),
  );
  lines.push(
    renderTable(
      [
        "dataset",
        "analyses",
        "not submitted",
        "hit: cvar",
        "model",
        "value",
        `cov@${report.k}: cvar`,
        "model",
        "value",
      ],
      scores.datasets.map((d) => [
        d.name,
        d.runs,
        d.generationFailures,
        formatRate(d.hitRate.cvar),
        formatRate(d.hitRate.model),
        formatRate(d.hitRate.transformValue),
        formatRate(d.coverage.cvar),
        formatRate(d.coverage.model),
        formatRate(d.coverage.transformValue),
      ]),
    ),
  );
  if (report.conclusions) {
    const c = report.conclusions;
    lines.push(
      renderTable(
        ["conclusion (clade's own datasets)", "rate", "95% CI", "count"],
        [
          [
            "direction right",
            formatRate(c.direction.rate),
            formatInterval(c.direction.interval),
            `${c.direction.count}/${c.direction.total}`,
          ],
          [
            "size within tolerance",
            formatRate(c.size.rate),
            formatInterval(c.size.interval),
            `${c.size.count}/${c.size.total} comparable`,
          ],
        ],
      ),
    );
  }
  for (const d of report.decisions) {
    const rows: (string | number)[][] = [];
    const mark = (n: number) => (n === 0 ? "unmatched" : `${n}/${d.analyses}`);
    for (const c of d.cvars) rows.push(["variable", c.item, mark(c.matched)]);
    for (const m of d.models) rows.push(["model", m.item, mark(m.matched)]);
    for (const t of d.transforms) {
      rows.push([
        "transform",
        `${t.item} (${t.verb})`,
        `value ${mark(t.value)}, graph ${mark(t.graph)}`,
      ]);
    }
    lines.push(`Expert decisions of ${d.dataset}, matched by how many analyses:`);
    lines.push(renderTable(["kind", "decision", "matched"], rows));
  }
  if (report.errored > 0) {
    lines.push(`${report.errored} analyses errored and are left out (errors are never scored).`);
  }
  lines.push(
    "Hit rate: matched decisions / the analysis's decisions. Coverage@k: expert decisions matched by any of the first k analyses of a dataset. F1: their harmonic mean. See docs/metrics.md (BLADE).",
  );
  return `${lines.join("\n")}\n`;
}

function reportJson(report: BladeReport, source: Record<string, unknown>) {
  return { schema: "clade.blade-report/1", ...source, ...report };
}

// ---- report RUN ----

export async function bladeReportCommand(runId: string, raw: unknown, io: CliIo): Promise<number> {
  const options = parseOptions(reportSchema, raw);
  const missing = () => new UsageError(`no run "${runId}" in ${options.db} (see: clade runs)`);
  if (!existsSync(options.db)) throw missing();
  const store = RunStore.open(options.db, { readonly: true });
  let stored: StoredAnalysis[];
  let run: RunRow;
  try {
    const found = store.getRun(runId);
    if (!found) throw missing();
    if (found.env !== "blade") {
      throw new UsageError(`run "${runId}" is a ${found.env} run, not blade`);
    }
    run = found;
    stored = storedAnalyses(store, runId);
  } finally {
    store.close();
  }
  if (!stored.some((a) => !a.errored)) {
    throw new UsageError(`run "${runId}" has no finished episode to report`);
  }
  const roles = options.judge ? await judgeRoles(options.judge, options.config) : undefined;
  if (roles) {
    // Scored again with the judge: the run's own datasets and runtime, checked by version.
    const source = storedRunSource(run);
    if (source.runtime === "python") await requirePythonRuntime();
    let done = 0;
    for (const analysis of stored) {
      if (analysis.record === undefined || analysis.submitted === undefined) continue;
      const dataset = taskDataset(source, analysis.task);
      const parsed = parseAnalysisText(analysis.submitted, `run ${runId} task ${analysis.task}`);
      analysis.record = (
        await scoreAnalysis(dataset, parsed, source.runtime, roles.scoring)
      ).record;
      io.stderr(`progress blade report: ${++done} analyses scored again with ${options.judge}\n`);
    }
  }
  const analyses = reportedAnalyses(stored);
  const report = buildBladeReport(analyses, {
    ...(options.k !== undefined ? { k: options.k } : {}),
    ...(options.resamples !== undefined ? { resamples: options.resamples } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  });
  const judged = roles ? { judge: options.judge ?? null, judgeSpend: roles.spend } : {};
  io.stdout(
    options.json
      ? `${JSON.stringify(reportJson(report, { run: runId, ...judged }))}\n`
      : renderReport(report, `BLADE report of run ${runId}`) + judgeLine(options.judge, roles),
  );
  return 0;
}

/** The closing line on how the matching was done. */
function judgeLine(judge: string | undefined, roles: ModelRoles | undefined): string {
  if (!roles) {
    return "Offline matching: variables by roles and columns, models by rules (give --judge MODEL for BLADE's model judges).\n";
  }
  const spend = roles.spend;
  return `Judge ${judge}: ${spend.calls} calls, $${spend.costUsd.toFixed(4)}${spend.unpriced ? " (unpriced calls not counted)" : ""}.\n`;
}

// ---- score FILE ----

export async function bladeScoreCommand(file: string, raw: unknown, io: CliIo): Promise<number> {
  const options = parseOptions(scoreSchema, raw);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(
      `${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  const submission = parseSubmissionFile(text, file);
  const name = options.dataset ?? submission.datasetName;
  if (!name) throw new UsageError(`${file} names no dataset: give --dataset NAME`);
  if (options.dataset && submission.datasetName && options.dataset !== submission.datasetName) {
    throw new UsageError(
      `${file} is for dataset "${submission.datasetName}", not "${options.dataset}"`,
    );
  }
  if (submission.analyses.length === 0) throw new UsageError(`${file} holds no analyses`);
  const source = bladeTaskSource(options.bladeDir ?? OWN_DATASETS_DIR, options.runtime);
  const dataset = taskDataset(source, taskIndexOf(source, name));
  if (source.runtime === "python") await requirePythonRuntime();
  const roles = options.judge ? await judgeRoles(options.judge, options.config) : undefined;
  const analyses: ReportedAnalysis[] = [];
  for (const [i, analysis] of submission.analyses.entries()) {
    const { record } = await scoreAnalysis(dataset, analysis, source.runtime, roles?.scoring);
    analyses.push({ kind: "scored", record });
    io.stderr(`progress blade score: ${i + 1}/${submission.analyses.length} analyses scored\n`);
  }
  const report = buildBladeReport(analyses, {
    ...(options.k !== undefined ? { k: options.k } : {}),
    ...(options.resamples !== undefined ? { resamples: options.resamples } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  });
  io.stdout(
    options.json
      ? `${JSON.stringify(
          reportJson(report, {
            file,
            dataset: name,
            runtime: source.runtime,
            judge: options.judge ?? null,
            ...(roles ? { judgeSpend: roles.spend } : {}),
          }),
        )}\n`
      : renderReport(report, `BLADE scores of ${file} on ${name} (${source.runtime})`) +
          judgeLine(options.judge, roles),
  );
  return 0;
}

// ---- hash DATA.csv ----

async function pandasFrame(path: string): Promise<Frame> {
  const session = await openSession({ runtime: "python", dataset: { dir: path, dataPath: path } });
  try {
    const [outcome] = await session.runScripts(["pass"]);
    if (!outcome?.ok || outcome.kind !== "frame") {
      throw new UsageError(
        `${path}: pandas could not read it: ${outcome && !outcome.ok ? outcome.error : "no frame"}`,
      );
    }
    return outcome.frame;
  } finally {
    await session.close();
  }
}

export async function bladeHashCommand(file: string, raw: unknown, io: CliIo): Promise<number> {
  const options = parseOptions(hashSchema, raw);
  if (!existsSync(file)) throw new UsageError(`${file}: no such file`);
  if (options.pandas) await requirePythonRuntime();
  const frame = options.pandas ? await pandasFrame(file) : readCsvFile(file);
  const hashes = hashFrame(frame);
  const columns = frame.columns.map((column, i) => ({
    name: column.name,
    dtype: column.dtype,
    value: hashes[i]?.value ?? "",
    categorical: hashes[i]?.categorical ?? "",
  }));
  if (options.json) {
    io.stdout(
      `${JSON.stringify({ schema: "clade.blade-hash/1", file, reader: options.pandas ? "pandas" : "clade", rows: frame.rowCount, columns })}\n`,
    );
    return 0;
  }
  io.stdout(
    `${renderTable(
      ["column", "dtype", "value hash", "categorical hash"],
      columns.map((c) => [
        c.name,
        c.dtype,
        c.value,
        c.value === c.categorical ? "(same)" : c.categorical,
      ]),
    )}${frame.rowCount} rows, read as pandas 1.5.3's read_csv does (${options.pandas ? "by pandas itself" : "clade's reader"}); hashes as BLADE's DFValueHasher (docs/blade-spec.md §1).\n`,
  );
  return 0;
}
