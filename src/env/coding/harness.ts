/**
 * The program the sandboxed child runs (as `node --input-type=module --eval`). It reads a spec
 * from stdin, imports each suite's module, evaluates every call expression with the module's
 * exports in scope and writes one JSON record per line to file descriptor 3. It never sees the
 * expected values: the host compares, so code under test cannot grade itself.
 *
 * Records: {t:"load", s, ok, exports | error}, {t:"case", s, i, ok, value | error}, {t:"end"},
 * each with k: the spec's nonce.
 * Values are encoded as JSON with object keys sorted; non-JSON values become tagged objects
 * ({"$undefined":true}, {"$map":[...]}, ...) that no expected value equals. After the end
 * record, a module's syntax error is rethrown so that Node prints its location on stderr.
 */

/** Input the harness reads from stdin. */
export interface HarnessSpec {
  /** The workspace directory: stripped from error texts so they name files relatively. */
  root: string;
  /**
   * Sent back in every record. Code under test never sees it (it lives in the harness's module
   * scope, read from stdin before that code loads), so it cannot forge records.
   */
  nonce: string;
  suites: HarnessSuite[];
}

export interface HarnessSuite {
  /** file: URL of the module under test. */
  module: string;
  /** The exports put in scope of every call (missing ones are undefined). */
  names: string[];
  calls: string[];
}

export const HARNESS_SOURCE = String.raw`
import { readFileSync, writeSync } from "node:fs";
const stringify = JSON.stringify;
const keysOf = Object.keys;
const isArray = Array.isArray;
const exit = process.exit.bind(process);
const spec = JSON.parse(readFileSync(0, "utf8"));
// Code under test has no business sending signals (the permission model does not cover them).
const noSignals = () => {
  throw new Error("sending signals is not allowed in the sandbox");
};
process.kill = noSignals;
process._kill = noSignals;
const rootUrl = "file://" + spec.root + "/";

const nonce = spec.nonce;

function emit(record) {
  record.k = nonce;
  const bytes = Buffer.from(stringify(record) + "\n");
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(3, bytes, offset);
    } catch (error) {
      if (!error || error.code !== "EAGAIN") throw error;
    }
  }
}

function clean(text, limit) {
  let out = String(text).split(rootUrl).join("").split(spec.root + "/").join("");
  if (out.length > limit) out = out.slice(0, limit) + "...";
  return out;
}

function describeError(error) {
  try {
    if (error instanceof Error) {
      const stack = String(error.stack || "").split("\n");
      // Frames of the harness itself also live under the root URL, as "[eval1]".
      const inWorkspace = (line) => line.includes(rootUrl) || line.includes(spec.root + "/");
      const where = stack.find((line) => inWorkspace(line) && !line.includes("[eval")) || "";
      return {
        name: clean(error.name, 60),
        message: clean(error.message, 500),
        where: clean(where.trim(), 200),
        stack: clean(stack.slice(0, 8).join("\n"), 1200),
      };
    }
    return { name: "thrown value", message: clean(String(error), 500), where: "", stack: "" };
  } catch {
    return { name: "thrown value", message: "(unreadable)", where: "", stack: "" };
  }
}

const NODE_BUDGET = 20000;

function encode(value) {
  let nodes = 0;
  const active = new Set();
  const walk = (v, depth) => {
    if (++nodes > NODE_BUDGET || depth > 40) throw new RangeError("too large");
    if (v === null) return null;
    switch (typeof v) {
      case "string":
      case "boolean":
        return v;
      case "number":
        if (Number.isFinite(v)) return v === 0 ? 0 : v;
        return { $number: String(v) };
      case "undefined":
        return { $undefined: true };
      case "bigint":
        return { $bigint: String(v) };
      case "function":
        return { $function: v.name || "anonymous" };
      case "symbol":
        return { $symbol: String(v) };
    }
    if (active.has(v)) return { $cycle: true };
    active.add(v);
    let out;
    if (isArray(v)) {
      out = [];
      for (let i = 0; i < v.length; i++) out.push(walk(v[i], depth + 1));
    } else if (v instanceof Map) {
      out = { $map: [...v].map(([k, x]) => [walk(k, depth + 1), walk(x, depth + 1)]) };
    } else if (v instanceof Set) {
      out = { $set: [...v].map((x) => walk(x, depth + 1)) };
    } else if (v instanceof Date) {
      out = { $date: String(v.getTime()) };
    } else if (v instanceof Error) {
      out = { $error: String(v.message) };
    } else if (typeof v.then === "function") {
      out = { $promise: true };
    } else {
      out = {};
      for (const key of keysOf(v).sort()) out[key] = walk(v[key], depth + 1);
    }
    active.delete(v);
    return out;
  };
  try {
    return walk(value, 0);
  } catch (error) {
    if (error instanceof RangeError) return { $tooLarge: true };
    throw error;
  }
}

let syntaxError;
for (let s = 0; s < spec.suites.length; s++) {
  const suite = spec.suites[s];
  let mod;
  try {
    mod = await import(suite.module);
  } catch (error) {
    emit({ t: "load", s, ok: false, error: describeError(error) });
    if (error instanceof SyntaxError && !syntaxError) syntaxError = error;
    continue;
  }
  const exported = keysOf(mod);
  emit({ t: "load", s, ok: true, exports: exported.slice(0, 50) });
  const values = suite.names.map((name) => (exported.includes(name) ? mod[name] : undefined));
  for (let i = 0; i < suite.calls.length; i++) {
    let record;
    try {
      const run = new Function(...suite.names, '"use strict"; return (' + suite.calls[i] + ");");
      record = { t: "case", s, i, ok: true, value: encode(run(...values)) };
    } catch (error) {
      record = { t: "case", s, i, ok: false, error: describeError(error) };
    }
    emit(record);
  }
}
emit({ t: "end" });
// Thrown uncaught, a syntax error is printed to stderr with its file, line and a caret.
if (syntaxError) throw syntaxError;
exit(0);
`;
