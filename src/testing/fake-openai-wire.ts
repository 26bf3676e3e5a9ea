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

function chunk(
  completion: ResolvedCompletion,
  choice: { delta: Record<string, unknown>; finish_reason: string | null } | undefined,
  usage: ReturnType<typeof usageBody> | null | undefined,
) {
  return {
    id: completion.id,
    object: "chat.completion.chunk",
    created: completion.created,
    model: completion.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: choice === undefined ? [] : [{ index: 0, ...choice, logprobs: null }],
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
    const last = messages[messages.length - 1];
    return {
      request: {
        model,
        stream: stream === true,
        streamUsage: stream_options?.include_usage === true,
        promptText: messages.map(messageText).join("\n"),
        lastMessageText: last === undefined ? "" : contentText(last.content),
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
          logprobs: null,
          finish_reason: completion.finishReason,
        },
      ],
      usage: usageBody(completion),
    };
  },

  streamEvents(completion, includeUsage) {
    const usage = includeUsage ? null : undefined;
    const delta = (d: Record<string, unknown>) =>
      chunk(completion, { delta: d, finish_reason: null }, usage);
    const chunks = [delta({ role: "assistant", content: "", refusal: null })];
    for (const piece of textPieces(completion.content)) chunks.push(delta({ content: piece }));
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
    chunks.push(chunk(completion, { delta: {}, finish_reason: completion.finishReason }, usage));
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
