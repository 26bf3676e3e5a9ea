/** All exercises in order of difficulty, and which of them only test tasks use. */
import type { Exercise } from "./exercise.js";
import { ADVANCED_EXERCISES } from "./exercises-advanced.js";
import { BASIC_EXERCISES } from "./exercises-basic.js";
import { INTERMEDIATE_EXERCISES } from "./exercises-intermediate.js";

export const EXERCISES: readonly Exercise[] = [
  ...BASIC_EXERCISES,
  ...INTERMEDIATE_EXERCISES,
  ...ADVANCED_EXERCISES,
];

/**
 * Held out of the train split, one or two per difficulty, so that test results also measure
 * exercises never trained on.
 */
export const TEST_ONLY_IDS: ReadonlySet<string> = new Set([
  "isogram",
  "luhn",
  "collatz",
  "minesweeper",
  "game-of-life",
  "edit-distance",
  "tournament",
  "markdown",
]);

export const TRAIN_EXERCISES: readonly Exercise[] = EXERCISES.filter(
  (exercise) => !TEST_ONLY_IDS.has(exercise.id),
);
