/**
 * OpenAI Chat Completions through the official SDK: OpenAI itself and every server that speaks the
 * same protocol (vLLM, Ollama, llama.cpp's server, ...). The SDK's own retries are off: clade's
 * retry policy (retry.ts) applies the same rules to every provider and is tested against faults.
 * Whatever the SDK warns when a call starts is shown once per process (sdk-warnings.ts).
 */
import OpenAI from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { toModelError } from "../http-errors.js";
import { createNodeFetch } from "../http-transport.js";
import { checkLogprobParams, parseLogprobs } from "../logprobs.js";
import { DEFAULT_MAX_REPLY_BYTES, ReplyTooLargeError } from "../reply-limit.js";
import { modelSecrets } from "../secrets.js";
import type { ModelSpec } from "../spec.js";
import type {
  ChatMessage,
  Model,
  ModelRequest,
  ModelResponse,
  TokenLogprob,
  ToolCall,
} from "../types.js";
import { onceEach } from "./sdk-warnings.js";

export interface OpenAIModelOptions {
  spec: ModelSpec;
  /** Absent for local servers that need no key. */
  apiKey?: string;
  /** Stream the reply (token by token on the wire; the result is the same). */
  stream?: boolean;
  /** Largest reply accepted, in bytes (reply-limit.ts); default DEFAULT_MAX_REPLY_BYTES. */
  maxReplyBytes?: number;
}

interface LogprobReading {
  tokenIds: boolean;
  topLogprobs: boolean;
  where?: string;
}

/** A base URL fit for an error message: without credentials or a query. */
function publicUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = "";
    url.password = "";
    url.search = "";
    url.hash = "";
    return url.toString().replace(/\/+$/, "");
  } catch {
    return "the server";
  }
}

function toWireMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "assistant":
      return {
        role: "assistant",
        content: message.content,
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: "function" as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}

/** Chat Completions' body plus the fields only vLLM knows. */
export type OpenAIRequestBody = ChatCompletionCreateParamsNonStreaming & {
  /** vLLM: tokens in `logprobs` come back as "token_id:N" (GenerationParams.tokenIds). */
  return_tokens_as_token_ids?: boolean;
};

/**
 * The request body, shared by the streaming and non-streaming paths. Log-probabilities, when
 * asked for, go as `logprobs: true` (+ `top_logprobs`, and vLLM's `return_tokens_as_token_ids`
 * with `tokenIds`); inconsistent settings are a ModelError before anything is sent.
 */
export function openAIRequestBody(spec: ModelSpec, request: ModelRequest): OpenAIRequestBody {
  const params = request.params ?? {};
  checkLogprobParams(params);
  const tools: ChatCompletionTool[] | undefined = request.tools?.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
  return {
    model: spec.model,
    messages: request.messages.map(toWireMessage),
    ...(tools?.length ? { tools } : {}),
    ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
    ...(params.topP !== undefined ? { top_p: params.topP } : {}),
    ...(params.seed !== undefined ? { seed: params.seed } : {}),
    ...(params.stop?.length ? { stop: params.stop } : {}),
    // OpenAI's newer models only take max_completion_tokens; compatible servers know max_tokens.
    ...(params.maxTokens !== undefined
      ? spec.provider === "openai"
        ? { max_completion_tokens: params.maxTokens }
        : { max_tokens: params.maxTokens }
      : {}),
    ...(params.logprobs === true ? { logprobs: true } : {}),
    ...(params.logprobs === true && params.topLogprobs !== undefined
      ? { top_logprobs: params.topLogprobs }
      : {}),
    ...(params.logprobs === true && params.tokenIds === true
      ? { return_tokens_as_token_ids: true }
      : {}),
  };
}

