/**
 * Fitting a model call of the embedded engine (model-formula.ts) on a frame, the way statsmodels'
 * formula API would: rows with a missing value in a used column dropped, patsy's design matrix
 * (treatment coding, patsy's column order and names), and the estimator statsmodels uses for the
 * entry point — least squares for `ols` (t p-values), Newton on the log-likelihood with the
 * observed information for the discrete models `logit`/`probit`/`poisson` (z p-values), and IRLS
 * for `glm` (z p-values, covariance from the last iteration's weights, as statsmodels does).
 * Goldens produced by statsmodels 0.13.5 pin all of it (scripts/blade-glm-goldens.py).
 */
import { CholeskyDecomposition, Matrix } from "ml-matrix";
import {
  normalCdf,
  normalPdf,
  normalQuantile,
  normalTwoSidedP,
  tTwoSidedP,
} from "../../stats/distributions.js";
import type { Cell, Column, Frame } from "./frame.js";
import {
  type FormulaFactor,
  type FormulaTerm,
  factorName,
  type ModelCall,
  type ModelFamily,
  ModelFormulaError,
  type ModelLink,
  parseModelCall,
} from "./model-formula.js";
import type { FittedModel, ModelOutcome } from "./runtime/types.js";

export { normalCdf, normalTwoSidedP, tTwoSidedP };

export class ModelFitError extends Error {
  override name = "ModelFitError";
}

/** statsmodels GLM.fit: IRLS stops when the deviance changes by at most this (absolute). */
const IRLS_DEVIANCE_TOLERANCE = 1e-8;
const IRLS_MAX_ITERATIONS = 100;
/** statsmodels' Newton (discrete models): stops when no parameter moves by more than this. */
const NEWTON_PARAM_TOLERANCE = 1e-8;
const NEWTON_MAX_ITERATIONS = 35;
/** statsmodels clips probabilities to [eps, 1 − eps] in the probit score. */
const FLOAT_EPS = 2.220446049250313e-16;
/**
 * statsmodels calls a fit perfect when np.allclose(μ − y, 0): with its default tolerances and
 * a zero reference that is |μ − y| ≤ 1e-8 for every row.
 */
const ALLCLOSE_ATOL = 1e-8;
/** statsmodels' GLM negative binomial family has a fixed alpha of 1 unless told otherwise. */
const GLM_NEGBIN_ALPHA = 1;
/**
 * A design column whose part not explained by the earlier columns has a squared norm below
 * this fraction of its own is taken as a linear combination of them (an angle under 1e-6 rad).
 */
const RANK_TOLERANCE = 1e-12;

// ---- Design matrix ----

type FactorKind = "numeric" | "categorical";

/** A categorical level: its sort key and the text patsy writes in column names. */
interface Level {
  key: number | string | boolean;
  label: string;
}

interface FactorInfo {
  factor: FormulaFactor;
  name: string;
  kind: FactorKind;
  column: Column;
  /** Sorted levels (categorical only). */
  levels: Level[];
  /** Per kept row: the numeric value, or the level's index. */
  values: Float64Array;
}

export interface Design {
  /** Column names as patsy writes them, in patsy's order. */
  names: string[];
  /** The design's columns (column-major: the loops over rows stay tight). */
  columns: Float64Array[];
  y: Float64Array;
  rows: number;
  intercept: boolean;
}

/** Python's repr of a float, as patsy writes a float level (`2.0`, `1e-05`). */
function pythonFloat(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (Object.is(value, -0)) return "-0.0";
  const exponent = Math.floor(Math.log10(Math.abs(value)));
  if (value !== 0 && (exponent < -4 || exponent >= 16)) {
    const [mantissa, exp] = value.toExponential().split("e") as [string, string];
    const sign = exp.startsWith("-") ? "-" : "+";
    const digits = exp.replace(/^[+-]/, "").padStart(2, "0");
    return `${mantissa}e${sign}${digits}`;
  }
  const text = String(value);
  return /[.e]/.test(text) ? text : `${text}.0`;
}

function isMissing(column: Column, cell: Cell): boolean {
  if (column.dtype === "float64") return typeof cell === "number" && Number.isNaN(cell);
  return cell === null;
}

