/**
 * Development check of clade's own BLADE datasets (data/blade/datasets, written by
 * scripts/blade-datasets.ts). For every dataset it
 * 1. validates annotations.csv's shape: 32-hex ids, one ROOT row, one dependency-graph row whose
 *    links are exactly the branches' parent → child edges;
 * 2. runs every ground-truth transform on every path through its ancestors (one path per choice
 *    of branch, ancestors in topological order, as BLADE executes ground truth, §2.1) twice: the
 *    pandas `code` with real pandas (/usr/bin/python3) and the `code_sql` with DuckDB, and
 *    requires identical frames (columns, order, pandas dtype, values to 5 decimals);
 * 3. fits every ground-truth model with statsmodels on the transform paths its process file
 *    names, and the naive analysis on the raw data, printing the IV's estimate against the true
 *    effect of info.json; the reference model must recover it (sign and size within tolerance).
 *
 * Run: `npx tsx scripts/blade-datasets-check.ts [name ...]`. Exit status 1 when anything fails.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { parse } from "csv-parse/sync";
import { DATASETS_DIR, loadProcess, PROCESS_DIR, ProcessFileError } from "./blade-datasets.js";

const PYTHON = "/usr/bin/python3";
const ROOT_SPEC_ID = "ROOT_SPEC_ID";
const SPEC_ID = /^[0-9a-f]{32}$/;
/** Values agree when they round to the same 5 decimals (BLADE's hashing precision) or nearly so. */
const DECIMALS = 5;
const FLOAT_SLACK = 1e-9;
const PYTHON_TIMEOUT_MS = 600_000;
const PYTHON_MAX_BUFFER = 1 << 30;

class CheckError extends Error {
  override name = "CheckError";
}

interface Transform {
  id: string;
  name: string;
  code: string;
  codeSql: string;
  branches: string[][];
}

interface FrameColumn {
  name: string;
  dtype: string;
  values: (number | string | boolean | null)[];
}

// ---------------------------------------------------------------- annotations

function readAnnotations(dir: string): {
  transforms: Transform[];
  models: Record<string, unknown>[];
} {
  const path = join(dir, "annotations.csv");
  const rows = parse(readFileSync(path, "utf8"), { columns: true }) as Record<string, string>[];
  const transforms: Transform[] = [];
  const models: Record<string, unknown>[] = [];
  let graph: { nodes: { id: string }[]; links: { source: string; target: string }[] } | undefined;
  let graphRows = 0;
  let hasRoot = false;
  for (const row of rows) {
    const id = row.spec_id ?? "";
    if (id !== ROOT_SPEC_ID && !SPEC_ID.test(id))
      throw new CheckError(`${path}: bad spec_id "${id}"`);
    const filled = Object.entries(row).filter(([k, v]) => k !== "spec_id" && v.trim() !== "");
    if (filled.length !== 1)
      throw new CheckError(`${path}: row ${id} fills ${filled.length} JSON columns`);
    const [column, text] = filled[0] as [string, string];
    const json = JSON.parse(text);
    if (column === "dependency_graph") {
      graph = json;
      graphRows++;
    } else if (column === "transform_spec_json") {
      if (id === ROOT_SPEC_ID) {
        if (JSON.stringify(json) !== '{"spec_name":"ROOT"}')
          throw new CheckError(`${path}: ROOT row`);
        hasRoot = true;
        continue;
      }
      transforms.push({
        id,
        name: json.spec_name,
        code: json.code,
        codeSql: json.code_sql,
        branches: json.branches.map((b: { dependencies: string[] }) => b.dependencies),
      });
    } else if (column === "model_spec_json") models.push({ id, ...json });
  }
  if (!hasRoot) throw new CheckError(`${path}: no ROOT_SPEC_ID row`);
  if (graphRows !== 1 || !graph)
    throw new CheckError(`${path}: ${graphRows} dependency_graph rows`);
  const edges = new Set(
    transforms.flatMap((t) => [...new Set(t.branches.flat())].map((p) => `${p}>${t.id}`)),
  );
  const links = new Set(graph.links.map((l) => `${l.source}>${l.target}`));
  const nodes = new Set(graph.nodes.map((n) => n.id));
  const sameEdges = edges.size === links.size && [...edges].every((e) => links.has(e));
  const sameNodes =
    nodes.size === transforms.length + 1 &&
    transforms.every((t) => nodes.has(t.id)) &&
    nodes.has(ROOT_SPEC_ID);
  if (!sameEdges || !sameNodes)
    throw new CheckError(`${path}: dependency_graph disagrees with branches`);
  return { transforms, models };
}

