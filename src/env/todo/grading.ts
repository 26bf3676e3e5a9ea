/**
 * τ-bench-style grading: the final database must equal the gold one, and the answer must
 * mention every required string without hedging, i.e. without also asserting the competing
 * candidates (other counts, other project names or titles). Otherwise one reply listing every
 * number and every name would pass questions blindly.
 */

const NUMBER_WORDS = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
  "thirteen",
  "fourteen",
  "fifteen",
  "sixteen",
  "seventeen",
  "eighteen",
  "nineteen",
  "twenty",
];
const NUMBER_WORD_VALUES = new Map(NUMBER_WORDS.map((word, value) => [word, value]));

/** Other standalone numbers a reply may contain besides a numeric answer ("moved 2 of them"). */
export const MAX_OTHER_NUMBERS = 2;
/** Other candidates of a name answer's kind a reply may mention ("ahead of Home"). */
export const MAX_OTHER_NAMES = 1;

/** Names an answer could be confused with, taken from the task's database. */
export interface AnswerCandidates {
  projects: readonly string[];
  titles: readonly string[];
}

export interface AnswerVerdict {
  /** Required answers the reply does not mention. */
  missing: string[];
  /** Required answers the reply mentions, but alongside too many competing candidates. */
  hedged: string[];
}

const normalize = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();
const isWordChar = (char: string | undefined) => char !== undefined && /[a-z0-9]/.test(char);
const isNumeric = (text: string) => /^\d+$/.test(text);

/** Whether `needle` occurs at `at` as a whole phrase ("3" does not match "13"). */
function isPhraseAt(haystack: string, needle: string, at: number): boolean {
  const startsWord = !isWordChar(needle[0]) || !isWordChar(haystack[at - 1]);
  const endsWord =
    !isWordChar(needle[needle.length - 1]) || !isWordChar(haystack[at + needle.length]);
  return startsWord && endsWord;
}

function containsPhrase(haystack: string, needle: string): boolean {
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    if (isPhraseAt(haystack, needle, at)) return true;
  }
  return false;
}

/** The haystack with every whole-phrase occurrence of `needle` replaced by a space. */
function erasePhrase(haystack: string, needle: string): string {
  if (needle === "") return haystack;
  let out = "";
  let from = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    if (at < from || !isPhraseAt(haystack, needle, at)) continue;
    out += `${haystack.slice(from, at)} `;
    from = at + needle.length;
  }
  return out + haystack.slice(from);
}

/** Case-insensitive whole-phrase match; a number may also be written as a word ("3" or "three"). */
export function mentions(answer: string, required: string): boolean {
  const text = normalize(answer);
  const needle = normalize(required);
  if (containsPhrase(text, needle)) return true;
  const word = isNumeric(needle) ? NUMBER_WORDS[Number(needle)] : undefined;
  return word !== undefined && containsPhrase(text, word);
}

/** The required answers the text fails to mention. */
export function missingAnswers(answer: string, required: readonly string[]): string[] {
  return required.filter((item) => !mentions(answer, item));
}

// Digits inside ISO dates and clock times are not claims about a count (ids like "t12" are
// not standalone numbers to begin with).
const DATES_AND_TIMES = /\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?::\d{2})?/g;

/**
 * The distinct numbers a normalized reply states, as digits or words, leaving out those inside
 * dates, times and candidate names (a title such as "Swim 20 laps" states no count).
 */
function statedNumbers(text: string, names: readonly string[]): Set<number> {
  let rest = text;
  for (const name of names) rest = erasePhrase(rest, name);
  rest = rest.replace(DATES_AND_TIMES, " ");
  const out = new Set<number>();
  for (const [token] of rest.matchAll(/[a-z0-9]+/g)) {
    const value = isNumeric(token) ? Number(token) : NUMBER_WORD_VALUES.get(token);
    if (value !== undefined) out.add(value);
  }
  return out;
}

/** The candidates of the same kind as a name answer, other than the answer itself. */
function rivalsOf(answer: string, candidates: AnswerCandidates): string[] {
  const kinds = [candidates.projects, candidates.titles].map((names) => names.map(normalize));
  const kind = kinds.find((names) => names.includes(answer)) ?? [];
  return [...new Set(kind)].filter((name) => name !== answer);
}

/**
 * Checks a final answer: every required answer must be mentioned, and none may be hedged. A
 * numeric answer allows at most MAX_OTHER_NUMBERS other stated numbers; a project or title
 * answer at most MAX_OTHER_NAMES other candidates of its kind.
 */
export function checkAnswer(
  answer: string,
  required: readonly string[],
  candidates: AnswerCandidates,
): AnswerVerdict {
  const text = normalize(answer);
  const missing = missingAnswers(answer, required);
  const names = [...candidates.projects, ...candidates.titles]
    .map(normalize)
    .sort((a, b) => b.length - a.length);
  const requiredNumbers = new Set(required.map(normalize).filter(isNumeric).map(Number));
  const otherNumbers = () =>
    [...statedNumbers(text, names)].filter((value) => !requiredNumbers.has(value)).length;
  const otherNames = (needle: string) => {
    const rest = erasePhrase(text, needle);
    return rivalsOf(needle, candidates).filter((rival) => containsPhrase(rest, rival)).length;
  };
  const hedged = required.filter((item) => {
    if (missing.includes(item)) return false;
    const needle = normalize(item);
    return isNumeric(needle)
      ? otherNumbers() > MAX_OTHER_NUMBERS
      : otherNames(needle) > MAX_OTHER_NAMES;
  });
  return { missing, hedged };
}
