/**
 * The shape of a coding exercise and small helpers that keep the exercise data terse.
 * Tests are JavaScript call expressions with the value they must return (or the error message
 * they must throw); the sandboxed runner evaluates the calls, the host compares the results.
 */

/** Plain JSON data: what a test may expect a call to return. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface TestCase {
  /** A JavaScript expression over the solution's exports, e.g. `reverseWords("a b")`. */
  call: string;
  /** The value the call must return, compared by deep equality (object key order ignored). */
  expect?: Json;
  /** When set, the call must throw an error whose message contains this text. */
  throws?: string;
}

export type Difficulty = 1 | 2 | 3 | 4 | 5;

export interface Exercise {
  /** Kebab-case id; also the solution file's base name (`<id>.js`). */
  id: string;
  title: string;
  difficulty: Difficulty;
  /** The exported names the tests use; variants may rename the first one. */
  exports: string[];
  /** Other names a variant may give the first export. */
  aliases: string[];
  /** What to write: behaviour, signature, edge cases and exact error messages. */
  statement: string;
  /** The solution file's starting content. */
  stub: string;
  /** A correct solution (ES module source), used by the reference solver and the self-check. */
  solution: string;
  /** Tests the agent can run with `run tests`. */
  visible: TestCase[];
  /** Further tests run only on submit (together with the visible ones). */
  hidden: TestCase[];
}

/** One test expecting a value. */
export function returns(call: string, expect: Json): TestCase {
  return { call, expect };
}

/** One test expecting an error whose message contains `message`. */
export function throws(call: string, message: string): TestCase {
  return { call, throws: message };
}

/** The call expression `name(arg1, arg2, ...)` with JSON-written arguments. */
export function callOf(name: string, args: readonly Json[]): string {
  return `${name}(${args.map((arg) => JSON.stringify(arg)).join(", ")})`;
}

/** Tests of one function from rows of [arguments, expected value]. */
export function table(name: string, rows: ReadonlyArray<readonly [Json[], Json]>): TestCase[] {
  return rows.map(([args, expect]) => returns(callOf(name, args), expect));
}

/** An expression that runs a few statements and returns the last line's `return` value. */
export function block(...statements: string[]): string {
  return `(() => { ${statements.join("; ")}; })()`;
}

/**
 * A function stub: the export with its parameters, throwing until implemented. `doc` becomes a
 * JSDoc comment above it.
 */
export function functionStub(signature: string, doc: string): string {
  return `/**\n * ${doc.split("\n").join("\n * ")}\n */
export function ${signature} {
  throw new Error("Not implemented yet");
}
`;
}

/** Replaces the identifier `from` (whole words only) with `to` throughout a text. */
export function renameIdentifier(text: string, from: string, to: string): string {
  if (from === to) return text;
  return text.replace(new RegExp(`\\b${from}\\b`, "g"), to);
}