/** Every path to each transform: one per combination of branch choices, in topological order. */
function enumeratePaths(transforms: Transform[]): { spec: Transform; path: Transform[] }[] {
  const byId = new Map(transforms.map((t) => [t.id, t]));
  const order = new Map(transforms.map((t, i) => [t.id, i]));
  const memo = new Map<string, Set<string>[]>();
  const pathsOf = (id: string): Set<string>[] => {
    if (id === ROOT_SPEC_ID) return [new Set()];
    const cached = memo.get(id);
    if (cached) return cached;
    const spec = byId.get(id);
    if (!spec) throw new CheckError(`branch names unknown spec ${id}`);
    const out: Set<string>[] = [];
    for (const deps of spec.branches) {
      let combos: Set<string>[] = [new Set()];
      for (const dep of deps) {
        combos = combos.flatMap((c) => pathsOf(dep).map((p) => new Set([...c, ...p])));
      }
      for (const combo of combos) out.push(new Set([...combo, id]));
    }
    memo.set(id, out);
    return out;
  };
  // Dependencies always precede their dependants in the file (the generator checks), so file
  // order is a topological order.
  return transforms.flatMap((spec) =>
    pathsOf(spec.id).map((set) => ({
      spec,
      path: [...set]
        .sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0))
        .map((i) => byId.get(i) as Transform),
    })),
  );
}

// ---------------------------------------------------------------- pandas and statsmodels

const PYTHON_SOURCE = String.raw`
import contextlib, io, json, sys, warnings
import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
warnings.filterwarnings("ignore")

def column(name, s):
    k = s.dtype.kind
    if k in "iu":
        return {"name": name, "dtype": "int64", "values": [int(v) for v in s]}
    if k == "f":
        return {"name": name, "dtype": "float64", "values": [None if v != v else float(v) for v in s]}
    if k == "b":
        return {"name": name, "dtype": "bool", "values": [bool(v) for v in s]}
    if k == "M":
        return {"name": name, "dtype": "datetime64", "values": [None if pd.isna(v) else v.strftime("%Y-%m-%d %H:%M:%S") for v in s]}
    if k == "O":
        return {"name": name, "dtype": "object", "values": [None if v is None or (isinstance(v, float) and v != v) else str(v) for v in s]}
    return {"name": name, "dtype": "other:" + str(s.dtype), "values": [str(v) for v in s]}

def run(df0, code):
    ns = {"pd": pd, "np": np, "df": df0.copy(deep=True)}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, ns)
    return ns

def family_link(model):
    m = model.model
    name = type(m).__name__
    fixed = {"OLS": ("gaussian", "identity"), "Logit": ("binomial", "logit"),
             "Probit": ("binomial", "probit"), "Poisson": ("poisson", "log"),
             "NegativeBinomial": ("negativebinomial", "log")}
    if name in fixed:
        return fixed[name]
    if name == "GLM":
        return type(m.family).__name__.lower(), type(m.family.link).__name__.lower()
    return name.lower(), "?"

job = json.load(sys.stdin)
df0 = pd.read_csv(job["csv"])
out = {"dtypes": {c: str(t) for c, t in df0.dtypes.items()}, "frames": [], "fits": []}
for item in job["frames"]:
    try:
        res = run(df0, item["code"])["df"]
        out["frames"].append({"key": item["key"], "columns": [column(c, res[c]) for c in res.columns]})
    except Exception as e:
        out["frames"].append({"key": item["key"], "error": type(e).__name__ + ": " + str(e)})
for item in job["fits"]:
    try:
        ns = run(df0, item["code"] + "\n" + item["model"])
        model = ns["model"]
        fam, link = family_link(model)
        entry = {"key": item["key"], "family": fam, "link": link, "nobs": int(model.nobs)}
        # The IV itself, else an alternative operationalisation of it (e.g. a threshold
        # indicator), reported under its own name so that it is not taken for the IV.
        term = next((t for t in item["ivs"] if t in model.params.index), None)
        if term is None:
            raise KeyError("no IV column among the model terms")
        if term != item["ivs"][0]:
            entry["term"] = term
        entry.update({"estimate": float(model.params[term]), "se": float(model.bse[term]),
                      "p": float(model.pvalues[term])})
        out["fits"].append(entry)
    except Exception as e:
        out["fits"].append({"key": item["key"], "error": type(e).__name__ + ": " + str(e)})
json.dump(out, sys.stdout)
`;

