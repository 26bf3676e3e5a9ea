/**
 * Per-token log-probabilities: checking a request for them and reading them from an
 * OpenAI-compatible reply (`choices[0].logprobs.content[]`, each `{token, logprob, bytes,
 * top_logprobs}`), validated with zod.
 *
 * - No block at all (`logprobs` absent or null, or its `content` null): the server ignored the
 *   request, and the response simply has none; the caller decides what that means (the RL model
 *   policy refuses it by default).
 * - A block that is there but malformed: a ModelError in one line, never dropped in silence.
 *   Not retried: a server that writes the block in another shape does so on every call.
 * - With `tokenIds` (vLLM's `return_tokens_as_token_ids`), each token must read "token_id:N".
 */
import { z } from "zod";
import { type GenerationParams, ModelError, type TokenLogprob } from "./types.js";

/** vLLM's spelling of a token when `return_tokens_as_token_ids` is set. */
const TOKEN_ID = /^token_id:(\d+)$/;

/** Log-probabilities are ≤ 0 (log_softmax can reach 0, never exceed it). */
const logprobSchema = z.number().finite().max(0);

const alternativeSchema = z.looseObject({
  token: z.string(),
  logprob: logprobSchema,
  bytes: z.array(z.number().int()).nullish(),
});

const entrySchema = z.looseObject({
  token: z.string(),
  logprob: logprobSchema,
  bytes: z.array(z.number().int()).nullish(),
  top_logprobs: z.array(alternativeSchema).nullish(),
});

const blockSchema = z.looseObject({ content: z.array(entrySchema).nullish() });

/** "content[3].logprob" for a zod path. */
function pathText(path: readonly PropertyKey[]): string {
  let text = "logprobs";
  for (const key of path) text += typeof key === "number" ? `[${key}]` : `.${String(key)}`;
  return text;
}

function malformed(detail: string, where: string | undefined): ModelError {
  const from = where ? ` from ${where}` : "";
  return new ModelError(`malformed logprobs in the reply${from}: ${detail}`, {
    retryable: false,
  });
}

/**
 * A request's logprob settings, checked before anything is sent: `topLogprobs` and `tokenIds`
 * only make sense with `logprobs`.
 */
export function checkLogprobParams(params: GenerationParams | undefined): void {
  if (!params) return;
  const { logprobs, topLogprobs, tokenIds } = params;
  if (topLogprobs !== undefined) {
    if (!Number.isInteger(topLogprobs) || topLogprobs < 0) {
      throw new ModelError(`topLogprobs must be a whole number ≥ 0, got ${topLogprobs}`, {
        retryable: false,
      });
    }
    if (logprobs !== true) {
      throw new ModelError("topLogprobs needs logprobs: true", { retryable: false });
    }
  }
  if (tokenIds === true && logprobs !== true) {
    throw new ModelError("tokenIds needs logprobs: true", { retryable: false });
  }
}

function tokenIdOf(token: string, at: string, where: string | undefined): number {
  const match = TOKEN_ID.exec(token);
  if (!match) {
    throw malformed(
      `${at}.token is ${JSON.stringify(token.slice(0, 40))}, not "token_id:N" ` +
        "(tokenIds needs a vLLM server, which honours return_tokens_as_token_ids)",
      where,
    );
  }
  return Number(match[1]);
}

/**
 * The token log-probabilities in a choice's `logprobs` field (a whole reply's, or one stream
 * chunk's); undefined when the server sent none. `tokenIds` and `topLogprobs` say what was asked
 * for; `where` (the base URL) is named in errors.
 */
export function parseLogprobs(
  raw: unknown,
  options: { tokenIds?: boolean; topLogprobs?: boolean; where?: string } = {},
): TokenLogprob[] | undefined {
  if (raw === null || raw === undefined) return undefined;
  const parsed = blockSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const detail = issue ? `${pathText(issue.path)}: ${issue.message}` : "not an object";
    throw malformed(detail.replace(/\s+/g, " "), options.where);
  }
  const content = parsed.data.content;
  if (content === null || content === undefined) return undefined;
  return content.map((entry, index) => {
    const at = `logprobs.content[${index}]`;
    const out: TokenLogprob = { token: entry.token, logprob: entry.logprob };
    if (options.tokenIds) out.tokenId = tokenIdOf(entry.token, at, options.where);
    // OpenAI sends an empty list when no alternatives were asked for: kept only when they were.
    if (options.topLogprobs && entry.top_logprobs) {
      out.topLogprobs = entry.top_logprobs.map((alt, j) => ({
        token: alt.token,
        logprob: alt.logprob,
        ...(options.tokenIds
          ? { tokenId: tokenIdOf(alt.token, `${at}.top_logprobs[${j}]`, options.where) }
          : {}),
      }));
    }
    return out;
  });
}

function isLogprob(value: unknown): boolean {
  return typeof value === "number" && Number.isFinite(value) && value <= 0;
}

function isAlternative(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const alt = value as Record<string, unknown>;
  return (
    typeof alt.token === "string" &&
    isLogprob(alt.logprob) &&
    (alt.tokenId === undefined || Number.isInteger(alt.tokenId))
  );
}

/** Whether a value (e.g. read back from the response cache) is a well-formed list. */
export function isTokenLogprobList(value: unknown): value is TokenLogprob[] {
  return (
    Array.isArray(value) &&
    value.every(
      (entry) =>
        isAlternative(entry) &&
        ((entry as TokenLogprob).topLogprobs === undefined ||
          (Array.isArray((entry as TokenLogprob).topLogprobs) &&
            (entry as TokenLogprob).topLogprobs?.every(isAlternative) === true)),
    )
  );
}
