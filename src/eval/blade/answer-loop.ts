/**
 * What BLADE's model roles add to the shared judge loop (eval/judge-loop.ts: `askForAnswer`,
 * `emptySpend`, `AnswerCheckError`): checks of their answers' shapes, the pairs answer
 * `{"A<i>-B<j>": value}` of the conceptual-variable and model judges, and zod's first issue as
 * the reason sent back.
 */
import type { z } from "zod";
import { AnswerCheckError } from "../judge-loop.js";

/** zod's first issue as one line: "path: message". */
export function firstIssue(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const issue = issues[0];
  if (!issue) return "invalid";
  const where = issue.path.length ? issue.path.map(String).join(".") : "(top level)";
  return `${where}: ${issue.message}`;
}

const PAIR_KEY = /^\s*A\s*(\d+)\s*-\s*B\s*(\d+)\s*$/i;

/**
 * Checks a pairs answer, `{"A<i>-B<j>": value}` (BLADE's judges' shape; `{}` = no pair): every
 * key names listed items (1-based), no pair twice, every value passes `schema`. Pairs come back
 * in the answer's order.
 */
export function checkPairs<T>(
  answer: unknown,
  sizes: { a: number; b: number },
  schema: z.ZodType<T>,
): { a: number; b: number; key: string; value: T }[] {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
    throw new AnswerCheckError("the answer must be one JSON object of pairs ({} for none)");
  }
  const pairs: { a: number; b: number; key: string; value: T }[] = [];
  const seen = new Set<string>();
  for (const [key, raw] of Object.entries(answer)) {
    const found = PAIR_KEY.exec(key);
    if (!found) throw new AnswerCheckError(`key "${key}": expected the form "A<number>-B<number>"`);
    const a = Number(found[1]);
    const b = Number(found[2]);
    if (a < 1 || a > sizes.a) {
      throw new AnswerCheckError(`key "${key}": A${a} is not listed (A1..A${sizes.a})`);
    }
    if (b < 1 || b > sizes.b) {
      throw new AnswerCheckError(
        `key "${key}": B${b} is not listed (${sizes.b === 1 ? "B1 only" : `B1..B${sizes.b}`})`,
      );
    }
    if (seen.has(`${a}-${b}`)) throw new AnswerCheckError(`key "${key}": the pair is named twice`);
    seen.add(`${a}-${b}`);
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      throw new AnswerCheckError(`key "${key}": ${firstIssue(parsed.error.issues)}`);
    }
    pairs.push({ a, b, key, value: parsed.data });
  }
  return pairs;
}
