/**
 * The ReAct agent: AgentGym's text format. The model answers "Thought:\n...\n\nAction:\n..." and
 * the last Action section is the step (with `send: "reply"`, the whole reply is, for servers that
 * parse it themselves). A reply without a usable action is answered with an explanation and
 * asked again (see completeWithCorrections); it never reaches the environment.
 */
import type { Observation } from "../env/types.js";
import type { ChatMessage, Model, ModelResponse } from "../model/types.js";
import {
  availableActionsHint,
  baseRequest,
  completeWithCorrections,
  EMPTY_REPLY_PLACEHOLDER,
  type EpisodeAgentFactory,
  episodeConversation,
  type LlmAgentOptions,
  parseReactAction,
  type ReplyReading,
  resolveAgentSettings,
  type SendMode,
} from "./prompting.js";
import type { Turn } from "./types.js";

export const DEFAULT_REACT_SYSTEM_PROMPT = `You are an agent acting in a text-based environment. \
Each turn, read the latest observation, think about what to do, then choose exactly one action. \
Always answer in this format:

Thought:
<your reasoning>

Action:
<one action, written exactly as the environment expects it>`;

export type ReactOptions = LlmAgentOptions;

/** Tells the model what was wrong and restates the format. */
export function reactCorrection(error: string, observation: Observation): string {
  return (
    `Your reply could not be used: ${error}. Nothing was done in the environment. ` +
    "Answer again in this format:\n\nThought:\n<your reasoning>\n\nAction:\n<one action>" +
    availableActionsHint(observation.availableActions)
  );
}

function assistantText(content: string): string {
  return content === "" ? EMPTY_REPLY_PLACEHOLDER : content;
}

/** One past turn in the ReAct conversation: the reply as the assistant, the observation after. */
export function renderReactTurn(
  turn: Turn,
  _index: number,
  observationText: string,
): ChatMessage[] {
  return [
    { role: "assistant", content: assistantText(turn.message) },
    { role: "user", content: observationText },
  ];
}

/**
 * A reply's action, or what was wrong with it. With `send` "reply" the action passed on is the
 * whole reply, once it holds a usable action (the server parses it again).
 */
export function readReactReply(
  response: ModelResponse,
  observation: Observation,
  send: SendMode = "action",
): ReplyReading {
  const parsed = parseReactAction(response.content, observation.availableActions);
  if (parsed.ok) {
    const action = send === "reply" ? response.content : parsed.action;
    return { ok: true, action, message: response.content };
  }
  const error =
    response.content.trim() === "" && response.toolCalls.length > 0
      ? "the reply was a tool call; write the action as text instead"
      : parsed.error;
  return {
    ok: false,
    error,
    message: response.content,
    feedback: [
      { role: "assistant", content: assistantText(response.content) },
      { role: "user", content: reactCorrection(error, observation) },
    ],
  };
}

export function createReactAgent(model: Model, options: ReactOptions = {}): EpisodeAgentFactory {
  const settings = resolveAgentSettings(options, DEFAULT_REACT_SYSTEM_PROMPT);
  return (context) => {
    const conversation = episodeConversation(settings, renderReactTurn);
    return {
      async act(state, signal) {
        const messages = conversation(state);
        return completeWithCorrections({
          model,
          request: baseRequest(messages, settings, context),
          read: (response) => readReactReply(response, state.observation, settings.send),
          maxRetries: settings.maxParseRetries,
          signal,
        });
      },
    };
  };
}
