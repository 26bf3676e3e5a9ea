/**
 * Tasks: each index picks an exercise and a variant. Test indices 0..99 walk through all
 * exercises in order of difficulty (so tasks repeat exercises: variant 0, 1, 2 ...); train
 * indices 100..499 walk through the exercises not held out for testing. A variant (and the seed)
 * picks the name of the main export and the order of the hidden tests.
 */
import { createRng } from "../rng.js";
import { EXERCISES, TRAIN_EXERCISES } from "./catalog.js";
import { type Exercise, renameIdentifier, type TestCase } from "./exercise.js";
import { renderTestFile } from "./test-file.js";

export const TEST_SPLIT = { start: 0, end: 100 } as const;
export const TRAIN_SPLIT = { start: 100, end: 500 } as const;

/** Keeps the task stream apart from other uses of (index, seed). */
const TASK_STREAM = 0x636f6465;

export interface CodingTask {
  taskIndex: number;
  seed: number;
  exercise: Exercise;
  variant: number;
  /** The exports under this task's names (the first may differ from the exercise's). */
  exports: string[];
  solutionFile: string;
  testFile: string;
  statement: string;
  stub: string;
  /** The reference solution under this task's names. */
  solution: string;
  visible: TestCase[];
  /** Graded on submit together with the visible tests, in a seeded order. */
  hidden: TestCase[];
  testFileText: string;
}

/** The exercise and variant number of a task index (no range check). */
export function exerciseSlot(taskIndex: number): { exercise: Exercise; variant: number } {
  if (taskIndex < TRAIN_SPLIT.start) {
    const count = EXERCISES.length;
    return {
      exercise: EXERCISES[taskIndex % count] as Exercise,
      variant: Math.floor(taskIndex / count),
    };
  }
  const offset = taskIndex - TRAIN_SPLIT.start;
  const count = TRAIN_EXERCISES.length;
  return {
    exercise: TRAIN_EXERCISES[offset % count] as Exercise,
    variant: Math.floor(offset / count),
  };
}

/** The task's name for the exercise's first export: cycles with the variant, shifted by seed. */
function entryName(exercise: Exercise, variant: number, taskIndex: number, seed: number): string {
  const names = [exercise.exports[0] as string, ...exercise.aliases];
  const shift = seed === 0 ? 0 : createRng(TASK_STREAM, taskIndex, seed, 1).int(names.length);
  return names[(variant + shift) % names.length] as string;
}

export function generateTask(taskIndex: number, seed = 0): CodingTask {
  const { exercise, variant } = exerciseSlot(taskIndex);
  const original = exercise.exports[0] as string;
  const name = entryName(exercise, variant, taskIndex, seed);
  const rename = (text: string) => renameIdentifier(text, original, name);
  const renameTests = (tests: readonly TestCase[]) =>
    tests.map((test) => ({ ...test, call: rename(test.call) }));
  const exports = [name, ...exercise.exports.slice(1)];
  const solutionFile = `${exercise.id}.js`;
  const visible = renameTests(exercise.visible);
  const hidden = createRng(TASK_STREAM, taskIndex, seed).shuffle(renameTests(exercise.hidden));
  return {
    taskIndex,
    seed,
    exercise,
    variant,
    exports,
    solutionFile,
    testFile: `${exercise.id}.test.js`,
    statement: rename(exercise.statement),
    stub: rename(exercise.stub),
    solution: rename(exercise.solution),
    visible,
    hidden,
    testFileText: renderTestFile({ title: exercise.title, solutionFile, exports, tests: visible }),
  };
}
