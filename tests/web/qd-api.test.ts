/**
 * The quality-diversity API over CycleQD runs that the library's stored loop wrote
 * (runStoredCycle: the experts, then generations whose records go to QdStore, as `clade qd`
 * writes them), on the synthetic three-task vector genome of the loop's own tests: the list,
 * newest first and paged; a run's geometry and series; the archives at any generation, cell for
 * cell what `clade archive --json` prints; an elite's scores, origin and genome file; a running
 * run's last generation advancing; bad input as 400/404 and one line; the bundle's addresses.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveCommand } from "../../src/cli/commands/archive.js";
import type { Genome, GenomeStore } from "../../src/improve/qd/cycle.js";
import { openDatabase } from "../../src/store/database.js";
import { QdStore } from "../../src/store/qd-log.js";
import {
  bundledGenerations,
  type QdArchivesResponse,
  type QdEliteResponse,
  type QdListResponse,
  type QdRunResponse,
  qdApi,
} from "../../src/web/api/qd.js";
import type { ViewServer } from "../../src/web/server.js";
import { EXPERTS, type Vec, vectorGenome } from "../improve/qd/vector-genome.js";
import {
  QD_BINS as BINS,
  continueQdRun,
  storeQdRun,
  QD_TASKS as TASKS,
} from "./fixtures/qd-runs.js";
import { api, scratchDir, startViewer } from "./support.js";

const GENERATIONS = 30;
/** The 12th evaluation throws: generation 9's child errors and is dropped. */
const FAILING_EVALUATION = 12;

/** The vector genome with sha256 ids (usable file names), failing one evaluation. */
function genome(): Genome<Vec> {
  let evaluations = 0;
  const base = vectorGenome(() => {
    if (++evaluations === FAILING_EVALUATION) throw new Error("scorer crashed");
  });
  return { ...base, id: (x) => createHash("sha256").update(base.id(x)).digest("hex") };
}

