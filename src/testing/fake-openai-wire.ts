/** OpenAI Chat Completions wire format for the fake model server (POST /v1/chat/completions). */

import { z } from "zod";
import {
  argumentPieces,
  type ProviderWire,
  type ResolvedCompletion,
  textPieces,
  truncatedJson,
  validateBody,
} from "./fake-wire.js";

const SYSTEM_FINGERPRINT = "fp_clade_fake";

const contentSchema = z
  .union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))])
  .nullish();

const messageSchema = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: contentSchema,
  tool_calls: z
    .array(
      z.looseObject({
        id: z.string(),
        type: z.literal("function"),
        function: z.looseObject({ name: z.string(), arguments: z.string() }),
      }),
    )
    .nullish(),
  tool_call_id: z.string().optional(),
});

const requestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  /** vLLM's: logprob tokens written as "token_id:N". */
  return_tokens_as_token_ids: z.boolean().nullish(),
});

type OpenAIMessage = z.infer<typeof messageSchema>;

function contentText(content: OpenAIMessage["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? "").join(" ");
}

function messageText(message: OpenAIMessage): string {
  const calls = (message.tool_calls ?? []).map(
    (call) => `${call.function.name} ${call.function.arguments}`,
  );
  return [contentText(message.content), ...calls].join(" ");
}

/** OpenAI's error `type` (and `code`) by HTTP status. */
function errorKind(status: number): { type: string; code: string | null } {
  if (status === 401) return { type: "invalid_request_error", code: "invalid_api_key" };
  if (status === 404) return { type: "invalid_request_error", code: "unknown_url" };
  if (status === 429) return { type: "requests", code: "rate_limit_exceeded" };
  if (status >= 500) return { type: "server_error", code: null };
  return { type: "invalid_request_error", code: null };
}

function usageBody(completion: ResolvedCompletion) {
  const { inputTokens, outputTokens } = completion.usage;
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
  };
}

/** A choice's `logprobs`: the raw block, the tokens, or null (not asked for, or declined). */
function logprobsBody(completion: ResolvedCompletion): unknown {
  if (completion.rawLogprobs !== undefined) return completion.rawLogprobs;
  return completion.logprobs === undefined ? null : { content: completion.logprobs, refusal: null };
}

function chunk(
  completion: ResolvedCompletion,
  choice: { delta: Record<string, unknown>; finish_reason: string | null } | undefined,
  usage: ReturnType<typeof usageBody> | null | undefined,
  logprobs: unknown = null,
) {
  return {
    id: completion.id,
    object: "chat.completion.chunk",
    created: completion.created,
    model: completion.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: choice === undefined ? [] : [{ index: 0, ...choice, logprobs: logprobs ?? null }],
    // With include_usage, OpenAI sends `usage: null` on every chunk but the last.
    ...(usage === undefined ? {} : { usage }),
  };
}

function dataEvent(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

export const openaiWire: ProviderWire = {
  idPrefixes: { completion: "chatcmpl-", toolCall: "call_" },
  requestIdHeader: "x-request-id",

  readRequest(body) {
    const parsed = validateBody(requestSchema, body);
    if ("error" in parsed) return parsed;
    const { model, messages, stream, stream_options } = parsed.value;
    const { logprobs, top_logprobs, return_tokens_as_token_ids } = parsed.value;
    // As OpenAI: top_logprobs is only accepted beside logprobs: true.
    if (top_logprobs !== undefined && top_logprobs !== null && logprobs !== true) {
      return { error: "Invalid request body: top_logprobs requires logprobs to be true" };
    }
    const last = messages[messages.length - 1];
    return {
      request: {
        model,
        stream: stream === true,
        streamUsage: stream_options?.include_usage === true,
        promptText: messages.map(messageText).join("\n"),
        lastMessageText: last === undefined ? "" : contentText(last.content),
        ...(logprobs === true
          ? {
              logprobs: {
                ...(top_logprobs === undefined || top_logprobs === null
                  ? {}
                  : { top: top_logprobs }),
                tokenIds: return_tokens_as_token_ids === true,
              },
            }
          : {}),
      },
    };
  },

  completionBody(completion) {
    const hasCalls = completion.toolCalls.length > 0;
    return {
      id: completion.id,
      object: "chat.completion",
      created: completion.created,
      model: completion.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            // OpenAI sends null content beside tool calls; "" only when there is nothing at all.
            content: hasCalls && completion.content === "" ? null : completion.content,
            refusal: null,
            ...(hasCalls
              ? {
                  tool_calls: completion.toolCalls.map((call) => ({
                    id: call.id,
                    type: "function",
                    function: { name: call.name, arguments: call.arguments },
                  })),
                }
              : {}),
          },
          logprobs: logprobsBody(completion),
          finish_reason: completion.finishReason,
        },
      ],
      usage: usageBody(completion),
    };
  },

  streamEvents(completion, includeUsage) {
    const usage = includeUsage ? null : undefined;
    const delta = (d: Record<string, unknown>, logprobs?: unknown) =>
      chunk(completion, { delta: d, finish_reason: null }, usage, logprobs);
    const chunks = [delta({ role: "assistant", content: "", refusal: null })];
    // Log-probabilities ride with their tokens: one per text piece when they line up (the
    // default ones do), else all of them on the finishing chunk; a raw block on the first piece.
    const pieces = textPieces(completion.content);
    const entries = completion.logprobs;
    const perPiece = entries !== undefined && pieces.length > 0 && entries.length === pieces.length;
    pieces.forEach((piece, i) => {
      const logprobs =
        completion.rawLogprobs !== undefined
          ? i === 0
            ? completion.rawLogprobs
            : undefined
          : perPiece
            ? { content: [entries[i]], refusal: null }
            : undefined;
      chunks.push(delta({ content: piece }, logprobs));
    });
    completion.toolCalls.forEach((call, index) => {
      const head = {
        index,
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: "" },
      };
      chunks.push(delta({ tool_calls: [head] }));
      for (const piece of argumentPieces(call.arguments)) {
        chunks.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    });
    const last =
      entries !== undefined && !perPiece
        ? { content: entries, refusal: null }
        : completion.rawLogprobs !== undefined && pieces.length === 0
          ? completion.rawLogprobs
          : undefined;
    chunks.push(
      chunk(completion, { delta: {}, finish_reason: completion.finishReason }, usage, last),
    );
    if (includeUsage) chunks.push(chunk(completion, undefined, usageBody(completion)));
    return [...chunks.map(dataEvent), "data: [DONE]\n\n"];
  },

  malformedStreamEvent(completion) {
    const first = chunk(
      completion,
      { delta: { role: "assistant" }, finish_reason: null },
      undefined,
    );
    return `data: ${truncatedJson(first)}\n\n`;
  },

  errorBody(status, message) {
    return { error: { message, ...errorKind(status), param: null } };
  },
};
