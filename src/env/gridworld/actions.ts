/**
 * Parsing of gridworld actions. Forgiving about case, spacing, articles, surrounding quotes or
 * backticks and a trailing period; names are checked for shape here and resolved by the rules.
 */
import { COLOURS, OBJECT_KINDS } from "./data.js";

export type ToggleIntent = "toggle" | "open" | "close";

export type GridAction =
  | { kind: "turn"; right: boolean }
  | { kind: "forward" }
  | { kind: "goto"; name: string }
  /** `name` is absent when the agent did not say what (e.g. plain "pick up"). */
  | { kind: "pickup"; name?: string }
  | { kind: "drop"; name?: string }
  | { kind: "toggle"; name?: string; intent: ToggleIntent }
  | { kind: "invalid"; problem: string };

/** Longer replies cannot be an action; refusing them early keeps huge inputs cheap. */
const MAX_ACTION_LENGTH = 200;

const COLOUR_SET = new Set<string>(COLOURS);
const KIND_SET = new Set<string>([...OBJECT_KINDS, "door"]);

/** Actions without a name, including a few common paraphrases. */
const PLAIN_ACTIONS = new Map<string, GridAction>([
  ["turn left", { kind: "turn", right: false }],
  ["left", { kind: "turn", right: false }],
  ["turn right", { kind: "turn", right: true }],
  ["right", { kind: "turn", right: true }],
  ["move forward", { kind: "forward" }],
  ["go forward", { kind: "forward" }],
  ["forward", { kind: "forward" }],
  ["move ahead", { kind: "forward" }],
  ["pick up", { kind: "pickup" }],
  ["pickup", { kind: "pickup" }],
  ["drop", { kind: "drop" }],
  ["put down", { kind: "drop" }],
  ["toggle", { kind: "toggle", intent: "toggle" }],
  ["open", { kind: "toggle", intent: "open" }],
  ["unlock", { kind: "toggle", intent: "open" }],
  ["close", { kind: "toggle", intent: "close" }],
  ["go to", missingName("go to")],
]);

/** Actions followed by a name: the prefix (with its space) and how to build the action. */
const NAMED_ACTIONS: readonly [string, (name: string | undefined) => GridAction][] = [
  ["go to ", (name) => (name ? { kind: "goto", name } : missingName("go to"))],
  ["goto ", (name) => (name ? { kind: "goto", name } : missingName("go to"))],
  ["walk to ", (name) => (name ? { kind: "goto", name } : missingName("go to"))],
  ["pick up ", (name) => ({ kind: "pickup", name })],
  ["pickup ", (name) => ({ kind: "pickup", name })],
  ["drop ", (name) => ({ kind: "drop", name })],
  ["put down ", (name) => ({ kind: "drop", name })],
  ["toggle ", (name) => ({ kind: "toggle", name, intent: "toggle" })],
  ["open ", (name) => ({ kind: "toggle", name, intent: "open" })],
  ["unlock ", (name) => ({ kind: "toggle", name, intent: "open" })],
  ["close ", (name) => ({ kind: "toggle", name, intent: "close" })],
];

function missingName(verb: string): GridAction {
  return { kind: "invalid", problem: `Say where to ${verb}, e.g. "${verb} red ball".` };
}

const isQuote = (char: string) => char === '"' || char === "'" || char === "`";
const isSpace = (char: string) => char === " " || char === "\t" || char === "\n" || char === "\r";

/**
 * The action without surrounding whitespace, quotes and trailing periods, lower-cased, with single
 * spaces. Plain loops, because end-anchored regexes backtrack on long runs of such characters.
 */
function normalize(action: string): string {
  let start = 0;
  let end = action.length;
  while (start < end && (isQuote(action[start] as string) || isSpace(action[start] as string))) {
    start++;
  }
  for (; end > start; end--) {
    const char = action[end - 1] as string;
    if (!isQuote(char) && !isSpace(char) && char !== "." && char !== "!") break;
  }
  return action.slice(start, end).toLowerCase().replace(/\s+/g, " ");
}

/** "the red ball" → "red ball"; undefined for a bare "door" or "the door" (no name given). */
function parseName(text: string): string | undefined | GridAction {
  const words = text.split(" ");
  if (words[0] === "the" || words[0] === "a" || words[0] === "an") words.shift();
  if (words.length === 1 && words[0] === "door") return undefined;
  if (
    words.length === 2 &&
    COLOUR_SET.has(words[0] as string) &&
    KIND_SET.has(words[1] as string)
  ) {
    return words.join(" ");
  }
  return {
    kind: "invalid",
    problem:
      'Name things by colour and kind, e.g. "red ball", "blue box", "grey key" or ' +
      `"yellow door" (colours: ${COLOURS.join(", ")}).`,
  };
}

export function parseAction(raw: string): GridAction {
  if (raw.length > MAX_ACTION_LENGTH) {
    return { kind: "invalid", problem: "That is far too long for an action." };
  }
  const action = normalize(raw);
  const plain = PLAIN_ACTIONS.get(action);
  if (plain) return plain;
  for (const [prefix, build] of NAMED_ACTIONS) {
    if (!action.startsWith(prefix)) continue;
    const name = parseName(action.slice(prefix.length));
    return typeof name === "object" ? name : build(name);
  }
  return {
    kind: "invalid",
    problem:
      "Use one of: turn left, turn right, move forward, go to <colour> <kind>, " +
      "pick up <colour> <kind>, drop, toggle.",
  };
}

/** Agent-written text as echoed in errors: one line, trimmed, at most MAX_ECHO characters. */
export { clipTrimmed as echo } from "../echo.js";
