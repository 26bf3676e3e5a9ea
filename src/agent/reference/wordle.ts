/**
 * Reference Wordle solver. It acts on feedback only: it keeps the answers consistent with every
 * "Feedback:" line seen so far and guesses the word (from the whole guess list) that leaves the
 * fewest answers on average. Decisions depend only on the feedback path, so they are memoised in
 * one shared decision tree and every episode after the first few is nearly free.
 */
import { ANSWER_WORDS, GUESS_WORDS } from "../../env/wordle/data.js";
import { CODE_COUNT, feedbackCode, parseFeedback, SOLVED_CODE } from "../../env/wordle/feedback.js";
import type { Agent, AgentState, ReferenceSolver } from "../types.js";

/** Best opening for the full answer list under chooseGuess's score (checked in the tests). */
export const FIRST_GUESS = "irate";

interface Node {
  /** Answers consistent with the feedback on the path to this node. */
  candidates: readonly string[];
  guess: string;
  children: Map<number, Node>;
}

const bucketSizes = new Uint16Array(CODE_COUNT);

/**
 * The guess minimising the expected number of answers left unsolved (sum of squared bucket
 * sizes, the solved bucket excluded); ties go to a possible answer, then the smaller worst case.
 */
export function chooseGuess(candidates: readonly string[]): string {
  const only = candidates[0];
  if (only === undefined) throw new Error("wordle solver: no answer fits the feedback");
  if (candidates.length <= 2) return only;
  const isCandidate = new Set(candidates);
  // A candidate that splits the rest into singletons cannot be beaten.
  const perfect = candidates.length - 1;
  let best = only;
  let bestScore = Number.POSITIVE_INFINITY;
  let bestWorst = Number.POSITIVE_INFINITY;
  let bestIsCandidate = false;
  for (const guess of [...candidates, ...GUESS_WORDS]) {
    bucketSizes.fill(0);
    for (const answer of candidates) {
      const code = feedbackCode(guess, answer);
      bucketSizes[code] = (bucketSizes[code] ?? 0) + 1;
    }
    let score = 0;
    let worst = 0;
    for (let code = 0; code < CODE_COUNT; code++) {
      const size = bucketSizes[code] ?? 0;
      if (size === 0 || code === SOLVED_CODE) continue;
      score += size * size;
      if (size > worst) worst = size;
    }
    const candidate = isCandidate.has(guess);
    const better =
      score < bestScore ||
      (score === bestScore && candidate && !bestIsCandidate) ||
      (score === bestScore && candidate === bestIsCandidate && worst < bestWorst);
    if (better) {
      best = guess;
      bestScore = score;
      bestWorst = worst;
      bestIsCandidate = candidate;
      if (candidate && score === perfect) break;
    }
  }
  return best;
}

let root: Node | undefined;

function rootNode(): Node {
  root ??= { candidates: ANSWER_WORDS, guess: FIRST_GUESS, children: new Map() };
  return root;
}

function child(node: Node, code: number): Node {
  let next = node.children.get(code);
  if (!next) {
    const candidates = node.candidates.filter((w) => feedbackCode(node.guess, w) === code);
    next = { candidates, guess: chooseGuess(candidates), children: new Map() };
    node.children.set(code, next);
  }
  return next;
}

/** The tree node reached by following the feedback lines of an episode's observations. */
export function nodeAfter(feedbackTexts: readonly string[]): Node {
  let node = rootNode();
  for (const text of feedbackTexts) {
    const feedback = parseFeedback(text);
    if (!feedback) continue;
    if (feedback.guess !== node.guess) {
      // Not our own guess (cannot happen when this solver plays); filter without memoising.
      const candidates = node.candidates.filter(
        (w) => feedbackCode(feedback.guess, w) === feedback.code,
      );
      node = { candidates, guess: chooseGuess(candidates), children: new Map() };
      continue;
    }
    node = child(node, feedback.code);
  }
  return node;
}

function act(state: AgentState) {
  const texts = state.history.map((turn) => turn.observation.text);
  // The latest observation is normally the last turn's; include it if a runner keeps it apart.
  if (texts.at(-1) !== state.observation.text) texts.push(state.observation.text);
  const node = nodeAfter(texts);
  const count = node.candidates.length;
  const thought =
    count === 1
      ? `Only "${node.guess}" fits all the feedback.`
      : `${count} words fit the feedback so far; "${node.guess}" narrows them down best.`;
  return { action: node.guess, message: `Thought: ${thought}\n\nAction: ${node.guess}` };
}

export const solveWordle: ReferenceSolver = () => {
  const agent: Agent = { act: async (state) => act(state) };
  return agent;
};
