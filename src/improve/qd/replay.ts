/**
 * A CycleQD run's state rebuilt from its generation records: the archives are a fold of the
 * offers (generation 0's experts, then each generation's child, with the scores the records
 * hold), so replaying records 0..g in order gives exactly the state after generation g. The store
 * keeps only the records (src/store/qd-log.ts); a resumed run and `clade archive --generation`
 * both start here.
 *
 * Each replayed offer's add statuses are checked against the recorded ones: a record that does
 * not replay to what was recorded (a changed bin rule, a hand-edited store) is an error, not a
 * silently different archive.
 */
import { z } from "zod";
import { CycleArchives, type CycleArchivesConfig } from "./archives.js";
import type { CycleState, GenerationRecord, InitRecord, Offered } from "./cycle.js";

const addResult = z.strictObject({
  status: z.enum(["new", "improved", "not_added"]),
  value: z.number(),
});
const offered = z.union([
  z.object({
    id: z.string(),
    scores: z.array(z.number()),
    results: z.array(addResult),
    kept: z.boolean(),
    error: z.null(),
  }),
  z.object({
    id: z.string(),
    scores: z.null(),
    results: z.null(),
    kept: z.literal(false),
    error: z.string(),
  }),
]);
const initRecord = z.object({
  generation: z.literal(0),
  experts: z.array(offered),
  stats: z.array(z.unknown()),
  adds: z.array(z.unknown()),
});
const generationRecord = z.object({
  generation: z.number().int().positive(),
  qualityTask: z.number().int().nonnegative(),
  parents: z.array(z.string()),
  child: offered,
  stats: z.array(z.unknown()),
  adds: z.array(z.unknown()),
});

export type CycleRecord = InitRecord | GenerationRecord;

/** A stored record, checked; one line naming the generation and the field otherwise. */
export function parseCycleRecord(json: unknown, generation: number): CycleRecord {
  const schema = generation === 0 ? initRecord : generationRecord;
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join(".") ?? "";
    throw new Error(
      `generation ${generation}'s record is invalid: ${path === "" ? "" : `${path}: `}${issue?.message}`,
    );
  }
  if (parsed.data.generation !== generation) {
    throw new Error(`generation ${generation}'s record says generation ${parsed.data.generation}`);
  }
  return parsed.data as CycleRecord;
}

function replayOffer(
  archives: CycleArchives,
  state: CycleState,
  offer: Offered,
  generation: number,
): void {
  if (offer.scores === null) {
    state.errored++;
    return;
  }
  const { results } = archives.offerToAll({ id: offer.id, scores: offer.scores, generation });
  const replayed = results.map((r) => r.status).join(",");
  const recorded = offer.results.map((r) => r.status).join(",");
  if (replayed !== recorded) {
    throw new Error(
      `generation ${generation} does not replay: ${offer.id} was recorded as ${recorded}, replays as ${replayed}`,
    );
  }
}

/**
 * The state after the last of `records` (generation 0, 1, 2, … in order, none missing). Add
 * counts are taken after each generation, as the loop does, so the state equals the live one.
 */
export function replayCycle(
  config: CycleArchivesConfig,
  records: readonly CycleRecord[],
): CycleState {
  const archives = CycleArchives.create(config);
  const state: CycleState = { generation: 0, errored: 0, archives };
  records.forEach((record, i) => {
    if (record.generation !== i) {
      throw new Error(`generation ${i} is missing from the records (found ${record.generation})`);
    }
    if (record.generation === 0) {
      for (const expert of (record as InitRecord).experts) replayOffer(archives, state, expert, 0);
    } else {
      replayOffer(archives, state, (record as GenerationRecord).child, record.generation);
    }
    archives.takeAddCounts();
    state.generation = record.generation;
  });
  if (records.length === 0) throw new Error("no generation to replay: the run has no records");
  return state;
}

/** What the archives' pictures need of a stored run's configuration (`clade qd` writes more). */
export const storedGeometrySchema = z.object({
  tasks: z.array(z.object({ label: z.string() })).min(2),
  ranges: z.array(z.object({ min: z.number(), max: z.number() })),
  bins: z.number().int().min(2),
});
