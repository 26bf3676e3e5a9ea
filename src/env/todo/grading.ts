/** τ-bench-style grading: the final database must equal the gold one, and the answer must
 * mention every required string. */

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

const normalize = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim();
const isWordChar = (char: string | undefined) => char !== undefined && /[a-z0-9]/.test(char);

/** Whether `needle` occurs in `haystack` as a whole phrase ("3" does not match "13"). */
function containsPhrase(haystack: string, needle: string): boolean {
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    const before = haystack[at - 1];
    const after = haystack[at + needle.length];
    const startsWord = !isWordChar(needle[0]) || !isWordChar(before);
    const endsWord = !isWordChar(needle[needle.length - 1]) || !isWordChar(after);
    if (startsWord && endsWord) return true;
  }
  return false;
}

/** Case-insensitive whole-phrase match; a number may also be written as a word ("3" or "three"). */
export function mentions(answer: string, required: string): boolean {
  const text = normalize(answer);
  const needle = normalize(required);
  if (containsPhrase(text, needle)) return true;
  const word = /^\d+$/.test(needle) ? NUMBER_WORDS[Number(needle)] : undefined;
  return word !== undefined && containsPhrase(text, word);
}

/** The required answers the text fails to mention. */
export function missingAnswers(answer: string, required: readonly string[]): string[] {
  return required.filter((item) => !mentions(answer, item));
}
