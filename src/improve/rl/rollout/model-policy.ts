/**
 * An LLM as a rollout policy, through clade's model layer (an OpenAI-compatible server such as
 * vLLM, asked for log-probabilities). Each turn is one model call:
 *
 * - The prompt is the ReAct agent's (src/agent/react.ts): its system prompt, AgentGym's layout
 *   of instruction, "OK.", first observation and reply/observation pairs, the history window
 *   and the listed actions, built by the same functions. Past turns show the policy's whole
 *   replies, as in an evaluation (the rollout keeps each decision's `reply` as the turn's
 *   message). The policy keeps one conversation per sample, keyed by the sample's history array
 *   (the array the rollout passes every turn), for the episode's first observation.
 * - The action is read by the ReAct agent's parser (readReactReply, `send` included). A reply
 *   without a usable action is not re-asked (a correction would put text in the prompt that the
 *   trajectory does not hold): the turn sends NO_ACTION (""), as the ReAct agent does once its
 *   corrections run out, so the environment answers it as an invalid action and the step
 *   counts; the reply itself is kept in the decision, never sent to the environment.
 * - The decision carries the raw reply, the per-token log-probabilities, their sum as the
 *   turn's `logprob` (the reply's sequence log-probability under the behaviour policy) and the
 *   token ids when the server gives them (`tokenIds`, vLLM only).
 * - Temperature: "sample" uses `temperature` (default 1), "greedy" 0. The log-probabilities are
 *   the server's: vLLM reports those of the raw model (temperature 1, before top-p/top-k) unless
 *   started with `--logprobs-mode processed_logprobs`; at the default temperature 1 without
 *   top-p the two agree.
 * - Randomness: the sampling happens at the server. The policy never draws from Math.random; in
 *   sample mode it draws one seed per turn from the sample's own stream (`rng`) and sends it as
 *   `seed` (vLLM, OpenAI, llama.cpp and Ollama honour it, as far as their batching allows), so
 *   a sample's requests are fixed by (seed, step, task, sample) and repeated samples of a task
 *   are distinct requests, also to a response cache. Greedy turns send no seed.
 * - Errors: a model error (after the model layer's retries) and, with `requireLogprobs` (the
 *   default), a reply without log-probabilities throw, which ends the sample as an error:
 *   excluded from its group's statistics and reported, never scored 0.
 *
 * Use a client without a response cache (or cacheMode "off") while the served weights change
 * between training steps: the cache keys on the model's name, not its weights.
 */
import {
  episodeConversation,
  type LlmAgentSettings,
  NO_ACTION,
  resolveAgentSettings,
  type SendMode,
} from "../../../agent/prompting.js";
import {
  DEFAULT_REACT_SYSTEM_PROMPT,
  readReactReply,
  renderReactTurn,
} from "../../../agent/react.js";
import type { AgentState, Turn } from "../../../agent/types.js";
import type { Rng } from "../../../env/rng.js";
import type { ChatMessage, GenerationParams, Model } from "../../../model/types.js";
import { checkTemperature } from "./embedded.js";
import type { ActionMode, PolicyDecision, RolloutPolicy } from "./types.js";

/** Seeds sent to the server: non-negative 31-bit integers, which every server accepts. */
const SEED_RANGE = 2 ** 31 - 1;

export interface ModelRolloutPolicyOptions {
  /** The model to call, usually createModelClient's (retries, limits, accounting). */
  model: Model;
  /** Sampling temperature in "sample" mode (> 0); default 1. "greedy" uses 0. */
  temperature?: number;
  /**
   * A reply without log-probabilities (the server ignored the request) is an error that ends
   * the sample; default true. With false, such a turn has no logprob and the trajectory no
   * `sample.logprobs`.
   */
  requireLogprobs?: boolean;
  /** vLLM only: ask for token ids (`return_tokens_as_token_ids`) and report them; default false. */
  tokenIds?: boolean;
  /** Send a seed drawn from the sample's stream with each sampled turn; default true. */
  seed?: boolean;
  /** Other generation parameters: maxTokens, stop, topP (temperature and seed are set above). */
  params?: Pick<GenerationParams, "maxTokens" | "stop" | "topP">;
  /** Replaces the ReAct system prompt; null sends none. */
  systemPrompt?: string | null;
  /** Past turns kept in the prompt; default all of them. */
  historyWindow?: number;
  /** List the observation's available actions under its text; default true. */
  showAvailableActions?: boolean;
  /** What goes to env.step: the parsed "action" (default) or the whole "reply". */
  send?: SendMode;
  /** Aborts model calls in flight (pass the collection's signal). */
  signal?: AbortSignal;
}

