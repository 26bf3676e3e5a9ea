/**
 * A ReAct agent (AgentGym's text format): each turn the model answers
 * "Thought:\n...\n\nAction:\n..." and the action after the last "Action:" is the step. A reply
 * without a usable action is answered with a correction and asked again, at most MAX_REASKS
 * times; then the turn fails with an error.
 */
import type {
  Agent,
  AgentModule,
  AgentReply,
  AgentState,
  ChatMessage,
  Model,
  Observation,
} from "clade-agent";
import { parseAction } from "./parse.ts";
import {
  correction,
  EMPTY_REPLY,
  MISSING_OBSERVATION,
  observationPrompt,
  omittedTurns,
  systemPrompt,
} from "./prompts.ts";

/** Past turns kept in the prompt, so that long episodes keep a bounded prompt. */
export const HISTORY_TURNS = 20;
/** Re-asks per turn after a reply without a usable action. */
export const MAX_REASKS = 2;

/**
 * The conversation for one turn: the system prompt (with the instruction), the first
 * observation, then each kept turn's reply and the observation that answered it. Only the
 * latest observation lists its available actions.
 */
export function buildMessages(
  state: AgentState,
  firstObservation: Observation | undefined,
): ChatMessage[] {
  const { history } = state;
  const messages: ChatMessage[] = [{ role: "system", content: systemPrompt(state.instruction) }];
  if (history.length === 0) {
    messages.push({ role: "user", content: observationPrompt(state.observation) });
    return messages;
  }
  const firstKept = Math.max(0, history.length - HISTORY_TURNS);
  let opening = firstObservation ? firstObservation.text : MISSING_OBSERVATION;
  if (firstKept > 0) {
    // The observation the first kept reply answered, so that the roles still alternate.
    const before = history[firstKept - 1]?.observation.text ?? "";
    opening += `\n\n${omittedTurns(firstKept)}\n\n${before}`;
  }
  messages.push({ role: "user", content: opening });
  for (let i = firstKept; i < history.length; i++) {
    const turn = history[i];
    if (turn === undefined) continue;
    const latest = i === history.length - 1;
    messages.push({ role: "assistant", content: turn.message || turn.action || EMPTY_REPLY });
    messages.push({
      role: "user",
      content: latest ? observationPrompt(state.observation) : turn.observation.text,
    });
  }
  return messages;
}

/** Asks the model for this turn's action, re-asking after unusable replies. */
export async function chooseAction(
  model: Model,
  messages: ChatMessage[],
  available: readonly string[] | undefined,
  signal: AbortSignal,
): Promise<AgentReply> {
  const conversation = [...messages];
  let parseErrors = 0;
  for (let attempt = 0; attempt <= MAX_REASKS; attempt++) {
    signal.throwIfAborted();
    const response = await model.complete({ messages: [...conversation] }, signal);
    const parsed = parseAction(response.content, available);
    if (parsed.ok) return { action: parsed.action, message: response.content, parseErrors };
    parseErrors++;
    conversation.push(
      { role: "assistant", content: response.content || EMPTY_REPLY },
      { role: "user", content: correction(parsed.error, available) },
    );
  }
  throw new Error(`no usable action after ${MAX_REASKS + 1} replies`);
}

const reactAgent: AgentModule = {
  name: "react-agent",
  create(_context, setup): Agent {
    const model = setup.model;
    if (model === undefined) throw new Error("this agent needs a model: pass --model");
    // The first observation holds the task statement: kept in every prompt.
    let firstObservation: Observation | undefined;
    return {
      async act(state, signal) {
        if (state.history.length === 0) firstObservation = state.observation;
        const messages = buildMessages(state, firstObservation);
        return chooseAction(model, messages, state.observation.availableActions, signal);
      },
    };
  },
};

export default reactAgent;