/** Kept elites as JSON files where `clade qd` keeps them by default: beside the store. */
function fileStore(db: string, runId: string): GenomeStore<Vec> {
  const dir = join(dirname(db), "qd", runId, "elites");
  return {
    put(id, x) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${id}.json`), JSON.stringify({ vector: x }));
    },
    get(id) {
      const file = join(dir, `${id}.json`);
      return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")).vector as Vec) : undefined;
    },
  };
}

/** A run as `clade qd` stores it: its configuration, its generations, its status. */
async function storeRun(
  store: QdStore,
  db: string,
  id: string,
  generations: number,
  status: "complete" | "running" = "complete",
): Promise<void> {
  await storeQdRun(store, id, { genome: genome(), genomes: fileStore(db, id), generations });
  if (status === "complete") store.setStatus(id, "complete");
}

/** What `clade archive RUN --json` prints. */
function cliArchives(db: string, runId: string, generation?: number) {
  let out = "";
  const code = archiveCommand(
    runId,
    { db, json: true, ...(generation === undefined ? {} : { generation: String(generation) }) },
    { stdout: (text) => (out += text), stderr: () => undefined, interactive: false },
  );
  expect(code).toBe(0);
  return JSON.parse(out) as {
    generation: number;
    archives: { task: number; stats: unknown; cells: { cell: number[]; id: string }[] }[];
  };
}

describe("the quality-diversity API", () => {
  const scratch = scratchDir("qd-api");
  const db = join(scratch.dir, "store.db");
  let store: QdStore;
  let viewer: ViewServer;

  beforeAll(async () => {
    store = QdStore.open(db);
    await storeRun(store, db, "q1", GENERATIONS);
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later created_at
    await storeRun(store, db, "q2", 4, "running");
    store.beginRun("empty", { kind: "policy", tasks: [], ranges: [], bins: 15 });
    viewer = await startViewer(db);
  }, 20_000);

  afterAll(async () => {
    await viewer?.close();
    store?.close();
    scratch.remove();
  });

  it("lists the runs newest first with how far each got, page by page", async () => {
    const all = await api<QdListResponse>(viewer, "/qd");
    expect(all.status).toBe(200);
    expect(all.body.items.map((r) => r.id)).toEqual(["empty", "q2", "q1"]);
    const q1 = all.body.items.find((r) => r.id === "q1");
    const last = store.generations("q1").at(-1);
    expect(q1).toMatchObject({
      kind: "vector",
      tasks: TASKS,
      variant: "paper",
      status: "complete",
      generations: GENERATIONS + 1,
      lastGeneration: GENERATIONS,
      coverage: last?.coverage,
      qdScore: last?.qdScore,
      erroredGenerations: 1,
    });
    expect(all.body.items.find((r) => r.id === "empty")).toMatchObject({
      generations: 0,
      lastGeneration: null,
      coverage: null,
    });
    const first = await api<QdListResponse>(viewer, "/qd?limit=2");
    expect(first.body.items.map((r) => r.id)).toEqual(["empty", "q2"]);
    const cursor = encodeURIComponent(first.body.nextCursor as string);
    const second = await api<QdListResponse>(viewer, `/qd?limit=2&cursor=${cursor}`);
    expect(second.body).toMatchObject({ items: [{ id: "q1" }], nextCursor: null });
  });

  it("gives a run's archive geometry, its curves per generation and its bundled generations", async () => {
    const { status, body } = await api<QdRunResponse>(viewer, "/qd/q1");
    expect(status).toBe(200);
    expect(body.geometry?.tasks).toEqual(TASKS);
    expect(body.geometry?.archives.map((a) => [a.label, a.rowLabel, a.columnLabel])).toEqual([
      ["maze", "textcraft", "gridworld"],
      ["textcraft", "maze", "gridworld"],
      ["gridworld", "maze", "textcraft"],
    ]);
    expect(body.geometry?.archives[0]).toMatchObject({ rows: BINS, columns: BINS, folded: [] });
    const rows = store.generations("q1");
    expect(body.series.generation).toEqual(rows.map((r) => r.generation));
    expect(body.series.coverage).toEqual(rows.map((r) => r.coverage));
    expect(body.series.qdScore).toEqual(rows.map((r) => r.qdScore));
    expect(body.series.qualityTask).toEqual(rows.map((r) => r.qualityTask));
    expect(body.series.errored.filter(Boolean)).toHaveLength(1);
    expect(body.bundledGenerations).toEqual(rows.map((r) => r.generation));
    // A run whose configuration has no usable tasks still has a page, saying so.
    const empty = await api<QdRunResponse>(viewer, "/qd/empty");
    expect(empty.body).toMatchObject({ geometry: null, bundledGenerations: [] });
    expect(empty.body.configError).toMatch(/tasks, ranges and bins/);
  });

  it("rebuilds the archives at any generation, cell for cell as clade archive --json", async () => {
    for (const generation of [0, 9, GENERATIONS]) {
      const { status, body } = await api<QdArchivesResponse>(
        viewer,
        `/qd/q1/archives?generation=${generation}`,
      );
      expect(status).toBe(200);
      expect(body).toMatchObject({ runId: "q1", generation, lastGeneration: GENERATIONS });
      const cli = cliArchives(db, "q1", generation);
      expect(body.archives.map((a) => a.stats)).toEqual(cli.archives.map((a) => a.stats));
      body.archives.forEach((archive, k) => {
        const expected = (cli.archives[k]?.cells ?? []).map(({ cell, id }) => ({ cell, id }));
        expect(archive.cells.map(({ cell, id }) => ({ cell, id }))).toEqual(expected);
        for (const cell of archive.cells) {
          expect([cell.row, cell.column]).toEqual(cell.cell);
          expect(cell.quality).toBe(cell.scores[k]);
        }
      });
    }
    const atStart = await api<QdArchivesResponse>(viewer, "/qd/q1/archives?generation=0");
    const atEnd = await api<QdArchivesResponse>(viewer, "/qd/q1/archives");
    expect(atEnd.body.generation).toBe(GENERATIONS);
    const filled = (r: QdArchivesResponse) => r.archives.reduce((n, a) => n + a.cells.length, 0);
    expect(filled(atStart.body)).toBeLessThanOrEqual(EXPERTS.length * 3);
    expect(filled(atEnd.body)).toBeGreaterThan(filled(atStart.body));
    // Each elite says how it was made: an expert, or a child of its generation's parents.
    const records = store.generations("q1");
    for (const cell of atEnd.body.archives.flatMap((a) => a.cells)) {
      if (cell.generation === 0) {
        expect(cell.origin).toMatchObject({ kind: "expert" });
      } else {
        const record = records[cell.generation]?.record as { parents: string[] };
        expect(cell.origin).toEqual({
          kind: "child",
          qualityTask: cell.generation % 3,
          parents: record.parents,
        });
      }
    }
  });

  it("opens an elite: its scores and bins, what each archive did with it, its genome file", async () => {
    const { body: archives } = await api<QdArchivesResponse>(viewer, "/qd/q1/archives");
    const k = archives.archives.findIndex((a) => a.cells.some((c) => c.generation > 0));
    const child = archives.archives[k]?.cells.find((c) => c.generation > 0);
    expect(child).toBeDefined();
    const id = child?.id as string;
    const { status, body } = await api<QdEliteResponse>(viewer, `/qd/q1/elites/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ runId: "q1", generation: GENERATIONS, id, origin: child?.origin });
    expect(body.scores.map((s) => s.score)).toEqual(child?.scores);
    expect(body.scores.map((s) => s.bin)).toEqual(child?.bins);
    expect(body.scores.map((s) => s.label)).toEqual(TASKS);
    // Its bins on the other tasks are its cell in the archive it was found in.
    expect(body.scores.filter((s) => s.task !== k).map((s) => s.bin)).toEqual(child?.cell);
    const record = store.generations("q1")[body.bornAt]?.record as {
      child: { id: string; results: { status: string; value: number }[] };
    };
    expect(record.child.id).toBe(id);
    expect(body.atBirth.map((r) => r.status)).toEqual(record.child.results.map((r) => r.status));
    expect(body.placements.map((p) => p.task)).toContain(k);
    expect(body.genome.file).toBe(join(scratch.dir, "qd", "q1", "elites", `${id}.json`));
    expect(body.genome.config).toEqual({ vector: expect.any(Array) });
  });

  it("follows a running run: the default generation is the newest stored", async () => {
    const before = await api<QdArchivesResponse>(viewer, "/qd/q2/archives");
    expect(before.body.generation).toBe(4);
    await continueQdRun(store, "q2", {
      genome: genome(),
      genomes: fileStore(db, "q2"),
      generations: 6,
    });
    const after = await api<QdArchivesResponse>(viewer, "/qd/q2/archives");
    expect(after.body).toMatchObject({ generation: 6, lastGeneration: 6 });
    const run = await api<QdRunResponse>(viewer, "/qd/q2");
    expect(run.body.run.lastGeneration).toBe(6);
    expect(run.body.series.generation).toHaveLength(7);
  });

  it("answers bad input with 400 and unknown things with 404, in one line", async () => {
    const cases: [string, number, RegExp][] = [
      ["/qd?limit=0", 400, /^query\.limit/],
      ["/qd?cursor=nope", 400, /not a cursor/],
      ["/qd/q1/archives?generation=-1", 400, /^query\.generation/],
      ["/qd/q1/archives?generation=two", 400, /^query\.generation/],
      ["/qd/nope", 404, /no CycleQD run "nope"/],
      ["/qd/nope/archives", 404, /no CycleQD run "nope"/],
      [`/qd/q1/archives?generation=${GENERATIONS + 1}`, 404, /has generations 0-30/],
      ["/qd/empty/archives", 409, /no tasks, ranges and bins/],
      ["/qd/q1/elites/nobody", 404, /no elite "nobody"/],
    ];
    for (const [address, status, message] of cases) {
      const response = await api<{ error: string }>(viewer, address);
      expect(response.status, address).toBe(status);
      expect(response.body.error, address).toMatch(message);
      expect(response.body.error.split("\n"), address).toHaveLength(1);
    }
  });

  it("reports a record that does not replay as a conflict, not a crash", async () => {
    const raw = openDatabase(db);
    raw
      .prepare(
        `UPDATE qd_generations SET record = json_set(record, '$.child.results[0].status',
           CASE json_extract(record, '$.child.results[0].status') WHEN 'new' THEN 'not_added' ELSE 'new' END)
         WHERE run_id = 'q2' AND generation = 5`,
      )
      .run();
    raw.close();
    const broken = await api<{ error: string }>(viewer, "/qd/q2/archives?generation=5");
    expect(broken.status).toBe(409);
    expect(broken.body.error).toMatch(/generation 5 does not replay/);
  });

  it("bundles the list, each chosen run's page and its archives at the bundled generations", () => {
    expect(bundledGenerations(-1)).toEqual([]);
    expect(bundledGenerations(3)).toEqual([0, 1, 2, 3]);
    const long = bundledGenerations(1200);
    expect(long).toHaveLength(51);
    expect([long[0], long[1], long.at(-1)]).toEqual([0, 24, 1200]);
    const raw = openDatabase(db, { readonly: true });
    try {
      const addresses = qdApi.bundle?.(raw, new Set(["q1", "some-other-run"])) ?? [];
      expect(addresses.slice(0, 3)).toEqual(["/qd", "/qd/q1", "/qd/q1/archives?generation=0"]);
      expect(addresses).toHaveLength(3 + GENERATIONS);
      expect(addresses.at(-1)).toBe(`/qd/q1/archives?generation=${GENERATIONS}`);
      expect(qdApi.bundle?.(raw, new Set(["some-other-run"]))).toEqual([]);
      expect(qdApi.bundle?.(raw, "all")).toContain("/qd/empty");
    } finally {
      raw.close();
    }
  });
});
