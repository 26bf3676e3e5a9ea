/**
 * Known secrets (an API key, a password) replaced verbatim wherever text leaves the process
 * that holds them: stored rows, error messages, exports, replies sent into the sandbox. Below
 * every other folder, so the model layer and the sandbox share this one scrubber.
 */

/** Secrets shorter than this are not replaced verbatim (they would mangle ordinary words). */
export const MIN_SECRET_CHARS = 8;
export const REDACTED = "***";

/** The secrets worth scrubbing, long enough to be replaced safely, longest first. */
export function usable(secrets: readonly string[]): string[] {
  return [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_CHARS))].sort(
    (a, b) => b.length - a.length,
  );
}

/** Replaces every known secret in `text` (verbatim, and as it appears inside JSON strings). */
export function scrubKnownSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of usable(secrets)) {
    if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    // A secret with quotes or backslashes looks different inside JSON text.
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret && result.includes(escaped)) {
      result = result.split(escaped).join(REDACTED);
    }
  }
  return result;
}