function levelOf(column: Column, cell: Cell): Level {
  switch (column.dtype) {
    case "int64":
      return { key: cell as number, label: String(cell) };
    case "float64":
      return { key: cell as number, label: pythonFloat(cell as number) };
    case "bool":
      return { key: cell as boolean, label: cell ? "True" : "False" };
    default:
      return { key: String(cell), label: String(cell) };
  }
}

/** Python's sort of one column's level values (numbers, booleans, or texts by code unit). */
function compareLevels(a: Level, b: Level): number {
  if (typeof a.key === "string" || typeof b.key === "string") {
    const x = String(a.key);
    const y = String(b.key);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return Number(a.key) - Number(b.key);
}

function findColumn(frame: Frame, name: string): Column {
  const column = frame.columns.find((c) => c.name === name);
  if (!column) {
    const known = frame.columns.map((c) => c.name).join(", ");
    throw new ModelFitError(`column "${name}" is not in the data (columns: ${known})`);
  }
  return column;
}

/** patsy's factor type: C() and non-numeric columns are categorical (bool too, as in patsy). */
function factorKind(factor: FormulaFactor, column: Column): FactorKind {
  if (column.dtype === "datetime64") {
    throw new ModelFitError(
      `column "${column.name}" holds dates; derive a number from it in a transform unit first`,
    );
  }
  if (factor.explicitCategorical) return "categorical";
  return column.dtype === "int64" || column.dtype === "float64" ? "numeric" : "categorical";
}

/** One coded piece of a term: which categorical factors it codes, full rank or not. */
type Coding = Map<string, boolean>;

/** patsy's subsets of a term's categorical factors: by size, then in index order. */
function sortedSubsets(count: number): number[][] {
  const subsets: number[][] = [];
  for (let mask = 0; mask < 1 << count; mask++) {
    const subset: number[] = [];
    for (let i = 0; i < count; i++) if (mask & (1 << i)) subset.push(i);
    subsets.push(subset);
  }
  const lexical = (a: number[], b: number[]): number => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
    }
    return a.length - b.length;
  };
  return subsets.sort(lexical).sort((a, b) => a.length - b.length);
}

/**
 * patsy's `pick_contrasts_for_term` (redundancy.py): expand the term's categorical factors into
 * all their subsets, drop those an earlier term of the same bucket spans, then let a longer
 * subterm absorb a shorter one by coding the extra factor full rank.
 */
function pickCodings(categorical: string[], used: Set<string>): Coding[] {
  const subterms: Coding[] = [];
  for (const subset of sortedSubsets(categorical.length)) {
    const names = subset.map((i) => categorical[i] as string);
    const key = JSON.stringify([...names].sort());
    if (!used.has(key)) {
      used.add(key);
      subterms.push(new Map(names.map((n) => [n, false])));
    }
  }
  const absorbs = (long: Coding, short: Coding): boolean =>
    long.size - short.size === 1 && [...short].every(([f, full]) => long.get(f) === full);
  for (let changed = true; changed; ) {
    changed = false;
    outer: for (let s = 0; s < subterms.length; s++) {
      for (let l = s + 1; l < subterms.length; l++) {
        const short = subterms[s] as Coding;
        const long = subterms[l] as Coding;
        if (absorbs(long, short)) {
          const extra = [...long.keys()].find((f) => !short.has(f)) as string;
          subterms[l] = new Map([...short, [extra, true]]);
          subterms.splice(s, 1);
          changed = true;
          break outer;
        }
      }
    }
  }
  return subterms;
}

