import { createRng } from "../rng.js";
import { ANSWER_WORDS, GUESS_WORDS } from "./data.js";

export interface WordleTask {
  taskIndex: number;
  /** The hidden word. */
  answer: string;
}

// Tag for the RNG that orders the answers ("WRDL"), so no other use of createRng collides.
const ANSWER_ORDER_TAG = 0x5752444c;

let answerOrder: readonly string[] | undefined;

/** The answers in task order: a fixed seeded shuffle, so task i's word is distinct for every i. */
export function answersInTaskOrder(): readonly string[] {
  answerOrder ??= createRng(ANSWER_ORDER_TAG).shuffle(ANSWER_WORDS);
  return answerOrder;
}

/**
 * The task of an index. A Wordle task is just its hidden word, so the seed changes nothing:
 * it is accepted for the common generator signature.
 */
export function generateTask(taskIndex: number, _seed = 0): WordleTask {
  const answer = answersInTaskOrder()[taskIndex];
  if (!Number.isInteger(taskIndex) || answer === undefined) {
    throw new RangeError(`wordle: no task ${taskIndex}`);
  }
  return { taskIndex, answer };
}

let guessSet: ReadonlySet<string> | undefined;

/** Whether a lowercase word is accepted as a guess. */
export function isAllowedGuess(word: string): boolean {
  guessSet ??= new Set(GUESS_WORDS);
  return guessSet.has(word);
}
