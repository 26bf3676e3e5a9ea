/**
 * The model API every provider implements: one chat completion per call. Providers translate to
 * and from their wire formats; retries, rate limits, caching and accounting wrap this interface.
 */

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text, possibly malformed). */
  arguments: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

/** A function the model may call; `parameters` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface GenerationParams {
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  stop?: string[];
  topP?: number;
  /**
   * Ask for the reply's per-token log-probabilities (OpenAI-compatible servers: `logprobs:
   * true`); they come back in ModelResponse.logprobs. A server that ignores the request answers
   * without them; a malformed block is a ModelError. Anthropic cannot give them: asking is an
   * error. Part of the cache key, like every parameter.
   */
  logprobs?: boolean;
  /** With `logprobs`: also the N most likely alternatives at each position (`top_logprobs`). */
  topLogprobs?: number;
  /**
   * With `logprobs`, vLLM only: tokens come back as "token_id:N" (`return_tokens_as_token_ids`)
   * and are parsed into TokenLogprob.tokenId. Other servers may reject the field.
   */
  tokenIds?: boolean;
}

/** One sampled token of a reply with its log-probability (natural log). */
export interface TokenLogprob {
  /** The token's text; with `tokenIds`, the server's "token_id:N" as sent. */
  token: string;
  logprob: number;
  /** The vocabulary id, when `tokenIds` was asked for. */
  tokenId?: number;
  /** The most likely alternatives at this position, when `topLogprobs` was asked for. */
  topLogprobs?: { token: string; logprob: number; tokenId?: number }[];
}

export interface ModelRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  params?: GenerationParams;
  /**
   * Which sample of a task this call belongs to. Part of the cache key, so that repeated samples
   * stay independent draws instead of one cached reply.
   */
  sampleIndex?: number;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelResponse {
  content: string;
  toolCalls: ToolCall[];
  usage: Usage;
  /** "stop", "length", "tool_calls", ... as the provider reported it. */
  finishReason: string;
  /** The model name the provider says answered. */
  model: string;
  /**
   * Per-token log-probabilities of `content`, in order, when the request asked for them
   * (`params.logprobs`) and the server gave them; absent otherwise.
   */
  logprobs?: TokenLogprob[];
}

export interface Model {
  /** Provider and model, e.g. "openai:gpt-4o-mini". */
  readonly id: string;
  complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse>;
}

/** A provider call failed; `retryable` says whether trying again may help. */
export class ModelError extends Error {
  override name = "ModelError";
  constructor(
    message: string,
    readonly options: {
      status?: number;
      retryable: boolean;
      /** Seconds the provider asked us to wait (Retry-After). */
      retryAfterSeconds?: number;
      cause?: unknown;
    },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }

  get retryable(): boolean {
    return this.options.retryable;
  }
}