/** Builds patsy's design matrix for the call on the frame's complete rows. */
export function buildDesign(frame: Frame, call: ModelCall): Design {
  const dvColumn = findColumn(frame, call.dv);
  if (dvColumn.dtype !== "int64" && dvColumn.dtype !== "float64" && dvColumn.dtype !== "bool") {
    throw new ModelFitError(
      `the dependent variable "${call.dv}" must be numeric (its dtype is ${dvColumn.dtype}); code it as numbers in a transform unit`,
    );
  }

  // Every factor once, by name.
  const factorByName = new Map<
    string,
    { factor: FormulaFactor; column: Column; kind: FactorKind }
  >();
  for (const term of call.termFactors) {
    for (const factor of term) {
      const name = factorName(factor);
      if (factorByName.has(name)) continue;
      const column = findColumn(frame, factor.column);
      factorByName.set(name, { factor, column, kind: factorKind(factor, column) });
    }
  }

  // Listwise deletion over every used column, as patsy's NA_action="drop".
  const usedColumns = [dvColumn, ...[...factorByName.values()].map((f) => f.column)];
  const missing = new Uint8Array(frame.rowCount);
  for (const column of usedColumns) {
    const values = column.values;
    for (let row = 0; row < frame.rowCount; row++) {
      if (isMissing(column, values[row] as Cell)) missing[row] = 1;
    }
  }
  const keep: number[] = [];
  for (let row = 0; row < frame.rowCount; row++) if (!missing[row]) keep.push(row);
  const rows = keep.length;

  const y = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const cell = dvColumn.values[keep[i] as number];
    y[i] = typeof cell === "boolean" ? Number(cell) : (cell as number);
  }
  if (!y.every(Number.isFinite)) {
    throw new ModelFitError(`the dependent variable "${call.dv}" has infinite values`);
  }

  const infos = new Map<string, FactorInfo>();
  for (const [name, { factor, column, kind }] of factorByName) {
    const values = new Float64Array(rows);
    const cells = column.values;
    let levels: Level[] = [];
    if (kind === "numeric") {
      for (let i = 0; i < rows; i++) values[i] = cells[keep[i] as number] as number;
      if (!values.every(Number.isFinite)) {
        throw new ModelFitError(`column "${column.name}" has infinite values`);
      }
    } else {
      // Levels are those of the rows kept (patsy sniffs them before dropping rows that miss
      // another column; the two differ only where statsmodels would get an all-zero column).
      // Cells are keyed as they are: texts, numbers and booleans never collide within a column.
      const seen = new Map<Cell, Level>();
      for (let i = 0; i < rows; i++) {
        const cell = cells[keep[i] as number] as Cell;
        if (!seen.has(cell)) seen.set(cell, levelOf(column, cell));
      }
      levels = [...seen.values()].sort(compareLevels);
      const index = new Map<Cell, number>();
      for (const [cell, level] of seen) index.set(cell, levels.indexOf(level));
      for (let i = 0; i < rows; i++)
        values[i] = index.get(cells[keep[i] as number] as Cell) as number;
    }
    infos.set(name, { factor, name, kind, column, levels, values });
  }

  // patsy's term order: terms bucketed by their set of numeric factors (buckets in order of
  // first appearance, the all-categorical bucket first), by degree within a bucket.
  const terms: FormulaTerm[] = call.intercept ? [[], ...call.termFactors] : [...call.termFactors];
  const buckets = new Map<string, FormulaTerm[]>();
  for (const term of terms) {
    const numeric = term.map(factorName).filter((n) => infos.get(n)?.kind === "numeric");
    const key = JSON.stringify(numeric.sort());
    const bucket = buckets.get(key) ?? [];
    bucket.push(term);
    buckets.set(key, bucket);
  }
  const bucketOrder = [...buckets.keys()];
  const emptyKey = JSON.stringify([]);
  if (buckets.has(emptyKey)) {
    bucketOrder.splice(bucketOrder.indexOf(emptyKey), 1);
    bucketOrder.unshift(emptyKey);
  }

  const names: string[] = [];
  const columns: Float64Array[] = [];
  for (const key of bucketOrder) {
    const bucketTerms = (buckets.get(key) as FormulaTerm[])
      .slice()
      .sort((a, b) => a.length - b.length);
    const used = new Set<string>();
    for (const term of bucketTerms) {
      const categorical = term.map(factorName).filter((n) => infos.get(n)?.kind === "categorical");
      for (const coding of pickCodings(categorical, used)) {
        addSubtermColumns(term, coding, infos, rows, names, columns);
      }
    }
  }

  return { names, columns, y, rows, intercept: call.intercept };
}

