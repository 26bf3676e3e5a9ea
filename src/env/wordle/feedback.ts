/**
 * Wordle feedback. Greens are placed first; each remaining letter of the answer can then turn at
 * most one guessed copy yellow, left to right, so repeated letters score exactly as in Wordle.
 */

export const WORD_LENGTH = 5;

export type Mark = "green" | "yellow" | "grey";

const YELLOW = 1;
const GREEN = 2;
const MARKS: readonly Mark[] = ["grey", "yellow", "green"];

/** The code of an all-green pattern: 2 + 2·3 + ... + 2·3⁴. */
export const SOLVED_CODE = 3 ** WORD_LENGTH - 1;

/** Number of distinct feedback codes (3⁵). */
export const CODE_COUNT = 3 ** WORD_LENGTH;

// Grey is 0: a letter adds nothing to the code unless it is yellow or green.
// Scratch counts of the answer's unmatched letters; reused so scoring allocates nothing.
const unmatched = new Int8Array(26);

/**
 * Scores a guess against the answer as one integer: letter i's mark (grey 0, yellow 1, green 2)
 * is base-3 digit i. Both words must be lowercase a-z of WORD_LENGTH letters.
 */
export function feedbackCode(guess: string, answer: string): number {
  unmatched.fill(0);
  let greens = 0;
  for (let i = 0; i < WORD_LENGTH; i++) {
    const a = answer.charCodeAt(i) - 97;
    if (guess.charCodeAt(i) - 97 === a) greens |= 1 << i;
    else unmatched[a] = (unmatched[a] ?? 0) + 1;
  }
  let code = 0;
  let place = 1;
  for (let i = 0; i < WORD_LENGTH; i++, place *= 3) {
    if (greens & (1 << i)) {
      code += GREEN * place;
      continue;
    }
    const g = guess.charCodeAt(i) - 97;
    const left = unmatched[g] ?? 0;
    if (left > 0) {
      unmatched[g] = left - 1;
      code += YELLOW * place;
    }
  }
  return code;
}

/** The per-letter marks of a feedback code. */
export function decodeFeedback(code: number): Mark[] {
  const marks: Mark[] = [];
  for (let i = 0; i < WORD_LENGTH; i++, code = Math.floor(code / 3)) {
    marks.push(MARKS[code % 3] ?? "grey");
  }
  return marks;
}

/** The feedback code of per-letter marks (inverse of decodeFeedback). */
export function encodeFeedback(marks: readonly Mark[]): number {
  let code = 0;
  for (let i = marks.length - 1; i >= 0; i--) code = code * 3 + MARKS.indexOf(marks[i] ?? "grey");
  return code;
}

/** Readable feedback, e.g. "c(green) r(grey) a(yellow) n(grey) e(grey)". */
export function formatFeedback(guess: string, marks: readonly Mark[]): string {
  return marks.map((mark, i) => `${guess[i]}(${mark})`).join(" ");
}

const FEEDBACK_LINE = /Feedback: ((?:[a-z]\((?:green|yellow|grey)\) ?){5})/;

/** Reads the guess and its feedback code back from a "Feedback: ..." line, if the text has one. */
export function parseFeedback(text: string): { guess: string; code: number } | undefined {
  const match = FEEDBACK_LINE.exec(text);
  if (!match?.[1]) return undefined;
  const parts = match[1].trim().split(" ");
  const guess = parts.map((part) => part[0]).join("");
  const marks = parts.map((part) => part.slice(2, -1) as Mark);
  return { guess, code: encodeFeedback(marks) };
}