export function createOpenAIModel(options: OpenAIModelOptions): Model {
  const { spec } = options;
  const maxReplyBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  const secrets = modelSecrets({ spec, ...(options.apiKey ? { apiKey: options.apiKey } : {}) });
  const client = new OpenAI({
    // The SDK insists on a key; local servers ignore the placeholder.
    apiKey: options.apiKey ?? "no-key",
    ...(spec.baseUrl ? { baseURL: spec.baseUrl } : {}),
    maxRetries: 0,
    fetch: createNodeFetch({ maxBodyBytes: maxReplyBytes }),
    // The SDKs would print raw server data to the console; errors reach the user as ModelErrors.
    logLevel: "off",
    // Per-attempt timeouts come from the retry policy's AbortSignal.
    timeout: 24 * 60 * 60 * 1000,
  });
  const id =
    spec.provider === "openai" ? `openai:${spec.model}` : `openai-compatible:${spec.model}`;

  /** How to read the reply's logprobs; undefined when none were asked for (any sent are ignored). */
  function logprobReading(request: ModelRequest): LogprobReading | undefined {
    if (request.params?.logprobs !== true) return undefined;
    return {
      tokenIds: request.params.tokenIds === true,
      topLogprobs: request.params.topLogprobs !== undefined,
      ...(spec.baseUrl ? { where: publicUrl(spec.baseUrl) } : {}),
    };
  }

  async function complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    const body = openAIRequestBody(spec, request);
    const reading = logprobReading(request);
    try {
      if (options.stream) return await completeStreaming(body, reading, signal);
      const completion = await onceEach(() =>
        client.chat.completions.create(body, signal ? { signal } : {}),
      );
      const choice = completion.choices[0];
      if (!choice) throw new Error("the server returned no choices");
      const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).flatMap((call) =>
        call.type === "function"
          ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }]
          : [],
      );
      const logprobs = reading ? parseLogprobs(choice.logprobs, reading) : undefined;
      return {
        content: choice.message.content ?? "",
        toolCalls,
        usage: {
          inputTokens: completion.usage?.prompt_tokens ?? 0,
          outputTokens: completion.usage?.completion_tokens ?? 0,
        },
        finishReason: choice.finish_reason ?? "unknown",
        model: completion.model ?? spec.model,
        ...(logprobs ? { logprobs } : {}),
      };
    } catch (error) {
      throw toModelError(error, {
        ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}),
        secrets,
      });
    }
  }

  async function completeStreaming(
    body: OpenAIRequestBody,
    reading: LogprobReading | undefined,
    signal?: AbortSignal,
  ): Promise<ModelResponse> {
    const stream = await onceEach(() =>
      client.chat.completions.create(
        { ...body, stream: true, stream_options: { include_usage: true } },
        signal ? { signal } : {},
      ),
    );
    let content = "";
    let finishReason = "unknown";
    let model = spec.model;
    let usage = { inputTokens: 0, outputTokens: 0 };
    const calls = new Map<number, ToolCall>();
    // Each chunk carries the log-probabilities of its own tokens; undefined until one does.
    let logprobs: TokenLogprob[] | undefined;
    let sawDone = false;
    // The transport bounds each event; the reply as a whole is bounded here, as it grows.
    let replyBytes = 0;
    const grow = (piece: string | null | undefined) => {
      if (!piece) return;
      replyBytes += Buffer.byteLength(piece);
      if (replyBytes > maxReplyBytes) {
        throw new ReplyTooLargeError(maxReplyBytes, "the streamed reply");
      }
    };
    for await (const chunk of stream) {
      model = chunk.model ?? model;
      if (chunk.usage) {
        usage = {
          inputTokens: chunk.usage.prompt_tokens ?? 0,
          outputTokens: chunk.usage.completion_tokens ?? 0,
        };
      }
      const choice = chunk.choices[0];
      if (!choice) continue;
      grow(choice.delta.content);
      content += choice.delta.content ?? "";
      if (reading) {
        const pieces = parseLogprobs(choice.logprobs, reading);
        if (pieces) {
          logprobs ??= [];
          for (const piece of pieces) logprobs.push(piece);
        }
      }
      for (const delta of choice.delta.tool_calls ?? []) {
        grow(delta.function?.name);
        grow(delta.function?.arguments);
        const call = calls.get(delta.index) ?? { id: "", name: "", arguments: "" };
        call.id = delta.id ?? call.id;
        call.name += delta.function?.name ?? "";
        call.arguments += delta.function?.arguments ?? "";
        calls.set(delta.index, call);
      }
      if (choice.finish_reason) {
        finishReason = choice.finish_reason;
        sawDone = true;
      }
    }
    // A stream cut before its finish reason is a dropped connection, not a short answer.
    if (!sawDone) throw new Error("terminated: the stream ended before the reply was complete");
    return {
      content,
      toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
      usage,
      finishReason,
      model,
      ...(logprobs ? { logprobs } : {}),
    };
  }

  return { id, complete };
}