/** The columns of one coded subterm; the leftmost factor varies fastest (patsy, like R). */
function addSubtermColumns(
  term: FormulaTerm,
  coding: Coding,
  infos: Map<string, FactorInfo>,
  rows: number,
  names: string[],
  columns: Float64Array[],
): void {
  // Per factor of the subterm, its columns: a name piece, and the factor's values with the
  // level index this column indicates (-1: the numeric values themselves).
  type Piece = { label: string; values: Float64Array; level: number };
  const pieces: Piece[][] = [];
  for (const factor of term) {
    const info = infos.get(factorName(factor)) as FactorInfo;
    if (info.kind === "numeric") {
      pieces.push([{ label: info.name, values: info.values, level: -1 }]);
    } else if (coding.has(info.name)) {
      const full = coding.get(info.name) as boolean;
      const first = full ? 0 : 1;
      pieces.push(
        info.levels.slice(first).map((l, k) => ({
          label: `${info.name}[${full ? "" : "T."}${l.label}]`,
          values: info.values,
          level: k + first,
        })),
      );
    }
  }
  const counts = pieces.map((p) => p.length);
  const total = counts.reduce((a, b) => a * b, 1);
  for (let combo = 0; combo < total; combo++) {
    let rest = combo;
    const chosen = pieces.map((options, f) => {
      const pick = rest % (counts[f] as number);
      rest = Math.floor(rest / (counts[f] as number));
      return options[pick] as Piece;
    });
    names.push(chosen.length ? chosen.map((c) => c.label).join(":") : "Intercept");
    const column = new Float64Array(rows).fill(1);
    for (const { values, level } of chosen) {
      if (level < 0)
        for (let i = 0; i < rows; i++) column[i] = (column[i] as number) * (values[i] as number);
      else for (let i = 0; i < rows; i++) if (values[i] !== level) column[i] = 0;
    }
    columns.push(column);
  }
}

// ---- Families and links (statsmodels.genmod.families) ----

interface LinkFunctions {
  /** g(μ) */
  link(mu: number): number;
  /** μ = g⁻¹(η) */
  inverse(eta: number): number;
  /** g′(μ), given μ and η = g(μ). */
  derivative(mu: number, eta: number): number;
}

const LINKS: Record<ModelLink, LinkFunctions> = {
  identity: { link: (mu) => mu, inverse: (eta) => eta, derivative: () => 1 },
  log: { link: Math.log, inverse: Math.exp, derivative: (mu) => 1 / mu },
  logit: {
    link: (mu) => Math.log(mu / (1 - mu)),
    inverse: (eta) => 1 / (1 + Math.exp(-eta)),
    derivative: (mu) => 1 / (mu * (1 - mu)),
  },
  probit: {
    link: normalQuantile,
    inverse: normalCdf,
    derivative: (_mu, eta) => 1 / normalPdf(eta),
  },
  cloglog: {
    link: (mu) => Math.log(-Math.log1p(-mu)),
    inverse: (eta) => -Math.expm1(-Math.exp(eta)),
    derivative: (mu) => 1 / ((mu - 1) * Math.log1p(-mu)),
  },
};

/** x·log(x/y) with 0·log 0 = 0 (scipy's xlogy as statsmodels uses it). */
function xlogxy(x: number, y: number): number {
  return x === 0 ? 0 : x * Math.log(x / y);
}

interface FamilyFunctions {
  variance(mu: number): number;
  /** One observation's deviance contribution. */
  deviance(y: number, mu: number): number;
  startingMu(y: number, meanY: number): number;
  /** Whether the dispersion is estimated (Pearson χ² / df) rather than fixed at 1. */
  estimatesScale: boolean;
}

const clip01 = (mu: number): number => Math.min(Math.max(mu, FLOAT_EPS), 1 - FLOAT_EPS);

const FAMILIES: Record<ModelFamily, FamilyFunctions> = {
  gaussian: {
    variance: () => 1,
    deviance: (y, mu) => (y - mu) ** 2,
    startingMu: (y, meanY) => (y + meanY) / 2,
    estimatesScale: true,
  },
  binomial: {
    variance: (mu) => clip01(mu) * (1 - clip01(mu)),
    deviance: (y, mu) => 2 * (xlogxy(y, clip01(mu)) + xlogxy(1 - y, 1 - clip01(mu))),
    startingMu: (y) => (y + 0.5) / 2,
    estimatesScale: false,
  },
  poisson: {
    variance: (mu) => mu,
    deviance: (y, mu) => 2 * (xlogxy(y, mu) - (y - mu)),
    startingMu: (y, meanY) => (y + meanY) / 2,
    estimatesScale: false,
  },
  negativebinomial: {
    variance: (mu) => mu + GLM_NEGBIN_ALPHA * mu * mu,
    deviance: (y, mu) =>
      2 *
      (xlogxy(y, mu) -
        (y + 1 / GLM_NEGBIN_ALPHA) *
          Math.log((1 + GLM_NEGBIN_ALPHA * y) / (1 + GLM_NEGBIN_ALPHA * mu))),
    startingMu: (y, meanY) => (y + meanY) / 2,
    estimatesScale: false,
  },
};

