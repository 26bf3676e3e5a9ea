/**
 * Splitting monolithic transform code into units without a model. BLADE asks an LLM to rewrite
 * an agent's transform code as units (verb, code, input → output columns; docs/blade-spec.md
 * §2.2); offline, clade splits it by statement and reads each statement's verb and columns from
 * its shape. A model role (eval/blade) does it BLADE's way when one is given.
 *
 * - SQL: one unit per SELECT statement. `SELECT DISTINCT` → deduplicate; `GROUP BY` → groupby;
 *   only `WHERE` → filter; only `ORDER BY` → orderby; otherwise derive (impute when a new value
 *   of a column is `coalesce(col, …)`/`ifnull(col, …)`), one mapping entry per new or replaced
 *   column, its inputs being the known columns the expression names.
 * - Python: one unit per top-level statement on `df` (continuation lines and bracketed spans
 *   kept together). `df[…] = …` / `df.assign(…)` → derive (impute with `.fillna`);
 *   `df = df[…]`, `.query`, `.dropna`, `.loc[…]` → filter; `.drop_duplicates` → deduplicate;
 *   `.sort_values` → orderby; `.groupby` → groupby; `df = df.fillna(…)` → impute. Statements
 *   that are none of these (imports, helper variables) are kept as code in front of the next
 *   unit, so every unit still runs.
 * What this cannot see (a column built through a helper variable, say) gets a coarser unit; the
 * unit's values are still hashed exactly, so value matching is unaffected by the split.
 */
import type { RuntimeName } from "./runtime/types.js";
import type { TransformUnit, UnitVerb } from "./specs.js";

/** Splits code into statements at `;` outside quotes and brackets (SQL). */
export function splitSqlStatements(code: string): string[] {
  const statements: string[] = [];
  let current = "";
  let quote: string | undefined;
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const ch = code[i] as string;
    if (quote) {
      current += ch;
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "-" && code[i + 1] === "-") {
      const end = code.indexOf("\n", i);
      i = end < 0 ? code.length : end - 1;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "(") depth++;
    else if (ch === ")") depth--;
    if (ch === ";" && depth <= 0) {
      if (current.trim()) statements.push(current.trim());
      current = "";
      continue;
    }
    current += ch;
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}

function identifiers(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/"([^"]+)"|`([^`]+)`|\b([A-Za-z_][A-Za-z0-9_]*)\b/g)) {
    names.add((match[1] ?? match[2] ?? match[3]) as string);
  }
  return names;
}

function knownInputs(text: string, known: ReadonlySet<string>): string[] {
  return [...identifiers(text)].filter((name) => known.has(name)).sort();
}

/** Top-level comma-separated items of a SELECT list. */
function selectItems(list: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = "";
  for (const ch of list) {
    if (quote) {
      current += ch;
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      items.push(current.trim());
      current = "";
      continue;
    }
    current += ch;
  }
  if (current.trim()) items.push(current.trim());
  return items;
}

/** The text with everything inside brackets and quotes blanked out (same length). */
function topLevelOnly(text: string): string {
  let out = "";
  let depth = 0;
  let quote: string | undefined;
  for (const ch of text) {
    if (quote) {
      out += " ";
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      out += " ";
      continue;
    }
    if (ch === "(") depth++;
    out += depth > 0 ? " " : ch;
    if (ch === ")") depth = Math.max(0, depth - 1);
  }
  return out;
}

