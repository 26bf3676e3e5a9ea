/**
 * BLADE throughput (issue 14): column hashing in cells per second, and the matching of one
 * submission's transforms against a ground truth of 100 transform specs. Each figure prints as
 * one JSON line with its absolute value and its ratio to a baseline measured in the same run.
 *
 * Hashing: one frame of HASH_ROWS rows per column type (float64 with NaNs, int64, object text of
 * low and of high cardinality, object date strings "YYYY-MM-DD" mixed with "", bool), and one
 * frame holding all six columns. hashFrame computes each column's value hash and categorical
 * hash (BLADE's two passes: cell texts by dtype, Python float rounding and repr, pandas' datetime
 * attempt on object columns, factorisation below the unique ratio).
 * - blade_hash_cells_per_s_<type> (and _all): cells per second through hashFrame. Baseline: a
 *   plain pass over the same values that builds a joined text of about the same size without
 *   BLADE's preparation (values.map(String).join(":"), then SHA-256 of it with node:crypto), so
 *   the ratio (hashed / plain) is the share of plain-pass speed that hashing keeps. For
 *   information, `value_pass_cells_per_s`: the value hash alone (prepareColumn + SHA-256).
 *   After WARMUP untimed rounds, the median of REPEATS rounds; each round times hashFrame, the
 *   plain pass and the value pass back to back.
 *
 * Matching: a synthetic dataset of MATCH_ROWS rows, five original columns (id, a, b, c, g; a has
 * NaNs) and 100 transform specs arranged as expert ground truth is: two filters in a row, then
 * eight chains of derives, each chained on the chain's earlier derives (one or two inputs), with
 * an in-place impute, a filter in the middle of one chain, and alternatives: four chain heads
 * with two branches (after both filters, or after one, or on the data as read) and two mid-chain
 * specs with two branches (skip a step or not), so that the ground truth has 15 paths. Every spec carries pandas lines of a few
 * fixed forms; a stand-in runtime interprets them (regular expressions, in TypeScript) on a
 * fresh copy of the data per cumulative script, and the real hashFrame hashes every frame. The
 * agent's submission is ten units: the two filters and the first derives of one chain verbatim,
 * one of them under another name, and derives and an impute of its own.
 * - blade_gt_states_ms: groundTruthTransforms once (paths, scripts, runs, hashing, expansion,
 *   column graphs, graph keys and groups); baseline: the time spent inside the stand-in runtime
 *   and hashFrame during that build, so the ratio is the whole build over run + hash.
 *   Median of GT_REPEATS builds after one warm-up build; `hash_frame_calls` and
 *   `distinct_frames_hashed` say how often a frame was hashed again (once per path it is on).
 * - blade_agent_states_ms: the same for agentTransforms on the ten units.
 * - blade_match_ms: matchTransforms (the matching of one submission: value and categorical
 *   hashes with ancestor marking, graph keys with isomorphism tests, the per-spec details) on the
 *   states built above. Baseline: the minimum work of value matching, a hash join of the same two
 *   sides' column value hashes (every column state's value hash of each side into a Set, then the
 *   intersection), so the ratio is what ancestor marking and graph isomorphism cost over it.
 *   Median of REPEATS samples, each the mean of enough calls to last about SAMPLE_MS.
 *
 * Deterministic data (fixed seeds); only the timings vary between runs.
 */
import { createHash } from "node:crypto";
// The compiled library (npm run bench builds it first).
import { hashFrame, prepareColumn, valueHashOfTexts } from "../dist/env/blade/column-hash.js";
import type { Cell, Column, ColumnHashes, Dtype, Frame } from "../dist/env/blade/frame.js";
import type { ScriptOutcome } from "../dist/env/blade/runtime/types.js";
import {
  type BladeDataset,
  ROOT_SPEC_ID,
  rootTransformSpec,
  type TransformSpec,
  type TransformUnit,
  type TransformVerb,
} from "../dist/env/blade/specs.js";
import {
  agentTransforms,
  groundTruthTransforms,
  type TransformStates,
} from "../dist/env/blade/transform-graph.js";
import { matchTransforms } from "../dist/env/blade/transform-match.js";

process.setSourceMapsEnabled(false);