// ---- Linear algebra on the design ----

function dot(a: Float64Array, b: Float64Array, n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** X′WX (p × p, symmetric) and, when z is given, X′Wz. */
function weightedCross(
  design: Design,
  w: Float64Array,
  z?: Float64Array,
): { xtwx: number[][]; xtwz: number[] } {
  const p = design.names.length;
  const n = design.rows;
  const xtwx = Array.from({ length: p }, () => new Array<number>(p).fill(0));
  const xtwz = new Array<number>(p).fill(0);
  const weighted = new Float64Array(n);
  for (let a = 0; a < p; a++) {
    const column = design.columns[a] as Float64Array;
    for (let i = 0; i < n; i++) weighted[i] = (column[i] as number) * (w[i] as number);
    if (z) xtwz[a] = dot(weighted, z, n);
    for (let b = 0; b <= a; b++) {
      const v = dot(weighted, design.columns[b] as Float64Array, n);
      (xtwx[a] as number[])[b] = v;
      (xtwx[b] as number[])[a] = v;
    }
  }
  return { xtwx, xtwz };
}

/** X′v. */
function crossVector(design: Design, v: Float64Array): number[] {
  return design.columns.map((column) => dot(column, v, design.rows));
}

/**
 * The inverse of a symmetric positive definite matrix, by Cholesky on its diagonally scaled
 * form (so that columns on very different scales do not cost precision). Undefined when it is
 * not positive definite.
 */
function inverseSpd(m: number[][]): number[][] | undefined {
  const p = m.length;
  const scale = m.map((row, i) => 1 / Math.sqrt(row[i] as number));
  if (scale.some((s) => !Number.isFinite(s))) return undefined;
  // Filled from one triangle: ml-matrix's Cholesky insists on exact symmetry.
  const scaled = new Matrix(p, p);
  for (let a = 0; a < p; a++) {
    for (let b = 0; b <= a; b++) {
      const v = ((m[a] as number[])[b] as number) * (scale[a] as number) * (scale[b] as number);
      scaled.set(a, b, v);
      scaled.set(b, a, v);
    }
  }
  const cholesky = new CholeskyDecomposition(scaled);
  if (!cholesky.isPositiveDefinite()) return undefined;
  const inv = cholesky.solve(Matrix.eye(p, p));
  return inv
    .to2DArray()
    .map((row, i) => row.map((v, j) => v * (scale[i] as number) * (scale[j] as number)));
}

function multiply(m: number[][], v: number[]): number[] {
  return m.map((row) => row.reduce((sum, a, j) => sum + a * (v[j] as number), 0));
}

/**
 * Refuses a design statsmodels could only fit by pseudo-inverse, naming the first column that
 * is constant or a combination of earlier ones: Cholesky, in column order, of X′X scaled to unit
 * diagonal; a pivot below RANK_TOLERANCE means the column adds (almost) nothing new. statsmodels
 * (numpy's matrix_rank on X) draws the line lower; designs between the two are numerically
 * degenerate anyway and statsmodels' estimates for them are not meaningful.
 */
function checkDesign(design: Design): void {
  const p = design.names.length;
  if (p === 0) throw new ModelFitError("the model has no terms and no intercept");
  if (design.rows <= p) {
    throw new ModelFitError(
      `${design.rows} complete rows for ${p} parameters: too few observations to fit the model`,
    );
  }
  const { xtwx } = weightedCross(design, new Float64Array(design.rows).fill(1));
  const scale = xtwx.map((row, i) => 1 / Math.sqrt(row[i] as number));
  const lower = Array.from({ length: p }, () => new Array<number>(p).fill(0));
  for (let j = 0; j < p; j++) {
    const singular = () =>
      new ModelFitError(
        `singular design: column "${design.names[j]}" is constant or a linear combination of earlier columns`,
      );
    if (!Number.isFinite(scale[j] as number)) throw singular();
    const row = lower[j] as number[];
    for (let k = 0; k <= j; k++) {
      let sum = ((xtwx[j] as number[])[k] as number) * (scale[j] as number) * (scale[k] as number);
      const other = lower[k] as number[];
      for (let m = 0; m < k; m++) sum -= (row[m] as number) * (other[m] as number);
      if (k < j) row[k] = sum / (other[k] as number);
      else if (sum < RANK_TOLERANCE) throw singular();
      else row[j] = Math.sqrt(sum);
    }
  }
}

// ---- Estimators ----

interface Estimate {
  params: number[];
  cov: number[][];
  /** Residual degrees of freedom for t p-values; undefined for z. */
  tDf?: number;
}

function linearPredictor(design: Design, beta: number[]): Float64Array {
  const n = design.rows;
  const eta = new Float64Array(n);
  design.columns.forEach((column, j) => {
    const b = beta[j] as number;
    for (let i = 0; i < n; i++) eta[i] = (eta[i] as number) + (column[i] as number) * b;
  });
  return eta;
}

function invertOrFail(m: number[][], what: string): number[][] {
  const inv = inverseSpd(m);
  if (!inv)
    throw new ModelFitError(`${what} is singular: the model cannot be estimated on these data`);
  return inv;
}

/** statsmodels OLS: β = (X′X)⁻¹X′y, cov = s²(X′X)⁻¹ with s² = RSS / (n − p). */
function fitOls(design: Design): Estimate {
  const ones = new Float64Array(design.rows).fill(1);
  const { xtwx, xtwz } = weightedCross(design, ones, design.y);
  const inv = invertOrFail(xtwx, "X'X");
  const params = multiply(inv, xtwz);
  const eta = linearPredictor(design, params);
  let rss = 0;
  for (let i = 0; i < design.rows; i++) rss += ((design.y[i] as number) - (eta[i] as number)) ** 2;
  const df = design.rows - design.names.length;
  const s2 = rss / df;
  return { params, cov: inv.map((row) => row.map((v) => v * s2)), tDf: df };
}

/** np.allclose(μ − y, 0): statsmodels' test for perfect prediction. */
function perfectFit(mu: Float64Array, y: Float64Array): boolean {
  for (let i = 0; i < mu.length; i++) {
    if (!(Math.abs((mu[i] as number) - (y[i] as number)) <= ALLCLOSE_ATOL)) return false;
  }
  return true;
}

/**
 * statsmodels GLM.fit(method="IRLS"): μ from the family's start, weighted least squares on the
 * working response until the deviance moves by at most 1e-8; the covariance is the scale times
 * (X′WX)⁻¹ with the weights the last iteration started from, exactly as statsmodels computes it.
 */
function fitIrls(design: Design, family: ModelFamily, linkName: ModelLink): Estimate {
  const fam = FAMILIES[family];
  const link = LINKS[linkName];
  const n = design.rows;
  const y = design.y;
  const meanY = y.reduce((a, b) => a + b, 0) / n;
  let mu: Float64Array = new Float64Array(n);
  let eta: Float64Array = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    mu[i] = fam.startingMu(y[i] as number, meanY);
    eta[i] = link.link(mu[i] as number);
  }
  const devianceOf = (m: Float64Array): number => {
    let d = 0;
    for (let i = 0; i < n; i++) d += fam.deviance(y[i] as number, m[i] as number);
    return d;
  };
  let deviance = devianceOf(mu);
  if (Number.isNaN(deviance))
    throw new ModelFitError(
      "the model's deviance is undefined at the start; check the dependent variable's range",
    );
  let params: number[] = [];
  let lastXtwx: number[][] = [];
  const w = new Float64Array(n);
  const z = new Float64Array(n);
  let converged = false;
  for (let iteration = 0; iteration < IRLS_MAX_ITERATIONS; iteration++) {
    for (let i = 0; i < n; i++) {
      const m = mu[i] as number;
      const g = link.derivative(m, eta[i] as number);
      w[i] = 1 / (g * g * fam.variance(m));
      z[i] = (eta[i] as number) + g * ((y[i] as number) - m);
    }
    if (!w.every(Number.isFinite))
      throw new ModelFitError(
        "the fit diverged (infinite weights): the model does not fit these data",
      );
    const { xtwx, xtwz } = weightedCross(design, w, z);
    lastXtwx = xtwx;
    params = multiply(invertOrFail(xtwx, "X'WX"), xtwz);
    eta = linearPredictor(design, params);
    mu = eta.map((e) => link.inverse(e));
    if (perfectFit(mu, y)) {
      throw new ModelFitError("perfect separation (or a perfect fit): results are not available");
    }
    const next = devianceOf(mu);
    if (!Number.isFinite(next))
      throw new ModelFitError(
        "the fit diverged (separation, or a model that does not fit the data)",
      );
    const change = Math.abs(next - deviance);
    deviance = next;
    if (change <= IRLS_DEVIANCE_TOLERANCE) {
      converged = true;
      break;
    }
  }
  if (!converged) {
    throw new ModelFitError(
      `the fit did not converge in ${IRLS_MAX_ITERATIONS} iterations (separation or a model that does not fit the data)`,
    );
  }
  let scale = 1;
  if (fam.estimatesScale) {
    let pearson = 0;
    for (let i = 0; i < n; i++)
      pearson += ((y[i] as number) - (mu[i] as number)) ** 2 / fam.variance(mu[i] as number);
    scale = pearson / (n - design.names.length);
  }
  const cov = invertOrFail(lastXtwx, "X'WX").map((row) => row.map((v) => v * scale));
  return { params, cov };
}

