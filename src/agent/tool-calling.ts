/**
 * The tool-calling agent: the environment's actions as one function tool, `act`. When the
 * observation lists its available actions they become the parameter's enum; otherwise the action
 * is free text in the syntax the instruction describes. Observations come back as tool results.
 *
 * Tool-call ids in the prompt are rewritten to deterministic ones ("call_<turn>"): the provider's
 * ids are random, and keeping them would make every request unique to the response cache.
 */
import { z } from "zod";
import type { Observation } from "../env/types.js";
import type { ChatMessage, Model, ModelResponse, ToolCall, ToolSpec } from "../model/types.js";
import {
  availableActionsHint,
  baseRequest,
  completeWithCorrections,
  EMPTY_REPLY_PLACEHOLDER,
  type EpisodeAgentFactory,
  episodeConversation,
  type LlmAgentOptions,
  matchAvailableAction,
  NO_ACTION,
  quoteReply,
  type ReplyReading,
  resolveAgentSettings,
} from "./prompting.js";
import type { Turn } from "./types.js";

export const ACT_TOOL = "act";

export const DEFAULT_TOOL_CALLING_SYSTEM_PROMPT = `You are an agent acting in a text-based \
environment. Each turn, read the latest observation and take exactly one action by calling the \
${ACT_TOOL} tool once. You may explain your reasoning briefly in text before the call.`;

/** Separates the model's text from the action in the trajectory message. */
const ACTION_SEPARATOR = "\n\nAction:\n";

export type ToolCallingOptions = LlmAgentOptions;

const actArgumentsSchema = z.object({ action: z.string() });

/** The `act` tool for the current observation: an enum of its available actions when it has any. */
export function actToolSpec(observation: Observation): ToolSpec {
  const actions = observation.availableActions;
  const action =
    actions && actions.length > 0
      ? {
          type: "string",
          description: "One of the actions available right now.",
          enum: [...actions],
        }
      : {
          type: "string",
          description:
            "The action, written in the syntax the instruction describes " +
            "(exactly the text you would type as the action).",
        };
  return {
    name: ACT_TOOL,
    description: "Take one action in the environment; the result is the next observation.",
    parameters: {
      type: "object",
      properties: { action },
      required: ["action"],
      additionalProperties: false,
    },
  };
}

/** The trajectory text of a reply: the model's text, if any, then the action in ReAct layout. */
export function toolReplyMessage(content: string, action: string): string {
  const text = content.trim();
  return text === "" ? action : `${text}${ACTION_SEPARATOR}${action}`;
}

/** The model's text of a recorded turn (the inverse of toolReplyMessage). */
function turnContent(turn: Turn): string {
  if (turn.message === turn.action) return "";
  const suffix = `${ACTION_SEPARATOR}${turn.action}`;
  return turn.message.endsWith(suffix) ? turn.message.slice(0, -suffix.length) : turn.message;
}

function turnCallId(index: number): string {
  return `call_${index}`;
}

function renderToolTurn(turn: Turn, index: number, observationText: string): ChatMessage[] {
  // A turn that ended without a usable call is plain text answered by a user message.
  if (turn.action === NO_ACTION) {
    return [
      { role: "assistant", content: turn.message === "" ? EMPTY_REPLY_PLACEHOLDER : turn.message },
      { role: "user", content: observationText },
    ];
  }
  const id = turnCallId(index);
  return [
    {
      role: "assistant",
      content: turnContent(turn),
      toolCalls: [{ id, name: ACT_TOOL, arguments: JSON.stringify({ action: turn.action }) }],
    },
    { role: "tool", toolCallId: id, content: observationText },
  ];
}

type ActionCheck = { ok: true; action: string } | { ok: false; error: string };

