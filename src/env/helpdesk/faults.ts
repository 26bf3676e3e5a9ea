/**
 * The fault plan: one pure function of (task index, seed, user turn, the turn's goal kind) that
 * both the environment and the built-in assistant read. The environment applies the backend
 * faults (a search that returns the wrong passages or none, a timeout, a truncated passage) to
 * whatever agent plays; the assistant applies its own faults (misrouting, refusal,
 * misunderstanding, a missed out-of-domain question) only when it runs with faults on. At most
 * one fault per turn, so a failed turn has one cause.
 */
import { createRng } from "../rng.js";
import type { GoalKind, Rcof } from "./types.js";

export type BackendFault = "wrong_passage" | "no_passage" | "timeout" | "truncation";
export type AssistantFault = "misunderstanding" | "refusal" | "misroute" | "ood_miss";
export type FaultName = BackendFault | AssistantFault;

/** The RCOF code each fault produces when it makes a turn fail. */
export const FAULT_CAUSE: Readonly<Record<FaultName, Rcof>> = {
  misunderstanding: "E1",
  refusal: "E2",
  wrong_passage: "E3",
  no_passage: "E4",
  timeout: "E5",
  truncation: "E5",
  misroute: "E6",
  ood_miss: "E7",
};

export const BACKEND_FAULTS: ReadonlySet<FaultName> = new Set<FaultName>([
  "wrong_passage",
  "no_passage",
  "timeout",
  "truncation",
]);

/**
 * Per-turn probabilities by the kind of the goal the turn belongs to (the rest: no fault).
 * Handbook turns carry the retrieval faults; a timeout hits the turn's first backend call and a
 * truncation its first read_passage, so a turn that makes no such call is unaffected. Rates
 * are set so that the faulty assistant's goal success rate lands near the 78 % the paper
 * reports for its production assistant.
 */
export const FAULT_RATES: Readonly<Record<GoalKind, ReadonlyArray<readonly [FaultName, number]>>> =
  {
    policy: [
      ["misunderstanding", 0.02],
      ["refusal", 0.02],
      ["wrong_passage", 0.045],
      ["no_passage", 0.03],
      ["timeout", 0.02],
      ["truncation", 0.02],
      ["misroute", 0.025],
    ],
    balance: [
      ["misunderstanding", 0.04],
      ["refusal", 0.02],
      ["timeout", 0.04],
      ["misroute", 0.03],
    ],
    leave: [
      ["misunderstanding", 0.04],
      ["refusal", 0.02],
      ["timeout", 0.03],
      ["misroute", 0.03],
    ],
    ticket: [
      ["misunderstanding", 0.04],
      ["refusal", 0.02],
      ["timeout", 0.03],
      ["misroute", 0.03],
    ],
    ood: [["ood_miss", 0.3]],
  };

/** Keeps the fault stream apart from the task generator's (ASCII "hdft"). */
const FAULT_TAG = 0x68646674;

/** The fault planned for a user turn (1-based) of a task, or null. */
export function plannedFault(
  taskIndex: number,
  seed: number,
  turn: number,
  kind: GoalKind,
): FaultName | null {
  const u = createRng(FAULT_TAG, taskIndex, seed, turn).next();
  let acc = 0;
  for (const [name, rate] of FAULT_RATES[kind]) {
    acc += rate;
    if (u < acc) return name;
  }
  return null;
}
