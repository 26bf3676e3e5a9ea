/**
 * Anthropic Messages through the official SDK. The system prompt is a top-level field; tool
 * calls and tool results travel as content blocks. SDK retries are off (see retry.ts); the SDK's
 * per-call warnings (deprecated model names) are shown once per process (sdk-warnings.ts).
 */
import Anthropic from "@anthropic-ai/sdk";
import type {
  MessageCreateParamsNonStreaming,
  MessageParam,
} from "@anthropic-ai/sdk/resources/messages";
import { toModelError } from "../http-errors.js";
import { createNodeFetch } from "../http-transport.js";
import { modelSecrets } from "../secrets.js";
import type { ModelSpec } from "../spec.js";
import {
  type ChatMessage,
  type Model,
  ModelError,
  type ModelRequest,
  type ModelResponse,
  type ToolCall,
} from "../types.js";
import { onceEach } from "./sdk-warnings.js";

/** Anthropic requires max_tokens; used when the agent sets none. */
export const DEFAULT_MAX_TOKENS = 1024;

export interface AnthropicModelOptions {
  spec: ModelSpec;
  apiKey?: string;
  /** For tests against a local fake server. */
  baseUrl?: string;
  /** Largest response body accepted, in bytes (reply-limit.ts). */
  maxReplyBytes?: number;
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/** Consecutive messages of one role merge into one, as the Messages API requires alternation. */
function toWireMessages(messages: readonly ChatMessage[]): MessageParam[] {
  const wire: MessageParam[] = [];
  const append = (role: "user" | "assistant", blocks: Exclude<MessageParam["content"], string>) => {
    const last = wire.at(-1);
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else wire.push({ role, content: [...blocks] });
  };
  for (const message of messages) {
    if (message.role === "system") continue;
    if (message.role === "user") append("user", [{ type: "text", text: message.content }]);
    if (message.role === "tool") {
      append("user", [
        { type: "tool_result", tool_use_id: message.toolCallId, content: message.content },
      ]);
    }
    if (message.role === "assistant") {
      append("assistant", [
        ...(message.content ? [{ type: "text" as const, text: message.content }] : []),
        ...(message.toolCalls ?? []).map((call) => ({
          type: "tool_use" as const,
          id: call.id,
          name: call.name,
          input: parseArguments(call.arguments),
        })),
      ]);
    }
  }
  return wire;
}

/**
 * The Messages body. The API has no log-probabilities: a request for them (logprobs,
 * topLogprobs, tokenIds) is a ModelError here, before anything is sent, never a reply without.
 */
export function anthropicRequestBody(
  spec: ModelSpec,
  request: ModelRequest,
): MessageCreateParamsNonStreaming {
  const params = request.params ?? {};
  if (params.logprobs || params.topLogprobs !== undefined || params.tokenIds) {
    throw new ModelError(
      `anthropic:${spec.model} cannot return log-probabilities (the Messages API has none); ` +
        "use an OpenAI-compatible server such as vLLM, or leave logprobs unset",
      { retryable: false },
    );
  }
  const system = request.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n\n");
  return {
    model: spec.model,
    max_tokens: params.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: toWireMessages(request.messages),
    ...(system ? { system } : {}),
    ...(request.tools?.length
      ? {
          tools: request.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.parameters as { type: "object" },
          })),
        }
      : {}),
    ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
    ...(params.topP !== undefined ? { top_p: params.topP } : {}),
    ...(params.stop?.length ? { stop_sequences: params.stop } : {}),
  };
}

export function createAnthropicModel(options: AnthropicModelOptions): Model {
  const { spec } = options;
  const secrets = modelSecrets({ spec, ...(options.apiKey ? { apiKey: options.apiKey } : {}) });
  const client = new Anthropic({
    apiKey: options.apiKey ?? "no-key",
    ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
    maxRetries: 0,
    fetch: createNodeFetch(
      options.maxReplyBytes === undefined ? {} : { maxBodyBytes: options.maxReplyBytes },
    ),
    // The SDKs would print raw server data to the console; errors reach the user as ModelErrors.
    logLevel: "off",
    timeout: 24 * 60 * 60 * 1000,
  });
  return {
    id: `anthropic:${spec.model}`,
    async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
      try {
        const body = anthropicRequestBody(spec, request);
        const message = await onceEach(() =>
          client.messages.create(body, signal ? { signal } : {}),
        );
        const toolCalls: ToolCall[] = [];
        let content = "";
        for (const block of message.content) {
          if (block.type === "text") content += block.text;
          if (block.type === "tool_use") {
            toolCalls.push({
              id: block.id,
              name: block.name,
              arguments: JSON.stringify(block.input),
            });
          }
        }
        return {
          content,
          toolCalls,
          usage: {
            inputTokens: message.usage.input_tokens,
            outputTokens: message.usage.output_tokens,
          },
          finishReason: message.stop_reason ?? "unknown",
          model: message.model,
        };
      } catch (error) {
        throw toModelError(error, {
          ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
          secrets,
        });
      }
    },
  };
}
