/** Validation of command-line values with zod, turned into one clear UsageError line. */
import { z } from "zod";
import { UsageError } from "./io.js";

/** A decimal integer option within bounds, e.g. --samples. */
export function integerOption(min: number, max: number) {
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** A non-negative decimal option within bounds, e.g. --budget-usd. */
export function numberOption(min: number, max: number) {
  return z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, "must be a number")
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

export const runIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "use 1-100 letters, digits, '.', '_' or '-'");

/** Parses raw option values; the first problem becomes a UsageError naming the option. */
export function parseOptions<T extends z.ZodType>(schema: T, raw: unknown): z.output<T> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = issue?.path[0];
  const flag =
    typeof key === "string" ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : "";
  const input = (raw as Record<string, unknown>)[String(key)];
  const shown = input === undefined ? "" : ` (got "${String(input)}")`;
  throw new UsageError(`${flag} ${issue?.message ?? "is invalid"}${shown}`.trim());
}