/** A discrete model's score and observed information at β. */
type Derivatives = (
  design: Design,
  eta: Float64Array,
) => { score: Float64Array; weight: Float64Array };

/** Logit: score X′(y − p), information X′ diag(p(1 − p)) X. */
const logitDerivatives: Derivatives = (design, eta) => {
  const score = new Float64Array(design.rows);
  const weight = new Float64Array(design.rows);
  for (let i = 0; i < design.rows; i++) {
    const p = 1 / (1 + Math.exp(-(eta[i] as number)));
    score[i] = (design.y[i] as number) - p;
    weight[i] = p * (1 - p);
  }
  return { score, weight };
};

/** Probit (statsmodels' Probit.score/hessian): λ = qφ(qη)/Φ(qη), q = 2y − 1; information λ(λ + η). */
const probitDerivatives: Derivatives = (design, eta) => {
  const score = new Float64Array(design.rows);
  const weight = new Float64Array(design.rows);
  for (let i = 0; i < design.rows; i++) {
    const e = eta[i] as number;
    const q = 2 * (design.y[i] as number) - 1;
    const lambda = (q * normalPdf(q * e)) / clip01(normalCdf(q * e));
    score[i] = lambda;
    weight[i] = lambda * (lambda + e);
  }
  return { score, weight };
};

