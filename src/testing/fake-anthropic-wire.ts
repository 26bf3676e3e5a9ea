/** Anthropic Messages wire format for the fake model server (POST /v1/messages). */

import { z } from "zod";
import {
  argumentPieces,
  type ProviderWire,
  type ResolvedCompletion,
  textPieces,
  truncatedJson,
  validateBody,
} from "./fake-wire.js";

const blockSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  content: z
    .union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))])
    .optional(),
});

const contentSchema = z.union([z.string(), z.array(blockSchema)]);

const requestSchema = z.looseObject({
  model: z.string().min(1),
  // Required by the real API; a client that forgets it should find out in tests.
  max_tokens: z.number().int().positive(),
  messages: z
    .array(z.looseObject({ role: z.enum(["user", "assistant"]), content: contentSchema }))
    .min(1),
  system: contentSchema.optional(),
  stream: z.boolean().optional(),
});

type Block = z.infer<typeof blockSchema>;

function blockText(block: Block): string {
  if (block.type === "tool_use") return `${block.name ?? ""} ${JSON.stringify(block.input ?? {})}`;
  if (block.type === "tool_result") return contentText(block.content ?? "");
  return block.text ?? "";
}

function contentText(content: string | Block[]): string {
  return typeof content === "string" ? content : content.map(blockText).join(" ");
}

/** Anthropic's stop_reason for an OpenAI finish_reason. */
const STOP_REASONS: Record<string, string> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  content_filter: "refusal",
};

/** Anthropic's error type by HTTP status. */
const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

/** Tool input must be a JSON object on this wire; anything else is a mistake in the script. */
function toolInput(call: ResolvedCompletion["toolCalls"][number]): Record<string, unknown> {
  let input: unknown;
  try {
    input = JSON.parse(call.arguments);
  } catch {
    input = undefined;
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new Error(
      `tool call "${call.name}": arguments must be a JSON object on the Anthropic endpoint`,
    );
  }
  return input as Record<string, unknown>;
}

function contentBlocks(completion: ResolvedCompletion) {
  const text = completion.content === "" ? [] : [{ type: "text", text: completion.content }];
  const tools = completion.toolCalls.map((call) => ({
    type: "tool_use",
    id: call.id,
    name: call.name,
    input: toolInput(call),
  }));
  return [...text, ...tools];
}

function messageBody(
  completion: ResolvedCompletion,
  content: unknown[],
  stopReason: string | null,
) {
  return {
    id: completion.id,
    type: "message",
    role: "assistant",
    model: completion.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: completion.usage.inputTokens,
      output_tokens: stopReason === null ? 0 : completion.usage.outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

function stopReason(completion: ResolvedCompletion): string {
  return STOP_REASONS[completion.finishReason] ?? completion.finishReason;
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

export const anthropicWire: ProviderWire = {
  idPrefixes: { completion: "msg_", toolCall: "toolu_" },
  requestIdHeader: "request-id",

  readRequest(body) {
    const parsed = validateBody(requestSchema, body);
    if ("error" in parsed) return parsed;
    const { model, messages, system, stream } = parsed.value;
    const texts = messages.map((message) => contentText(message.content));
    return {
      request: {
        model,
        stream: stream === true,
        streamUsage: true,
        promptText: [system === undefined ? "" : contentText(system), ...texts].join("\n"),
        lastMessageText: texts[texts.length - 1] ?? "",
      },
    };
  },

  completionBody(completion) {
    return messageBody(completion, contentBlocks(completion), stopReason(completion));
  },

  streamEvents(completion) {
    const blocks = contentBlocks(completion);
    const events = [event("message_start", { message: messageBody(completion, [], null) })];
    blocks.forEach((block, index) => {
      if (!("input" in block)) {
        events.push(
          event("content_block_start", { index, content_block: { type: "text", text: "" } }),
        );
        for (const text of textPieces(completion.content)) {
          events.push(event("content_block_delta", { index, delta: { type: "text_delta", text } }));
        }
      } else {
        const start = { ...block, input: {} };
        events.push(event("content_block_start", { index, content_block: start }));
        for (const partial_json of argumentPieces(JSON.stringify(block.input))) {
          const delta = { type: "input_json_delta", partial_json };
          events.push(event("content_block_delta", { index, delta }));
        }
      }
      events.push(event("content_block_stop", { index }));
    });
    const delta = { stop_reason: stopReason(completion), stop_sequence: null };
    const usage = { output_tokens: completion.usage.outputTokens };
    events.push(event("message_delta", { delta, usage }));
    events.push(event("message_stop", {}));
    return events;
  },

  malformedStreamEvent(completion) {
    const start = { type: "message_start", message: messageBody(completion, [], null) };
    return `event: message_start\ndata: ${truncatedJson(start)}\n\n`;
  },

  errorBody(status, message) {
    return { type: "error", error: { type: ERROR_TYPES[status] ?? "api_error", message } };
  },
};
