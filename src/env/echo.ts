/**
 * Agent-written text quoted back in an observation (an invalid action, an unknown name): one line,
 * at most MAX_ECHO characters, so that a huge action cannot become a huge observation.
 */

export const MAX_ECHO = 60;

export function clipText(text: string, max = MAX_ECHO): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

/** As clipText, without the whitespace around the text. */
export function clipTrimmed(text: string, max = MAX_ECHO): string {
  return clipText(text.trim(), max);
}
