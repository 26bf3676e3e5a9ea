/**
 * ISO calendar dates (YYYY-MM-DD) as plain strings: they sort and compare lexicographically,
 * and arithmetic goes through UTC so that time zones never shift a day.
 */

export const WEEKDAYS = [
  "Sunday",
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
] as const;

export type Weekday = (typeof WEEKDAYS)[number];

const DAY_MS = 86_400_000;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

function toUtcMs(date: string): number {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d);
}

function fromUtcMs(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** True for a real calendar date written as YYYY-MM-DD (rejects 2026-02-30). */
export function isIsoDate(text: string): boolean {
  return ISO_DATE.test(text) && fromUtcMs(toUtcMs(text)) === text;
}

export function addDays(date: string, days: number): string {
  return fromUtcMs(toUtcMs(date) + days * DAY_MS);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((toUtcMs(to) - toUtcMs(from)) / DAY_MS);
}

export function weekdayOf(date: string): Weekday {
  return WEEKDAYS[new Date(toUtcMs(date)).getUTCDay()] as Weekday;
}

/** The first given weekday strictly after `date` ("next Monday" on a Monday is a week later). */
export function nextWeekday(date: string, weekday: Weekday): string {
  const from = new Date(toUtcMs(date)).getUTCDay();
  const ahead = (WEEKDAYS.indexOf(weekday) - from + 7) % 7 || 7;
  return addDays(date, ahead);
}
