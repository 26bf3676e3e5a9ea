/**
 * Validation of every request's query, path and body with zod, through hono's validator: a bad
 * request gets 400 and one line, `{ "error": "query.limit: ..." }`, never zod's whole report.
 */
import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import { z } from "zod";
import { firstIssue } from "../eval/goals/import/common.js";

export function valid<T extends z.ZodType, Target extends keyof ValidationTargets>(
  target: Target,
  schema: T,
) {
  return zValidator(
    target,
    schema,
    (result, c) => {
      if (!result.success) {
        return c.json({ error: firstIssue(result.error as unknown as z.ZodError, [target]) }, 400);
      }
    },
    // The given value in each issue, so a wrong type reads "expected number, got string".
    {
      validationFunction: (given, value) =>
        // biome-ignore lint/suspicious/noExplicitAny: the validator's result type is zod v3's and v4's union
        given.safeParseAsync(value, { reportInput: true }) as Promise<any>,
    },
  );
}

/** Page sizes: the API's default, and the most one request may ask for. */
export const PAGE = { default: 50, max: 500 } as const;

/** A page's size: PAGE.default unless asked, at most PAGE.max. */
export const pageLimit = z.coerce.number().int().min(1).max(PAGE.max).default(PAGE.default);

/** The query of a list read page by page: its size and the cursor a previous page gave. */
export const pageQuery = z.object({ limit: pageLimit, cursor: z.string().optional() });
