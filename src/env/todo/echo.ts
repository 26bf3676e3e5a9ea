/** Agent-written text echoed in errors is cut to about this many characters. */
export const MAX_ECHO = 60;

/**
 * Agent-written text as echoed in errors: one line, at most `max` characters, so a huge action
 * cannot become a huge observation.
 */
export function clip(text: string, max = MAX_ECHO): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}