/** Poisson: score X′(y − μ), information X′ diag(μ) X. */
const poissonDerivatives: Derivatives = (design, eta) => {
  const score = new Float64Array(design.rows);
  const weight = new Float64Array(design.rows);
  for (let i = 0; i < design.rows; i++) {
    const mu = Math.exp(eta[i] as number);
    score[i] = (design.y[i] as number) - mu;
    weight[i] = mu;
  }
  return { score, weight };
};

/**
 * statsmodels' discrete models: Newton from its start values until no parameter moves by more
 * than 1e-8 (at most 35 steps); the covariance is the inverse observed information at the end.
 */
function fitNewton(
  design: Design,
  derivatives: Derivatives,
  start: number[],
  /** For binary models: μ = g⁻¹(η), to detect perfect prediction. */
  inverseLink?: (eta: number) => number,
): Estimate {
  let params = start.slice();
  let eta = linearPredictor(design, params);
  let converged = false;
  for (let iteration = 0; iteration < NEWTON_MAX_ITERATIONS; iteration++) {
    const { score, weight } = derivatives(design, eta);
    const { xtwx } = weightedCross(design, weight);
    const step = multiply(invertOrFail(xtwx, "the information matrix"), crossVector(design, score));
    const next = params.map((b, j) => b + (step[j] as number));
    if (!next.every(Number.isFinite)) {
      throw new ModelFitError(
        "the fit diverged (separation, or a model that does not fit the data)",
      );
    }
    const moved = next.some((b, j) => Math.abs(b - (params[j] as number)) > NEWTON_PARAM_TOLERANCE);
    params = next;
    eta = linearPredictor(design, params);
    // statsmodels' BinaryModel checks for perfect prediction after every step.
    if (inverseLink && perfectFit(eta.map(inverseLink), design.y)) {
      throw new ModelFitError("perfect separation detected: results are not available");
    }
    if (!moved) {
      converged = true;
      break;
    }
  }
  if (!converged) {
    throw new ModelFitError(
      `the fit did not converge in ${NEWTON_MAX_ITERATIONS} Newton steps (separation, or a model that does not fit the data)`,
    );
  }
  const { weight } = derivatives(design, eta);
  const cov = invertOrFail(weightedCross(design, weight).xtwx, "the information matrix");
  return { params, cov };
}

