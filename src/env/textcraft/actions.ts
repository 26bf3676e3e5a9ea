/**
 * Parsing of TextCraft actions. Forgiving about case, spacing, underscores, a trailing period and
 * "and" between ingredients; item names stay unresolved here (the catalog resolves them).
 */

import { clipTrimmed as echo } from "../echo.js";
import { normalizeName } from "./catalog.js";

export interface CountedName {
  count: number;
  name: string;
}

export type TextcraftAction =
  | { kind: "get"; count: number; name: string }
  | { kind: "craft"; count: number; name: string; ingredients: CountedName[] }
  | { kind: "inventory" }
  /** Recognisably a get or craft, but with a missing or malformed part (explained in `problem`). */
  | { kind: "malformed"; problem: string }
  | { kind: "unknown" };

/** Counts above this are refused, so huge numbers cannot blow up the inventory. */
export const MAX_COUNT = 999;

const GET = /^(?:get|fetch) (?:(\d+) )?(.+)$/;
const CRAFT = /^craft (\d+) (.+?) using (.+)$/;
const COUNTED = /^(\d+) (.+)$/;

/**
 * The normalized action without trailing periods and exclamation marks. A plain loop, because
 * an end-anchored regex backtracks quadratically on a long run of them.
 */
function cleanAction(text: string): string {
  const action = normalizeName(text);
  let end = action.length;
  while (end > 0 && (action[end - 1] === "." || action[end - 1] === "!")) end--;
  return action.slice(0, end).trim();
}

function parseCounted(part: string): CountedName | undefined {
  const match = COUNTED.exec(part.trim());
  if (!match) return undefined;
  return { count: Number(match[1]), name: match[2] as string };
}

function countProblem(counts: readonly number[]): string | undefined {
  const bad = counts.find((n) => !Number.isSafeInteger(n) || n < 1 || n > MAX_COUNT);
  return bad === undefined ? undefined : `counts must be whole numbers from 1 to ${MAX_COUNT}`;
}

export function parseAction(text: string): TextcraftAction {
  const action = cleanAction(text);
  if (action === "inventory" || action === "check inventory") return { kind: "inventory" };

  const get = GET.exec(action);
  if (get) {
    const count = get[1] === undefined ? 1 : Number(get[1]);
    const problem = countProblem([count]);
    if (problem) return { kind: "malformed", problem };
    return { kind: "get", count, name: get[2] as string };
  }

  if (action.startsWith("craft ")) {
    const craft = CRAFT.exec(action);
    if (!craft) {
      return { kind: "malformed", problem: "write it as: craft N item using N ingredient, ..." };
    }
    const ingredients: CountedName[] = [];
    for (const part of (craft[3] as string).split(/\s*,\s*(?:and\s+)?|\s+and\s+/)) {
      const counted = parseCounted(part);
      if (!counted) {
        return { kind: "malformed", problem: `give a count for each ingredient ("${echo(part)}")` };
      }
      ingredients.push(counted);
    }
    const count = Number(craft[1]);
    const problem = countProblem([count, ...ingredients.map((p) => p.count)]);
    if (problem) return { kind: "malformed", problem };
    return { kind: "craft", count, name: craft[2] as string, ingredients };
  }

  return { kind: "unknown" };
}
