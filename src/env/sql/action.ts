/** Parsing the agent's action: "query: <SQL>" or "answer: <SQL>". */

export interface SqlAction {
  kind: "query" | "answer";
  /** The statement without surrounding code fences and trailing semicolons; may be empty. */
  sql: string;
}

const PREFIX = /^(?:action\s*:\s*)?(query|answer)\s*:/i;

/** Removes a surrounding Markdown code fence or pair of backticks, if any. */
function unfence(text: string): string {
  if (text.startsWith("```") && text.endsWith("```") && text.length >= 6) {
    const inner = text.slice(3, -3);
    // Drop an opening line that holds nothing but a language tag ("```sql").
    const firstLine = /^(?:sql|sqlite|sqlite3)?[^\S\n]*\n/i.exec(inner.slice(0, 40));
    return (firstLine ? inner.slice(firstLine[0].length) : inner).trim();
  }
  if (text.length >= 2 && text.startsWith("`") && text.endsWith("`")) {
    return text.slice(1, -1).trim();
  }
  return text;
}

function dropTrailingSemicolons(sql: string): string {
  let end = sql.length;
  while (end > 0 && (sql[end - 1] === ";" || /\s/.test(sql[end - 1] as string))) end--;
  return sql.slice(0, end);
}

/** The action, or undefined when it names neither query nor answer. */
export function parseAction(text: string): SqlAction | undefined {
  const action = unfence(text.trim());
  const match = PREFIX.exec(action.slice(0, 64));
  if (!match) return undefined;
  const kind = (match[1] as string).toLowerCase() as SqlAction["kind"];
  const sql = dropTrailingSemicolons(unfence(action.slice(match[0].length).trim()));
  return { kind, sql };
}
