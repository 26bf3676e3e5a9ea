/** Echoed input is cut to this many characters, so a huge action cannot bloat an observation. */
export const MAX_ECHO = 60;

/** Agent-written text as echoed in errors: one line, at most MAX_ECHO characters. */
export function echo(raw: string): string {
  const line = raw.replace(/\s+/g, " ").trim();
  return line.length > MAX_ECHO ? `${line.slice(0, MAX_ECHO - 3)}...` : line;
}
