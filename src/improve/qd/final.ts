/**
 * CycleQD's final model. The public code stops at the archives; the paper reports a merge of
 * elites. clade defines two finalists, both deterministic given the archives:
 *
 * - **best mean**: among every elite of every archive (an elite held by several archives counts
 *   once), the one with the highest mean score over the K tasks; ties go to the higher minimum
 *   score, then the smaller id.
 * - **per-task best merge**: for each task k, archive k's elite of highest quality (ties as
 *   above); their weights merged by task vectors with equal weights, θ_base + (1/n) Σ τᵢ over
 *   the distinct ones, i.e. the crossover without its random weights.
 *
 * Scores here are the archive's (the evaluation tasks the search ran on); a finalist's worth is
 * what it scores on held-out test tasks, which the caller evaluates afterwards.
 */
import type { PolicyModel } from "../rl/policy/model.js";
import type { Params } from "../rl/policy/tensor.js";
import type { Elite } from "./archive.js";
import type { CycleArchives } from "./archives.js";
import type { GenomeStore } from "./cycle.js";
import { childPolicy } from "./operators/child.js";
import { mergeTaskVectors } from "./operators/merge.js";
import { taskVector } from "./operators/task-vector.js";

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Orders elites best first: mean score, then minimum score, then id. */
export function compareByMean(a: Elite, b: Elite): number {
  return (
    mean(b.scores) - mean(a.scores) ||
    Math.min(...b.scores) - Math.min(...a.scores) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** Every distinct elite of the archives (by id). */
export function distinctElites(archives: CycleArchives): Elite[] {
  const byId = new Map<string, Elite>();
  for (const archive of archives.archives) {
    for (const elite of archive.elites()) if (!byId.has(elite.id)) byId.set(elite.id, elite);
  }
  return [...byId.values()];
}

/** The elite with the best mean score over the tasks; throws one line when the archives are empty. */
export function bestMeanElite(archives: CycleArchives): Elite {
  const elites = distinctElites(archives).sort(compareByMean);
  const best = elites[0];
  if (best === undefined) throw new Error("final selection: the archives hold no elite");
  return best;
}

/** Per task k, archive k's elite of highest quality (ties: better mean, then id). */
export function perTaskBest(archives: CycleArchives): Elite[] {
  return archives.archives.map((archive, k) => {
    const best = archive
      .elites()
      .sort((a, b) => (b.scores[k] as number) - (a.scores[k] as number) || compareByMean(a, b))[0];
    if (best === undefined) throw new Error(`final selection: the archive of task ${k} is empty`);
    return best;
  });
}

/** θ_base + (1/n) Σ (θᵢ − θ_base) over the given weights (the per-task best, deduplicated). */
export function mergeEqually(base: Params, members: readonly Params[]): Params {
  return mergeTaskVectors(
    base,
    members.map((theta) => taskVector(theta, base)),
    members.map(() => 1),
  );
}

/** CycleQD's two finalists on embedded policies, read from the genome store. */
export interface PolicyFinalists {
  readonly bestMean: { readonly elite: Elite; readonly policy: PolicyModel };
  /** The per-task best elites (deduplicated) and their equal-weight merge. */
  readonly merge: { readonly elites: Elite[]; readonly policy: PolicyModel };
}

export async function policyFinalists(
  archives: CycleArchives,
  store: GenomeStore<PolicyModel>,
  base: PolicyModel,
): Promise<PolicyFinalists> {
  const load = async (elite: Elite) => {
    const policy = await store.get(elite.id);
    if (!policy) throw new Error(`final selection: elite ${elite.id} is not in the genome store`);
    return policy;
  };
  const best = bestMeanElite(archives);
  const members = [...new Map(perTaskBest(archives).map((e) => [e.id, e])).values()];
  const weights = await Promise.all(members.map(async (e) => (await load(e)).params));
  return {
    bestMean: { elite: best, policy: await load(best) },
    merge: { elites: members, policy: childPolicy(base, mergeEqually(base.params, weights)) },
  };
}