/** The server answered without the log-probabilities the policy asked for. */
export class MissingLogprobsError extends Error {
  override name = "MissingLogprobsError";
}

/** What the policy remembers of one sample: its prompt builder (which keeps the first observation). */
interface SampleMemory {
  conversation: (state: AgentState) => ChatMessage[];
}

function checkOptions(options: ModelRolloutPolicyOptions): LlmAgentSettings {
  const params = (options.params ?? {}) as Record<string, unknown>;
  for (const key of ["temperature", "seed", "logprobs", "topLogprobs", "tokenIds"]) {
    if (key in params) {
      throw new TypeError(
        `createModelRolloutPolicy: params.${key} is set by the policy; use its own options`,
      );
    }
  }
  return resolveAgentSettings(
    {
      ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
      ...(options.historyWindow !== undefined ? { historyWindow: options.historyWindow } : {}),
      ...(options.params ? { params: options.params } : {}),
      ...(options.showAvailableActions !== undefined
        ? { showAvailableActions: options.showAvailableActions }
        : {}),
      ...(options.send ? { send: options.send } : {}),
    },
    DEFAULT_REACT_SYSTEM_PROMPT,
  );
}

/** A rollout policy that asks a model, as clade's ReAct agent does, with log-probabilities. */
export function createModelRolloutPolicy(options: ModelRolloutPolicyOptions): RolloutPolicy {
  const settings = checkOptions(options);
  const temperature = options.temperature ?? 1;
  checkTemperature(temperature);
  const { model, signal } = options;
  const requireLogprobs = options.requireLogprobs ?? true;
  const sendSeed = options.seed ?? true;
  const memories = new WeakMap<readonly Turn[], SampleMemory>();

  function memoryOf(state: AgentState): SampleMemory {
    const known = memories.get(state.history);
    // An empty history starts an episode (a reused array starts afresh).
    if (known !== undefined && state.history.length > 0) return known;
    const memory: SampleMemory = { conversation: episodeConversation(settings, renderReactTurn) };
    memories.set(state.history, memory);
    return memory;
  }

  return {
    async decide(state: AgentState, rng: Rng, mode: ActionMode): Promise<PolicyDecision> {
      const memory = memoryOf(state);
      const messages = memory.conversation(state);
      const params: GenerationParams = {
        ...settings.params,
        temperature: mode === "greedy" ? 0 : temperature,
        ...(mode === "sample" && sendSeed ? { seed: rng.int(SEED_RANGE) } : {}),
        logprobs: true,
        ...(options.tokenIds ? { tokenIds: true } : {}),
      };
      const response = await model.complete({ messages, params }, signal);
      const reading = readReactReply(response, state.observation, settings.send);
      const action = reading.ok ? reading.action : NO_ACTION;
      const reply = response.content;
      const decision: PolicyDecision = { action, reply };
      const tokens = response.logprobs;
      if (tokens === undefined) {
        if (requireLogprobs) {
          throw new MissingLogprobsError(
            `${model.id} answered without log-probabilities (the server ignored logprobs: ` +
              "true); use a server that returns them, such as vLLM, or set requireLogprobs: false",
          );
        }
        return decision;
      }
      const tokenLogprobs = tokens.map((t) => t.logprob);
      decision.tokenLogprobs = tokenLogprobs;
      decision.logprob = tokenLogprobs.reduce((sum, lp) => sum + lp, 0);
      if (tokens.length > 0 && tokens.every((t) => t.tokenId !== undefined)) {
        decision.tokenIds = tokens.map((t) => t.tokenId as number);
      }
      return decision;
    },
  };
}