interface PythonFit {
  key: string;
  family?: string;
  link?: string;
  nobs?: number;
  estimate?: number;
  se?: number;
  p?: number;
  /** Set when the IV is not a model term: the regressor reported instead. */
  term?: string;
  error?: string;
}

interface PythonResult {
  dtypes: Record<string, string>;
  frames: { key: string; columns?: FrameColumn[]; error?: string }[];
  fits: PythonFit[];
}

function runPython(
  csv: string,
  frames: { key: string; code: string }[],
  fits: { key: string; code: string; model: string; ivs: string[] }[],
): PythonResult {
  const dir = mkdtempSync(join(tmpdir(), "blade-check-"));
  try {
    const script = join(dir, "check.py");
    writeFileSync(script, PYTHON_SOURCE);
    const result = spawnSync(PYTHON, [script], {
      input: JSON.stringify({ csv, frames, fits }),
      encoding: "utf8",
      maxBuffer: PYTHON_MAX_BUFFER,
      timeout: PYTHON_TIMEOUT_MS,
    });
    if (result.status !== 0) {
      const last = (result.stderr || String(result.error)).trim().split("\n").pop();
      throw new CheckError(`python failed: ${last}`);
    }
    return JSON.parse(result.stdout) as PythonResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- DuckDB

const DUCKDB_TYPE_OF_PANDAS: Record<string, string> = {
  int64: "BIGINT",
  float64: "DOUBLE",
  object: "VARCHAR",
  bool: "BOOLEAN",
};

/** Splits SQL on semicolons outside quotes. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let current = "";
  let quote: string | null = null;
  for (const c of sql) {
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === ";") {
      if (current.trim()) out.push(current.trim());
      current = "";
      continue;
    }
    current += c;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

function pandasDtypeOfDuckdb(type: string, hasNull: boolean): string {
  if (/^(U?(BIG|SMALL|TINY|HUGE)?INT(EGER)?)$/.test(type)) return hasNull ? "float64" : "int64";
  if (type === "DOUBLE" || type === "FLOAT" || type.startsWith("DECIMAL")) return "float64";
  if (type === "VARCHAR") return "object";
  if (type === "BOOLEAN") return hasNull ? "object" : "bool";
  if (type.startsWith("TIMESTAMP") || type === "DATE") return "datetime64";
  return `other:${type}`;
}

function duckdbCell(value: unknown, dtype: string): number | string | boolean | null {
  if (value === null || value === undefined) return null;
  if (dtype === "datetime64") {
    const text = String(value);
    return text.length === 10 ? `${text} 00:00:00` : text.slice(0, 19);
  }
  if (dtype === "int64" || dtype === "float64") return Number(String(value));
  if (typeof value === "boolean") return value;
  return String(value);
}

async function runSqlPaths(
  csv: string,
  dtypes: Record<string, string>,
  scripts: { key: string; statements: string[] }[],
): Promise<Map<string, FrameColumn[] | string>> {
  const instance = await DuckDBInstance.create(":memory:");
  const con = await instance.connect();
  const columns = Object.entries(dtypes)
    .map(([name, dtype]) => `'${name}': '${DUCKDB_TYPE_OF_PANDAS[dtype] ?? "VARCHAR"}'`)
    .join(", ");
  await con.run(
    `CREATE TABLE base AS SELECT * FROM read_csv('${csv}', header = true, delim = ',', quote = '"', columns = {${columns}})`,
  );
  const out = new Map<string, FrameColumn[] | string>();
  for (const { key, statements } of scripts) {
    try {
      await con.run("CREATE OR REPLACE TABLE df AS SELECT * FROM base");
      for (const statement of statements) {
        await con.run(`CREATE OR REPLACE TABLE df_next AS ${statement}`);
        await con.run("DROP TABLE df");
        await con.run("ALTER TABLE df_next RENAME TO df");
      }
      const reader = await con.runAndReadAll("SELECT * FROM df");
      const names = reader.columnNames();
      const types = reader.columnTypes().map(String);
      const rows = reader.getRows();
      out.set(
        key,
        names.map((name, j) => {
          const raw = rows.map((r) => r[j]);
          const dtype = pandasDtypeOfDuckdb(
            types[j] as string,
            raw.some((v) => v === null),
          );
          return { name, dtype, values: raw.map((v) => duckdbCell(v, dtype)) };
        }),
      );
    } catch (error) {
      out.set(key, (error as Error).message.split("\n")[0] as string);
    }
  }
  con.closeSync();
  return out;
}

// ---------------------------------------------------------------- comparison

function round5(x: number): number {
  return Number(x.toFixed(DECIMALS));
}

/** The first difference between two frames, or undefined when they agree. */
export function frameDifference(a: FrameColumn[], b: FrameColumn[]): string | undefined {
  const namesA = a.map((c) => c.name).join(",");
  const namesB = b.map((c) => c.name).join(",");
  if (namesA !== namesB) return `columns differ: pandas [${namesA}] vs sql [${namesB}]`;
  for (let j = 0; j < a.length; j++) {
    const ca = a[j] as FrameColumn;
    const cb = b[j] as FrameColumn;
    if (ca.dtype !== cb.dtype) return `column ${ca.name}: dtype ${ca.dtype} vs ${cb.dtype}`;
    if (ca.values.length !== cb.values.length) {
      return `row count ${ca.values.length} vs ${cb.values.length}`;
    }
    for (let i = 0; i < ca.values.length; i++) {
      const va = ca.values[i];
      const vb = cb.values[i];
      if (va === vb) continue;
      if (typeof va === "number" && typeof vb === "number") {
        if (round5(va) === round5(vb) || Math.abs(va - vb) <= FLOAT_SLACK) continue;
      }
      return `column ${ca.name}, row ${i}: ${JSON.stringify(va)} vs ${JSON.stringify(vb)}`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------- one dataset

interface TrueEffect {
  iv: string;
  dv: string;
  direction: "positive" | "negative" | "none";
  sizes: { family: string; link: string; value: number; tolerance: number }[];
}

function verdict(effect: TrueEffect, fit: PythonFit): { ok: boolean; text: string } {
  if (fit.error) return { ok: false, text: `error: ${fit.error}` };
  if (fit.estimate === undefined) return { ok: false, text: "no estimate" };
  if (fit.term) return { ok: false, text: "an alternative IV column; no true size on its scale" };
  const size = effect.sizes.find((s) => s.family === fit.family && s.link === fit.link);
  const sign = Math.sign(fit.estimate);
  const directionOk =
    effect.direction === "none" ? true : sign === (effect.direction === "positive" ? 1 : -1);
  if (!size) return { ok: directionOk, text: `no size for ${fit.family}/${fit.link}` };
  const within = Math.abs(fit.estimate - size.value) <= size.tolerance;
  return {
    ok: directionOk && within,
    text: `true ${size.value} ± ${size.tolerance}: ${directionOk && within ? "recovered" : "MISSED"}`,
  };
}

async function checkDataset(name: string): Promise<boolean> {
  const dir = join(DATASETS_DIR, name);
  const csv = join(dir, "data.csv");
  if (!existsSync(join(dir, "info.json"))) throw new CheckError(`no dataset at ${dir}`);
  const info = JSON.parse(readFileSync(join(dir, "info.json"), "utf8"));
  const effect = info.clade.true_effect as TrueEffect;
  const spec = loadProcess(join(PROCESS_DIR, `${name}.json`));
  const { transforms, models } = readAnnotations(dir);
  const byName = new Map(transforms.map((t) => [t.name, t]));
  const paths = enumeratePaths(transforms);
  const frames = paths.map((p, i) => ({
    key: `p${i}`,
    code: p.path.map((t) => t.code).join("\n"),
  }));

  // The true IV first, then the other columns the ground truth's IV variables use.
  const ivs = [
    effect.iv,
    ...spec.ground_truth.cvars.filter((c) => c.role === "IV").flatMap((c) => c.columns),
  ].filter((c, i, all) => all.indexOf(c) === i);
  const fits: { key: string; code: string; model: string; ivs: string[] }[] = [];
  const fitLabels = new Map<string, string>();
  const reference = new Set<string>();
  for (const model of spec.ground_truth.models) {
    model.fits.forEach((names, k) => {
      const path = names.map((n) => {
        const spec = byName.get(n);
        if (!spec) throw new CheckError(`${name}: model ${model.name} fits after unknown ${n}`);
        return spec;
      });
      const key = `${model.name}#${k}`;
      fits.push({ key, code: path.map((t) => t.code).join("\n"), model: model.code, ivs });
      fitLabels.set(key, `${model.name} after [${names.join(", ")}]`);
      if (model.reference) reference.add(key);
    });
  }
  fits.push({ key: "naive", code: "", model: spec.naive.code, ivs });
  fitLabels.set("naive", `naive: ${spec.naive.description}`);

  const py = runPython(csv, frames, fits);
  const sql = await runSqlPaths(
    csv,
    py.dtypes,
    paths.map((p, i) => ({
      key: `p${i}`,
      statements: p.path.flatMap((t) => splitStatements(t.codeSql)),
    })),
  );
  let ok = true;
  let compared = 0;
  paths.forEach((p, i) => {
    const pandasFrame = py.frames[i];
    const sqlFrame = sql.get(`p${i}`);
    const label = `${p.spec.name} via [${p.path.map((t) => t.name).join(" → ")}]`;
    let problem: string | undefined;
    if (!pandasFrame || pandasFrame.error || !pandasFrame.columns) {
      problem = `pandas: ${pandasFrame?.error}`;
    } else if (typeof sqlFrame === "string" || !sqlFrame) problem = `sql: ${sqlFrame}`;
    else problem = frameDifference(pandasFrame.columns, sqlFrame);
    if (problem) {
      ok = false;
      console.log(`  MISMATCH ${label}: ${problem}`);
    } else compared++;
  });
  const rows = py.frames[0]?.columns?.[0]?.values.length;
  console.log(
    `${name}: ${transforms.length} transforms, ${models.length} models; ${compared}/${paths.length} transform paths agree between pandas and DuckDB (first path ${rows} rows)`,
  );
  for (const fit of py.fits) {
    const v = verdict(effect, fit);
    const estimate =
      fit.estimate === undefined
        ? "—"
        : `${fit.estimate.toFixed(3)} (se ${fit.se?.toFixed(3)}, p ${fit.p?.toExponential(1)})`;
    const isReference = reference.has(fit.key);
    if (isReference && !v.ok) ok = false;
    const mark = isReference ? "REF  " : "     ";
    console.log(
      `  ${mark}${fitLabels.get(fit.key)}: ${fit.family}/${fit.link} n=${fit.nobs} ${fit.term ?? effect.iv} = ${estimate}; ${v.text}`,
    );
  }
  return ok;
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const names =
    wanted.length > 0
      ? wanted
      : readdirSync(DATASETS_DIR)
          .filter((d) => existsSync(join(DATASETS_DIR, d, "annotations.csv")))
          .sort();
  let ok = true;
  for (const name of names) {
    try {
      if (!(await checkDataset(name))) ok = false;
    } catch (error) {
      if (!(error instanceof CheckError || error instanceof ProcessFileError)) throw error;
      console.log(`${name}: ${error.message}`);
      ok = false;
    }
  }
  console.log(ok ? "all checks passed" : "SOME CHECKS FAILED");
  if (!ok) process.exitCode = 1;
}

await main();
