/**
 * Host-side grading: compares what the sandbox reported for each call with the test's
 * expectation. Expected values never leave the host.
 */
import type { TestCase } from "./exercise.js";
import type { CaseRecord, ErrorReport } from "./runner.js";

export interface CaseVerdict {
  test: TestCase;
  passed: boolean;
  /** False when the call never finished (the process was stopped or ended first). */
  finished: boolean;
  /** Why it failed, a few short lines; empty when it passed. */
  problem: string;
}

const SHOWN_VALUE_CHARS = 300;

/** JSON with object keys sorted at every level: equal data gives equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(v).sort()) sorted[key] = (v as Record<string, unknown>)[key];
    return sorted;
  });
}

function clip(text: string, limit = SHOWN_VALUE_CHARS): string {
  return text.length > limit ? `${text.slice(0, limit - 3)}...` : text;
}

/** A value the harness encoded, written back as JavaScript-like text for the agent to read. */
export function showValue(encoded: unknown): string {
  return clip(renderEncoded(encoded, 0));
}

function renderEncoded(value: unknown, depth: number): string {
  if (depth > 20) return "...";
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "undefined";
  if (Array.isArray(value)) return `[${value.map((v) => renderEncoded(v, depth + 1)).join(", ")}]`;
  const tagged = value as Record<string, unknown>;
  const keys = Object.keys(tagged);
  if (keys.length === 1) {
    const tag = keys[0] as string;
    const inner = tagged[tag];
    switch (tag) {
      case "$undefined":
        return "undefined";
      case "$number":
      case "$symbol":
        return String(inner);
      case "$bigint":
        return `${String(inner)}n`;
      case "$function":
        return `[Function ${String(inner)}]`;
      case "$cycle":
        return "[Circular]";
      case "$tooLarge":
        return "[value too large to show]";
      case "$promise":
        return "Promise { ... } (return the value, not a promise)";
      case "$date":
        return `Date(${String(inner)})`;
      case "$error":
        return `Error(${JSON.stringify(inner)})`;
      case "$set":
        return `Set(${renderEncoded(inner, depth + 1)})`;
      case "$map":
        return `Map(${renderEncoded(inner, depth + 1)})`;
    }
  }
  const fields = keys.map(
    (key) => `${JSON.stringify(key)}: ${renderEncoded(tagged[key], depth + 1)}`,
  );
  return `{${fields.join(", ")}}`;
}

export function describeThrown(error: ErrorReport): string {
  const where = error.where ? ` (${error.where})` : "";
  return clip(`${error.name}: ${error.message}${where}`, 400);
}

/** The verdict on one test given the sandbox's record (undefined: the call never finished). */
export function judgeCase(test: TestCase, record: CaseRecord | undefined): CaseVerdict {
  if (record === undefined)
    return { test, passed: false, finished: false, problem: "did not finish" };
  const fail = (problem: string): CaseVerdict => ({ test, passed: false, finished: true, problem });
  const pass: CaseVerdict = { test, passed: true, finished: true, problem: "" };
  if (test.throws !== undefined) {
    const expected = `expected an error whose message contains ${JSON.stringify(test.throws)}`;
    if (record.ok) return fail(`${expected}\n  but it returned: ${showValue(record.value)}`);
    if (record.error.message.includes(test.throws)) return pass;
    return fail(`${expected}\n  but it threw: ${describeThrown(record.error)}`);
  }
  if (!record.ok) return fail(`threw ${describeThrown(record.error)}`);
  if (canonicalJson(record.value) === canonicalJson(test.expect)) return pass;
  return fail(
    `expected: ${clip(JSON.stringify(test.expect) ?? "undefined")}\n` +
      `  received: ${showValue(record.value)}`,
  );
}

export function judgeCases(
  tests: readonly TestCase[],
  records: readonly (CaseRecord | undefined)[],
): CaseVerdict[] {
  return tests.map((test, i) => judgeCase(test, records[i]));
}
