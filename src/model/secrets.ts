/**
 * Credentials out of the model layer's text. Known secrets (the API key in use, a password in the
 * base URL) are replaced verbatim by the one scrubber (secrets/scrub.ts) wherever text could be
 * stored or shown: error messages, reply text, stored
 * request and response bodies. Error messages additionally lose anything key-shaped (patterns),
 * since providers quote keys we never knew; model replies do not, because a pattern would rewrite
 * legitimate text an agent acts on (e.g. `api_key = ...` in code).
 */
import { REDACTED, scrubKnownSecrets, usable } from "../secrets/scrub.js";
import type { ResolvedModel } from "./resolve.js";

export { MIN_SECRET_CHARS, REDACTED, scrubKnownSecrets } from "../secrets/scrub.js";

const CREDENTIAL_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  // OpenAI / Anthropic style keys: sk-..., sk-proj-..., sk-ant-api03-...
  [/\bsk-[A-Za-z0-9_*-]{4,}/g, `sk-${REDACTED}`],
  [/\bBearer\s+[^\s,;"']+/gi, `Bearer ${REDACTED}`],
  [/\b(authorization|x-api-key|api[-_]?key)(["']?\s*[:=]\s*["']?)[^\s,;"'&]+/gi, `$1$2${REDACTED}`],
  [/([?&](?:key|token|access_token)=)[^&\s"']+/gi, `$1${REDACTED}`],
  // user:password@ in URLs
  [/(\/\/[^\s/:@]+:)[^\s/@]+@/g, `$1${REDACTED}@`],
];

/** Removes credentials (known secrets and anything key-shaped) from a piece of text. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let result = scrubKnownSecrets(text, secrets);
  for (const [pattern, replacement] of CREDENTIAL_PATTERNS) {
    result = result.replace(pattern, replacement);
  }
  return result;
}

/**
 * A copy of a JSON-like value with every string scrubbed of the known secrets (object keys too).
 * Returns the value itself when nothing changed, so clean requests cost no copy.
 */
export function scrubDeep<T>(value: T, secrets: readonly string[]): T {
  const list = usable(secrets);
  if (list.length === 0) return value;
  const visit = (node: unknown): unknown => {
    if (typeof node === "string") return scrubKnownSecrets(node, list);
    if (Array.isArray(node)) {
      let changed = false;
      const copy = node.map((item) => {
        const next = visit(item);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? copy : node;
    }
    if (node !== null && typeof node === "object") {
      let changed = false;
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(node as Record<string, unknown>)) {
        const cleanKey = scrubKnownSecrets(key, list);
        const next = visit(item);
        if (next !== item || cleanKey !== key) changed = true;
        copy[cleanKey] = next;
      }
      return changed ? copy : node;
    }
    return node;
  };
  return visit(value) as T;
}

/** Everything secret about a model: its key and any credentials written into its base URL. */
export function modelSecrets(model: Pick<ResolvedModel, "apiKey" | "spec">): string[] {
  const secrets: string[] = [];
  if (model.apiKey) secrets.push(model.apiKey);
  if (model.spec.baseUrl) {
    try {
      const url = new URL(model.spec.baseUrl);
      for (const part of [url.password, url.username]) {
        if (part) secrets.push(part, decodeURIComponent(part));
      }
    } catch {
      // A spec that parsed has a valid URL; nothing to add otherwise.
    }
  }
  return usable(secrets);
}
