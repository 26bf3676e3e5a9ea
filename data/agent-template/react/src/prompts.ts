/** Everything the agent says to the model, in one place. */
import type { Observation } from "clade-agent";

export const SYSTEM_PROMPT = `You are an agent acting in a text-based environment. \
Each turn, read the latest observation, think about what to do, then choose exactly one action. \
Always answer in this format:

Thought:
<your reasoning>

Action:
<one action, written exactly as the environment expects it>`;

/** The system message: the agent's own prompt, then the environment's instruction. */
export function systemPrompt(instruction: string): string {
  return `${SYSTEM_PROMPT}\n\n${instruction}`;
}

/** An observation as the model reads it: its text, then the actions it offers, one a line. */
export function observationPrompt(observation: Observation): string {
  const actions = observation.availableActions ?? [];
  if (actions.length === 0) return observation.text;
  return `${observation.text}\n\nAvailable actions:\n${actions.map((a) => `- ${a}`).join("\n")}`;
}

/** Stands in for the first observation when the agent joined an episode under way. */
export const MISSING_OBSERVATION = "(The first observation is not available.)";

/** Stands in for an empty reply (some providers reject empty assistant messages). */
export const EMPTY_REPLY = "(empty reply)";

export function omittedTurns(count: number): string {
  return `(${count} earlier turn${count === 1 ? "" : "s"} omitted.)`;
}

/** The answer to a reply without a usable action: what was wrong, and the format again. */
export function correction(error: string, available?: readonly string[]): string {
  const choices =
    available && available.length > 0
      ? `\nThe action must be one of:\n${available.map((a) => `- ${a}`).join("\n")}`
      : "";
  return (
    `Your reply could not be used: ${error}. Nothing was done in the environment. ` +
    `Answer again in this format:\n\nThought:\n<your reasoning>\n\nAction:\n<one action>${choices}`
  );
}