/** Rows of each hashing frame. */
const HASH_ROWS = Number(process.env.BENCH_BLADE_HASH_ROWS ?? 100_000);
/** Rows of the matching dataset. */
const MATCH_ROWS = Number(process.env.BENCH_BLADE_MATCH_ROWS ?? 1_000);
const WARMUP = 2;
const REPEATS = 7;
const GT_REPEATS = 3;
/** Each matching sample runs enough calls to last about this long. */
const SAMPLE_MS = 50;
const SEED = 14;

const line = (figure: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(figure)}\n`);
const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const benchStarted = performance.now();
/** Results are folded in here so that no timed call's work can be dropped. */
let sink = 0;

/** mulberry32: a small deterministic generator in [0, 1). */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- Hashing ----

function hashingColumns(rows: number): Column[] {
  const random = createRandom(SEED);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
  const categories = ["north", "south", "east", "west", "centre"];
  const pad = (n: number) => String(n).padStart(2, "0");
  const day0 = Date.UTC(2000, 0, 1);
  const column = (name: string, dtype: Dtype, value: (i: number) => Cell): Column => ({
    name,
    dtype,
    values: Array.from({ length: rows }, (_, i) => value(i)),
  });
  return [
    column("float64", "float64", () =>
      random() < 0.05 ? Number.NaN : (random() - 0.5) * 2000 * random(),
    ),
    column("int64", "int64", () => Math.floor(random() * 1_000_000) - 500_000),
    column("object_low", "object", () => (random() < 0.02 ? null : pick(categories))),
    column(
      "object_high",
      "object",
      (i) => `user-${i}-${Math.floor(random() * 0xffffffff).toString(16)}`,
    ),
    column("object_date", "object", () => {
      if (random() < 0.1) return "";
      const d = new Date(day0 + Math.floor(random() * 30 * 365) * 86_400_000);
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    }),
    column("bool", "bool", () => random() < 0.5),
  ];
}

/** The baseline: the same values as text, joined with ":" and hashed, with no preparation. */
function plainPass(frame: Frame): string[] {
  return frame.columns.map((column) =>
    createHash("sha256").update(column.values.map(String).join(":"), "utf8").digest("hex"),
  );
}

function valuePass(frame: Frame): string[] {
  return frame.columns.map((column) => valueHashOfTexts(prepareColumn(column)));
}

function timeMs(call: () => unknown[]): number {
  const started = performance.now();
  sink += call().length;
  return performance.now() - started;
}

function measureHashing(): void {
  const columns = hashingColumns(HASH_ROWS);
  const frames: [string, Frame][] = [
    ...columns.map((column): [string, Frame] => [
      column.name,
      { columns: [column], rowCount: HASH_ROWS },
    ]),
    ["all", { columns, rowCount: HASH_ROWS }],
  ];
  for (const [type, frame] of frames) {
    const hashed: number[] = [];
    const plain: number[] = [];
    const value: number[] = [];
    for (let round = 0; round < WARMUP + REPEATS; round++) {
      const h = timeMs(() => hashFrame(frame));
      const p = timeMs(() => plainPass(frame));
      const v = timeMs(() => valuePass(frame));
      if (round < WARMUP) continue;
      hashed.push(h);
      plain.push(p);
      value.push(v);
    }
    const cells = frame.columns.length * frame.rowCount;
    const rate = (ms: number) => cells / (ms / 1000);
    const hashedRate = rate(median(hashed));
    const plainRate = rate(median(plain));
    line({
      name: `blade_hash_cells_per_s_${type}`,
      value: Math.round(hashedRate),
      unit: `cells/s through hashFrame (value + categorical hash), ${frame.columns.length} × ${frame.rowCount} cells`,
      ratio: round(hashedRate / plainRate, 3),
      baseline: Math.round(plainRate),
      baseline_unit: 'cells/s, plain pass: values.map(String).join(":") + SHA-256',
      hashed_ms: round(median(hashed), 2),
      plain_ms: round(median(plain), 2),
      value_pass_cells_per_s: Math.round(rate(median(value))),
      dtypes: frame.columns.map((c) => c.dtype),
    });
  }
}

// ---- Matching: the stand-in runtime ----

const NUMBER = "(-?\\d+(?:\\.\\d+)?)";
const COL = "df\\['(\\w+)'\\]";
const FILTER = new RegExp(`^df = df\\[${COL} (>|<) ${NUMBER}\\]$`);
const TIMES = new RegExp(`^${COL} = ${COL} \\* ${NUMBER}$`);
const MINUS = new RegExp(`^${COL} = ${COL} - ${NUMBER}$`);
const PLUS = new RegExp(`^${COL} = ${COL} \\+ ${COL}$`);
const FILLNA = new RegExp(`^${COL} = ${COL}\\.fillna\\(${NUMBER}\\)$`);

function columnOf(frame: Frame, name: string): Column {
  const column = frame.columns.find((c) => c.name === name);
  if (!column) throw new Error(`KeyError: '${name}'`);
  return column;
}

const num = (v: Cell) => (typeof v === "number" ? v : Number.NaN);

/** `df[name] = values`: replaced in place, or appended. */
function setColumn(frame: Frame, name: string, dtype: Dtype, values: Cell[]): Frame {
  const column: Column = { name, dtype, values };
  const at = frame.columns.findIndex((c) => c.name === name);
  const columns = [...frame.columns];
  if (at >= 0) columns[at] = column;
  else columns.push(column);
  return { columns, rowCount: frame.rowCount };
}

/** One generated pandas line applied to the frame (a new frame; the input is left alone). */
function applyLine(frame: Frame, text: string): Frame {
  let m = FILTER.exec(text);
  if (m) {
    const [, col, op, k] = m as unknown as [string, string, string, string];
    const bound = Number(k);
    const keep = columnOf(frame, col).values.map((v) =>
      op === ">" ? num(v) > bound : num(v) < bound,
    );
    const columns = frame.columns.map((c) => ({
      ...c,
      values: c.values.filter((_, i) => keep[i]),
    }));
    return { columns, rowCount: keep.filter(Boolean).length };
  }
  m = TIMES.exec(text) ?? MINUS.exec(text);
  if (m) {
    const [, out, col, k] = m as unknown as [string, string, string, string];
    const input = columnOf(frame, col);
    const by = Number(k);
    const times = text.includes(" * ");
    const values = input.values.map((v) => (times ? num(v) * by : num(v) - by));
    const dtype = input.dtype === "int64" && Number.isInteger(by) ? "int64" : "float64";
    return setColumn(frame, out, dtype, values);
  }
  m = PLUS.exec(text);
  if (m) {
    const [, out, x, y] = m as unknown as [string, string, string, string];
    const [cx, cy] = [columnOf(frame, x), columnOf(frame, y)];
    const values = cx.values.map((v, i) => num(v) + num(cy.values[i] as Cell));
    const dtype = cx.dtype === "int64" && cy.dtype === "int64" ? "int64" : "float64";
    return setColumn(frame, out, dtype, values);
  }
  m = FILLNA.exec(text);
  if (m) {
    const [, out, col, k] = m as unknown as [string, string, string, string];
    const input = columnOf(frame, col);
    const fill = Number(k);
    const values = input.values.map((v) => (Number.isNaN(num(v)) ? fill : v));
    return setColumn(frame, out, input.dtype, values);
  }
  throw new Error(`SyntaxError: the stand-in runtime cannot run ${JSON.stringify(text)}`);
}

function matchingData(rows: number): Frame {
  const random = createRandom(SEED + 1);
  const column = (name: string, dtype: Dtype, value: (i: number) => Cell): Column => ({
    name,
    dtype,
    values: Array.from({ length: rows }, (_, i) => value(i)),
  });
  const groups = ["g1", "g2", "g3", "g4"];
  return {
    rowCount: rows,
    columns: [
      column("id", "int64", (i) => i + 1),
      column("a", "float64", () => (random() < 0.08 ? Number.NaN : round((random() - 0.5) * 2000))),
      column("b", "float64", () => round(random() * 1000, 2)),
      column("c", "int64", () => Math.floor(random() * 100)),
      column("g", "object", () => groups[Math.floor(random() * groups.length)] as string),
    ],
  };
}

/** Time spent in the stand-in runtime or in hashFrame during one build. */
interface Spent {
  ms: number;
}

interface HashSpent extends Spent {
  calls: number;
  /** The distinct frames (runtime outcomes) among the calls. */
  frames: Set<Frame>;
}

/** A `run` that interprets each script's lines on a fresh copy of the data; timed into `spent`. */
function standInRun(data: Frame, spent: Spent) {
  return async (scripts: readonly string[]): Promise<ScriptOutcome[]> => {
    const started = performance.now();
    const outcomes = scripts.map((script): ScriptOutcome => {
      let frame = data;
      try {
        for (const text of script.split("\n")) {
          if (text.trim() !== "") frame = applyLine(frame, text.trim());
        }
      } catch (error) {
        return { ok: false, error: (error as Error).message };
      }
      return { ok: true, kind: "frame", frame };
    });
    spent.ms += performance.now() - started;
    return outcomes;
  };
}

/** A hashFrame that adds its time, its calls and the distinct frames it hashed into `spent`. */
function timedHash(spent: HashSpent) {
  return (frame: Frame): ColumnHashes[] => {
    const started = performance.now();
    const hashes = hashFrame(frame);
    spent.ms += performance.now() - started;
    spent.calls++;
    spent.frames.add(frame);
    return hashes;
  };
}

// ---- Matching: the ground truth and the submission ----

const ORIGINAL = ["id", "a", "b", "c", "g"];
const specId = (name: string) => createHash("md5").update(name).digest("hex");

function groundTruth(): TransformSpec[] {
  const random = createRandom(SEED + 2);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T;
  const specs: TransformSpec[] = [rootTransformSpec()];
  const add = (
    name: string,
    verb: TransformVerb,
    code: string,
    mapping: [string[], string][],
    branches: string[][],
  ): string => {
    const id = specId(name);
    specs.push({
      specId: id,
      specName: name,
      specification: `${verb} ${name}`,
      verb,
      code,
      rationale: "",
      mapping,
      branches: branches.map((dependencies) => ({ dependencies, condition: "" })),
      annotator: "bench",
    });
    return id;
  };
  const f1 = add(
    "drop_low_a",
    "filter",
    "df = df[df['a'] > -800]",
    [[["a"], ""]],
    [[ROOT_SPEC_ID]],
  );
  const f2 = add("drop_high_b", "filter", "df = df[df['b'] < 900]", [[["b"], ""]], [[f1]]);

  /** Per chain: the head's alternative parents, where a step has two branches, its length. */
  const chains: { heads: string[][]; alternativeAt?: number; length: number }[] = [
    { heads: [[f2]], length: 13 },
    { heads: [[f2], [ROOT_SPEC_ID]], length: 13 },
    { heads: [[f2], [f1]], alternativeAt: 6, length: 12 },
    { heads: [[f1]], length: 12 },
    { heads: [[f2], [ROOT_SPEC_ID]], length: 12 },
    { heads: [[f2]], length: 12 },
    { heads: [[f2]], alternativeAt: 5, length: 12 },
    { heads: [[f2], [f1]], length: 12 },
  ];
  chains.forEach((chain, k) => {
    const ids: string[] = [];
    /** Derived columns of this chain every later step may read (on every path). */
    const readable: string[] = [];
    let last = "";
    for (let j = 0; j < chain.length; j++) {
      const name = `k${k}_${j}`;
      let branches = j === 0 ? chain.heads : [[ids[j - 1] as string]];
      let from = j === 0 ? pick(["a", "b", "c", "id"]) : last;
      if (j === chain.alternativeAt) {
        // Two branches: after the previous step, or skipping it; so read only what both hold.
        branches = [[ids[j - 1] as string], [ids[j - 2] as string]];
        readable.splice(readable.indexOf(last), 1);
        from = readable[readable.length - 1] as string;
      }
      let id: string;
      if (k === 5 && j === 0) {
        // Mapped to "a" itself: an output of "" under a filter parent fails in expansion.
        id = add(
          `impute_a_${k}`,
          "impute",
          "df['a'] = df['a'].fillna(0)",
          [[["a"], "a"]],
          branches,
        );
        last = "a";
      } else if (k === 3 && j === 6) {
        const code = `df = df[df['${last}'] > 0]`;
        id = add(`keep_positive_${k}`, "filter", code, [[[last], ""]], branches);
      } else {
        const op = random();
        let code: string;
        let inputs: string[];
        if (op < 0.45) {
          code = `df['${name}'] = df['${from}'] * ${pick([2, 3, 0.5, 1.5])}`;
          inputs = [from];
        } else if (op < 0.7) {
          code = `df['${name}'] = df['${from}'] - ${1 + Math.floor(random() * 100)}`;
          inputs = [from];
        } else {
          const other = readable.length > 1 ? pick(readable.slice(0, -1)) : pick(["b", "c"]);
          code = `df['${name}'] = df['${from}'] + df['${other}']`;
          inputs = [from, other];
        }
        id = add(name, "derive", code, [[inputs, name]], branches);
        readable.push(name);
        last = name;
      }
      ids.push(id);
    }
  });
  return specs;
}

function submission(gt: TransformSpec[]): TransformUnit[] {
  const byName = new Map(gt.map((spec) => [spec.specName, spec]));
  const unit = (
    verb: TransformUnit["verb"],
    code: string,
    mapping: [string[], string][],
  ): TransformUnit => ({ verb, code, mapping, groupbyCols: [] });
  const copy = (name: string, rename?: string): TransformUnit => {
    const spec = byName.get(name) as TransformSpec;
    const [inputs, output] = spec.mapping[0] as [string[], string];
    const out = rename ?? output;
    return unit(
      spec.verb as TransformUnit["verb"],
      spec.code.replace(`df['${output}'] =`, `df['${out}'] =`),
      [[inputs, out]],
    );
  };
  return [
    unit("filter", (byName.get("drop_low_a") as TransformSpec).code, [[["a"], "ALL"]]),
    unit("filter", (byName.get("drop_high_b") as TransformSpec).code, [[["b"], "ALL"]]),
    copy("k0_0"),
    copy("k0_1"),
    copy("k0_2"),
    copy("k0_3"),
    // The same values under another name: a value match whatever the name.
    copy("k0_4", "ratio_x"),
    unit("derive", "df['ratio_y'] = df['ratio_x'] * 7", [[["ratio_x"], "ratio_y"]]),
    unit("impute", "df['b'] = df['b'].fillna(0)", [[["b"], "b"]]),
    unit("derive", "df['score'] = df['ratio_y'] + df['c']", [[["ratio_y", "c"], "score"]]),
  ];
}

async function measureMatching(): Promise<void> {
  const data = matchingData(MATCH_ROWS);
  const transforms = groundTruth();
  const dataset: BladeDataset = {
    name: "bench",
    dir: "",
    dataPath: "",
    questions: ["Does a raise b?"],
    description: "synthetic",
    fields: [],
    fieldNames: ORIGINAL,
    rowCount: MATCH_ROWS,
    groundTruth: { transforms, models: [], cvars: [] },
  };
  const units = submission(transforms);

  const buildTimes = async (
    build: (
      run: ReturnType<typeof standInRun>,
      hash: ReturnType<typeof timedHash>,
    ) => Promise<unknown>,
  ) => {
    type Sample = { total: number; run: number; hash: number; calls: number; frames: number };
    const samples: Sample[] = [];
    for (let r = 0; r < 1 + GT_REPEATS; r++) {
      const run: Spent = { ms: 0 };
      const hash: HashSpent = { ms: 0, calls: 0, frames: new Set() };
      const started = performance.now();
      await build(standInRun(data, run), timedHash(hash));
      const total = performance.now() - started;
      const [calls, frames] = [hash.calls, hash.frames.size];
      if (r > 0) samples.push({ total, run: run.ms, hash: hash.ms, calls, frames });
    }
    return [...samples].sort((x, y) => x.total - y.total)[Math.floor(samples.length / 2)] as Sample;
  };

  let gt: TransformStates | undefined;
  const gtTime = await buildTimes(async (run, hash) => {
    gt = await groundTruthTransforms(dataset, run, hash);
  });
  let agent: TransformStates | undefined;
  const agentTime = await buildTimes(async (run, hash) => {
    const result = await agentTransforms(units, run, hash, ORIGINAL);
    if (!result.ok) throw new Error(`blade bench: the submission failed: ${result.error}`);
    agent = result.states;
  });
  const gtStates = gt as TransformStates;
  const agentStates = agent as TransformStates;
  const columnStates = (side: TransformStates) =>
    side.paths.reduce((n, path) => n + path.states.size, 0);

  line({
    name: "blade_match_setup",
    rows: MATCH_ROWS,
    original_columns: ORIGINAL,
    gt_specs: transforms.length - 1,
    gt_verbs: Object.fromEntries(
      ["filter", "derive", "impute"].map((v) => [v, transforms.filter((t) => t.verb === v).length]),
    ),
    gt_specs_with_two_branches: transforms.filter((t) => t.branches.length > 1).length,
    gt_paths: gtStates.paths.length,
    gt_expanded_specs: gtStates.expanded.size - 1,
    gt_column_states: columnStates(gtStates),
    gt_graph_groups: gtStates.graphGroups.size,
    agent_units: units.length,
    agent_expanded_specs: agentStates.expanded.size - 1,
    agent_column_states: columnStates(agentStates),
  });
  for (const [name, what, time] of [
    ["blade_gt_states_ms", "groundTruthTransforms, 100 specs", gtTime],
    ["blade_agent_states_ms", `agentTransforms, ${units.length} units`, agentTime],
  ] as const) {
    const inside = time.run + time.hash;
    line({
      name,
      value: round(time.total, 1),
      unit: `ms, ${what} (${MATCH_ROWS} rows; median of ${GT_REPEATS})`,
      ratio: round(time.total / inside, 3),
      baseline: round(inside, 1),
      baseline_unit: "ms inside the stand-in runtime + hashFrame during the same build",
      run_ms: round(time.run, 1),
      hash_ms: round(time.hash, 1),
      graph_ms: round(time.total - inside, 1),
      hash_frame_calls: time.calls,
      distinct_frames_hashed: time.frames,
    });
  }

  const match = () => matchTransforms(gtStates, agentStates);
  const hashJoin = () => {
    const collect = (side: TransformStates) => {
      const hashes = new Set<string>();
      for (const path of side.paths)
        for (const state of path.states.values()) hashes.add(state.value);
      return hashes;
    };
    const [left, right] = [collect(gtStates), collect(agentStates)];
    const [small, large] = left.size <= right.size ? [left, right] : [right, left];
    const shared: string[] = [];
    for (const hash of small) if (large.has(hash)) shared.push(hash);
    return shared;
  };
  /** Per-call ms: the median over REPEATS samples of a batch lasting about SAMPLE_MS. */
  const perCall = (call: () => unknown) => {
    for (let i = 0; i < 3; i++) call(); // warm-up
    const once = performance.now();
    for (let i = 0; i < 3; i++) call();
    const estimate = Math.max((performance.now() - once) / 3, 1e-4);
    const batch = Math.max(1, Math.round(SAMPLE_MS / estimate));
    const samples: number[] = [];
    for (let r = 0; r < REPEATS; r++) {
      const started = performance.now();
      for (let i = 0; i < batch; i++) sink += call() ? 1 : 0;
      samples.push((performance.now() - started) / batch);
    }
    return { ms: median(samples), batch };
  };
  const matched = match();
  const shared = hashJoin();
  const matchMs = perCall(match);
  const joinMs = perCall(hashJoin);
  line({
    name: "blade_match_ms",
    value: round(matchMs.ms, 3),
    unit: `ms per matchTransforms (one submission: ${units.length} units against ${transforms.length - 1} specs, ${gtStates.paths.length} paths)`,
    ratio: round(matchMs.ms / joinMs.ms, 2),
    baseline: round(joinMs.ms, 4),
    baseline_unit: "ms per hash join of both sides' column value hashes (Set each, intersect)",
    calls_per_sample: matchMs.batch,
    shared_value_hashes: shared.length,
    matched_value_gt: matched.matchedValueGt.size,
    matched_graph_gt: matched.matchedGraphGt.size,
    matched_value_agent: matched.matchedValueAgent.length,
    matched_graph_agent: matched.matchedGraphAgent.length,
    gt_count: matched.gtCount,
    agent_count: matched.agentCount,
    bench_s: round((performance.now() - benchStarted) / 1000, 1),
  });
}

measureHashing();
await measureMatching();
if (Number.isNaN(sink)) process.stdout.write("\n");