function sqlUnit(statement: string, known: Set<string>): TransformUnit {
  const select = /^\s*select\s+(distinct\s+)?([\s\S]*)$/i.exec(statement);
  if (!select) {
    return { verb: "derive", code: statement, mapping: [], groupbyCols: [] };
  }
  const rest = select[2] as string;
  // Clause keywords count only at the statement's own level, not inside subqueries or quotes.
  const level = topLevelOnly(rest);
  const fromAt = level.search(/\bfrom\b/i);
  const list = fromAt < 0 ? rest : rest.slice(0, fromAt);
  const clause = (pattern: RegExp): string | undefined => {
    if (fromAt < 0) return undefined;
    const match = pattern.exec(level.slice(fromAt));
    if (!match) return undefined;
    const start = fromAt + match.index + match[0].length - (match[1] as string).length;
    return rest.slice(start, start + (match[1] as string).length);
  };
  const where = clause(
    /\bwhere\b([\s\S]*?)(?=\b(?:group\s+by|order\s+by|having|limit|qualify)\b|$)/i,
  );
  const groupBy = clause(/\bgroup\s+by\b([\s\S]*?)(?=\b(?:order\s+by|having|limit|qualify)\b|$)/i);
  const orderBy = clause(/\border\s+by\b([\s\S]*?)(?=\blimit\b|$)/i);
  const items = selectItems(list);
  const newColumns: [string[], string][] = [];
  let impute = false;
  for (const item of items) {
    if (item === "*" || /^\*\s+(exclude|replace)\b/i.test(item)) {
      const replaced = /^\*\s+replace\s*\(([\s\S]*)\)\s*$/i.exec(item);
      if (replaced) {
        for (const part of selectItems(replaced[1] as string)) {
          const alias = /\s+as\s+"?([A-Za-z_][\w]*)"?\s*$/i.exec(part);
          if (!alias) continue;
          const expression = part.slice(0, alias.index);
          if (/\b(coalesce|ifnull)\s*\(/i.test(expression)) impute = true;
          newColumns.push([knownInputs(expression, known), alias[1] as string]);
        }
      }
      continue;
    }
    const alias = /\s+as\s+"?([A-Za-z_][\w]*)"?\s*$/i.exec(item);
    const name = alias ? (alias[1] as string) : item.replace(/"/g, "");
    const expression = alias ? item.slice(0, alias.index) : item;
    if (!alias && known.has(name)) continue; // a column carried over as is
    if (/\b(coalesce|ifnull)\s*\(/i.test(expression) && known.has(name)) impute = true;
    newColumns.push([knownInputs(expression, known), name]);
  }
  let verb: UnitVerb;
  let mapping: [string[], string][];
  let groupbyCols: string[] = [];
  if (select[1]) {
    // BLADE's units for a deduplication map nothing, so they add no node (§2.3).
    verb = "deduplicate";
    mapping = [];
  } else if (groupBy !== undefined) {
    verb = "groupby";
    groupbyCols = knownInputs(groupBy, known);
    mapping = newColumns;
  } else if (newColumns.length === 0 && where !== undefined) {
    verb = "filter";
    mapping = [[knownInputs(where, known), "ALL"]];
  } else if (newColumns.length === 0 && orderBy !== undefined) {
    verb = "orderby";
    mapping = [[knownInputs(orderBy, known), "ALL"]];
  } else {
    verb = impute ? "impute" : "derive";
    mapping = newColumns;
  }
  for (const [, output] of mapping) if (output !== "ALL") known.add(output);
  return { verb, code: statement, mapping, groupbyCols };
}

/** Top-level Python statements: a line with no indentation starts one, unless inside brackets. */
export function splitPythonStatements(code: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let depth = 0;
  let continued = false;
  for (const line of code.split("\n")) {
    const startsNew = depth === 0 && !continued && line.length > 0 && !/^[\s#]/.test(line);
    if (startsNew && current.some((l) => l.trim() !== "")) {
      statements.push(current.join("\n").trimEnd());
      current = [];
    }
    current.push(line);
    const withoutStrings = line.replace(/(["'])(?:\\.|(?!\1).)*\1/g, '""').replace(/#.*$/, "");
    for (const ch of withoutStrings) {
      if (ch === "(" || ch === "[" || ch === "{") depth++;
      if (ch === ")" || ch === "]" || ch === "}") depth = Math.max(0, depth - 1);
    }
    continued = /\\\s*$/.test(line);
  }
  if (current.some((l) => l.trim() !== "")) statements.push(current.join("\n").trimEnd());
  return statements.filter((s) => !/^\s*(#.*)?$/.test(s));
}

function quotedNames(text: string, known: ReadonlySet<string>): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(
    /\[\s*(["'])([^"']+)\1\s*\]|\bdf\.([A-Za-z_]\w*)\b|(["'])([^"']+)\4/g,
  )) {
    const name = (match[2] ?? match[3] ?? match[5]) as string;
    if (known.has(name)) names.add(name);
  }
  return [...names].sort();
}

function pythonUnit(statement: string, known: Set<string>): TransformUnit | undefined {
  const assignColumn = /^df\s*\[\s*(["'])([^"']+)\1\s*\]\s*=(?!=)([\s\S]*)$/.exec(statement);
  if (assignColumn) {
    const output = assignColumn[2] as string;
    const expression = assignColumn[3] as string;
    const verb: UnitVerb =
      /\.fillna\s*\(/.test(expression) && known.has(output) ? "impute" : "derive";
    const unit: TransformUnit = {
      verb,
      code: statement,
      mapping: [[quotedNames(expression, known), output]],
      groupbyCols: [],
    };
    known.add(output);
    return unit;
  }
  const reassign = /^df\s*=(?!=)\s*([\s\S]*)$/.exec(statement);
  if (!reassign) return undefined;
  const expression = reassign[1] as string;
  if (/\.groupby\s*\(/.test(expression)) {
    const by = /\.groupby\s*\(([^)]*)\)/.exec(expression);
    const groupbyCols = by ? quotedNames(by[1] as string, known) : [];
    const after = expression.slice((by?.index ?? 0) + (by?.[0].length ?? 0));
    const outputs = [...after.matchAll(/([A-Za-z_]\w*)\s*=\s*\(/g)].map((m) => m[1] as string);
    const mapping: [string[], string][] = outputs.map((name) => [quotedNames(after, known), name]);
    for (const name of outputs) known.add(name);
    return { verb: "groupby", code: statement, mapping, groupbyCols };
  }
  if (/\.drop_duplicates\s*\(/.test(expression)) {
    return { verb: "deduplicate", code: statement, mapping: [], groupbyCols: [] };
  }
  if (/\.sort_values\s*\(/.test(expression)) {
    return {
      verb: "orderby",
      code: statement,
      mapping: [[quotedNames(expression, known), "ALL"]],
      groupbyCols: [],
    };
  }
  if (/\.fillna\s*\(/.test(expression)) {
    const inputs = quotedNames(expression, known);
    return {
      verb: "impute",
      code: statement,
      mapping: inputs.map((name): [string[], string] => [[name], name]),
      groupbyCols: [],
    };
  }
  const assigned = /\.assign\s*\(([\s\S]*)\)\s*$/.exec(expression);
  if (assigned) {
    const outputs = [...(assigned[1] as string).matchAll(/([A-Za-z_]\w*)\s*=(?!=)/g)].map(
      (m) => m[1] as string,
    );
    const mapping: [string[], string][] = outputs.map((name) => [
      quotedNames(assigned[1] as string, known),
      name,
    ]);
    for (const name of outputs) known.add(name);
    return { verb: "derive", code: statement, mapping, groupbyCols: [] };
  }
  // Selecting columns is no unit (BLADE's conversion): it rides along with the next unit.
  if (/^df\s*\[\s*\[/.test(expression.trim())) return undefined;
  if (/^df\s*(\[|\.loc\s*\[|\.query\s*\(|\.dropna\s*\()/.test(expression.trim())) {
    return {
      verb: "filter",
      code: statement,
      mapping: [[quotedNames(expression, known), "ALL"]],
      groupbyCols: [],
    };
  }
  return undefined;
}

/**
 * The units of monolithic transform code, in order. `columns` are the data's columns (so that
 * inputs are told apart from functions and keywords). Empty code gives no units.
 */
export function splitTransformCode(
  code: string,
  runtime: RuntimeName,
  columns: readonly string[],
): TransformUnit[] {
  const known = new Set(columns);
  if (runtime === "sql") return splitSqlStatements(code).map((s) => sqlUnit(s, known));
  const units: TransformUnit[] = [];
  let pending: string[] = [];
  for (const statement of splitPythonStatements(code)) {
    const unit = pythonUnit(statement.trim(), known);
    if (!unit) {
      pending.push(statement);
      continue;
    }
    units.push({ ...unit, code: [...pending, statement].join("\n") });
    pending = [];
  }
  if (pending.length > 0) {
    // Trailing statements that changed nothing we can name: one derive unit of their own.
    units.push({ verb: "derive", code: pending.join("\n"), mapping: [], groupbyCols: [] });
  }
  return units;
}
