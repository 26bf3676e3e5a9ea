/** Helpers the database generators share: names, dates, prices, tallies and SQL literals. */
import type { Rng } from "../rng.js";
import { FIRST_NAMES, LAST_NAMES } from "./data.js";

export const MONTH_NAMES: readonly string[] = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** Distinct "First Last" names. */
export function drawNames(rng: Rng, count: number): string[] {
  const names = new Set<string>();
  while (names.size < count) names.add(`${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}`);
  return [...names];
}

/** The ISO date (YYYY-MM-DD) `days` days after `start`. */
export function addDays(start: string, days: number): string {
  const time = Date.parse(`${start}T00:00:00Z`) + days * 86_400_000;
  return new Date(time).toISOString().slice(0, 10);
}

/** Two-digit month code: 5 → "05". */
export function monthCode(month: number): string {
  return String(month).padStart(2, "0");
}

export function roundCents(value: number): number {
  return Math.round(value * 100) / 100;
}

/** A number drawn by `draw` that is not yet in `used` (and is then added to it). */
export function drawDistinct(used: Set<number>, draw: () => number): number {
  for (;;) {
    const value = draw();
    if (used.has(value)) continue;
    used.add(value);
    return value;
  }
}

/** A SQL string literal. */
export function sqlText(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** At most `cap` items spread evenly over the list, in their order. */
export function spread<T>(items: readonly T[], cap: number): T[] {
  if (items.length <= cap) return items.slice();
  return Array.from({ length: cap }, (_, i) => items[Math.floor((i * items.length) / cap)] as T);
}

/** Sums of `value` per key (counts when value is omitted). */
export function tally<T, K>(
  items: Iterable<T>,
  key: (item: T) => K,
  value: (item: T) => number = () => 1,
): Map<K, number> {
  const totals = new Map<K, number>();
  for (const item of items) {
    const k = key(item);
    totals.set(k, (totals.get(k) ?? 0) + value(item));
  }
  return totals;
}

/** Items grouped by key, in their order. */
export function groupBy<T, K>(items: Iterable<T>, key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/**
 * Whether the first `k` values in sorted order are unambiguous: pairwise distinct and distinct
 * from the next one, so that "top k, in order" has exactly one answer. Needs more than k values
 * unless all are asked for.
 */
export function clearTop(values: readonly number[], k: number, descending = true): boolean {
  if (values.length < k) return false;
  const sorted = values.slice().sort((a, b) => (descending ? b - a : a - b));
  const close = (a: number, b: number) => Math.abs(a - b) < 1e-6;
  for (let i = 0; i < Math.min(k, sorted.length - 1); i++) {
    if (close(sorted[i] as number, sorted[i + 1] as number)) return false;
  }
  return true;
}