/** Validates one `act` call's arguments against the observation. */
export function checkActCall(call: ToolCall, observation: Observation): ActionCheck {
  let raw: unknown;
  try {
    raw = JSON.parse(call.arguments);
  } catch {
    return { ok: false, error: `the arguments are not valid JSON: ${quoteReply(call.arguments)}` };
  }
  const parsed = actArgumentsSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      error: `the arguments must be an object with a string "action": ${quoteReply(
        call.arguments,
      )}`,
    };
  }
  const action = parsed.data.action.trim();
  if (action === "") return { ok: false, error: "the action is empty" };
  const actions = observation.availableActions;
  if (!actions || actions.length === 0) return { ok: true, action };
  const matched = matchAvailableAction(action, actions);
  if (matched === undefined) {
    return { ok: false, error: `${quoteReply(action)} is not one of the available actions` };
  }
  return { ok: true, action: matched };
}

function describeCalls(calls: readonly ToolCall[]): string {
  return calls.map((call) => `${call.name}(${call.arguments})`).join("\n");
}

function correction(error: string, observation: Observation): string {
  return (
    `Error: ${error}. Nothing was done in the environment. ` +
    `Call the ${ACT_TOOL} tool exactly once with your action.` +
    availableActionsHint(observation.availableActions)
  );
}

/**
 * Judges a reply: the first `act` call is the step; other calls are ignored. Unusable replies get
 * feedback that answers every call they made (providers require a result per call id).
 */
export function readToolReply(
  response: ModelResponse,
  observation: Observation,
  callIdPrefix: string,
): ReplyReading {
  const calls = response.toolCalls;
  const actIndex = calls.findIndex((call) => call.name === ACT_TOOL);
  const actCall = calls[actIndex];
  const check: ActionCheck = actCall
    ? checkActCall(actCall, observation)
    : {
        ok: false,
        error:
          calls.length === 0
            ? "the reply called no tool"
            : `unknown tool ${quoteReply(calls[0]?.name ?? "")}`,
      };
  if (check.ok) {
    return {
      ok: true,
      action: check.action,
      message: toolReplyMessage(response.content, check.action),
    };
  }
  const message = [response.content.trim(), describeCalls(calls)]
    .filter((s) => s !== "")
    .join("\n\n");
  const explanation = correction(check.error, observation);
  if (calls.length === 0) {
    return {
      ok: false,
      error: check.error,
      message,
      feedback: [
        { role: "assistant", content: response.content || EMPTY_REPLY_PLACEHOLDER },
        { role: "user", content: explanation },
      ],
    };
  }
  const renamed = calls.map((call, i) => ({ ...call, id: `${callIdPrefix}_${i}` }));
  return {
    ok: false,
    error: check.error,
    message,
    feedback: [
      { role: "assistant", content: response.content, toolCalls: renamed },
      ...renamed.map(
        (call, i): ChatMessage => ({
          role: "tool",
          toolCallId: call.id,
          content:
            actIndex < 0 || i === actIndex
              ? explanation
              : `Not run: only the first ${ACT_TOOL} call of a reply counts.`,
        }),
      ),
    ],
  };
}

export function createToolCallingAgent(
  model: Model,
  options: ToolCallingOptions = {},
): EpisodeAgentFactory {
  const settings = resolveAgentSettings(options, DEFAULT_TOOL_CALLING_SYSTEM_PROMPT);
  if (settings.send !== "action") {
    throw new TypeError('invalid agent options: send: "reply" applies to the react agent only');
  }
  return (context) => {
    const conversation = episodeConversation(settings, renderToolTurn);
    return {
      async act(state, signal) {
        const messages = conversation(state);
        const turn = state.history.length;
        return completeWithCorrections({
          model,
          request: {
            ...baseRequest(messages, settings, context),
            tools: [actToolSpec(state.observation)],
          },
          read: (response, attempt) =>
            readToolReply(response, state.observation, `retry_${turn}_${attempt}`),
          maxRetries: settings.maxParseRetries,
          signal,
        });
      },
    };
  };
}