function checkResponse(design: Design, call: ModelCall): void {
  const y = design.y;
  if (call.method === "logit" || call.method === "probit") {
    if (y.some((v) => v !== 0 && v !== 1)) {
      throw new ModelFitError(
        `the dependent variable "${call.dv}" must be 0 or 1 for ${call.method}()`,
      );
    }
  }
  if (call.family === "binomial" && y.some((v) => v < 0 || v > 1)) {
    throw new ModelFitError(
      `the dependent variable "${call.dv}" must lie between 0 and 1 for a binomial model`,
    );
  }
  if ((call.family === "poisson" || call.family === "negativebinomial") && y.some((v) => v < 0)) {
    throw new ModelFitError(
      `the dependent variable "${call.dv}" must not be negative for a ${call.family} model`,
    );
  }
}

function estimate(design: Design, call: ModelCall): Estimate {
  const p = design.names.length;
  switch (call.method) {
    case "ols":
      return fitOls(design);
    case "glm":
      return fitIrls(design, call.family, call.link);
    case "logit":
      return fitNewton(design, logitDerivatives, new Array<number>(p).fill(0), LINKS.logit.inverse);
    case "probit":
      return fitNewton(
        design,
        probitDerivatives,
        new Array<number>(p).fill(0),
        LINKS.probit.inverse,
      );
    case "poisson": {
      // statsmodels' Poisson start: 0.001 everywhere, the intercept at log(ȳ).
      const start = new Array<number>(p).fill(design.intercept ? 0.001 : 0);
      const intercept = design.names.indexOf("Intercept");
      if (intercept >= 0)
        start[intercept] = Math.log(design.y.reduce((a, b) => a + b, 0) / design.rows);
      return fitNewton(design, poissonDerivatives, start);
    }
    case "negativebinomial":
      throw new ModelFitError(
        "negativebinomial() (alpha estimated) is not available in the embedded engine; use glm(..., family = negativebinomial) (alpha = 1, as statsmodels' GLM family) or poisson()",
      );
  }
}

/** Fits the call on the frame; ModelFitError (one line) when it cannot. */
export function fitModel(frame: Frame, call: ModelCall): FittedModel {
  const design = buildDesign(frame, call);
  checkResponse(design, call);
  checkDesign(design);
  const { params, cov, tDf } = estimate(design, call);
  const out: FittedModel = {
    family: call.family,
    link: call.link,
    dv: call.dv,
    terms: design.names,
    params: {},
    stdErrors: {},
    pValues: {},
    observations: design.rows,
  };
  design.names.forEach((name, j) => {
    const beta = params[j] as number;
    const se = Math.sqrt((cov[j] as number[])[j] as number);
    const statistic = beta / se;
    out.params[name] = beta;
    out.stdErrors[name] = se;
    out.pValues[name] = tDf === undefined ? normalTwoSidedP(statistic) : tTwoSidedP(statistic, tDf);
  });
  return out;
}

/** Parses and fits model code; every failure is an error outcome of one line, never a throw. */
export function fitModelCode(frame: Frame, code: string): ModelOutcome {
  try {
    return { ok: true, model: fitModel(frame, parseModelCall(code)) };
  } catch (error) {
    if (error instanceof ModelFormulaError || error instanceof ModelFitError) {
      return { ok: false, error: error.message };
    }
    // Anything else is a bug here, but an agent's run should see one line, not a crash.
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `model fit failed unexpectedly: ${message.split("\n")[0]}` };
  }
}
