/**
 * The tools kind's tool set. clade's environments take text actions; an action's tool is its
 * command word: the first word after an optional "Action:" (todo's `add_task with Action
 * Input: {...}` → add_task, textcraft's `craft 4 oak planks using ...` → craft, maze's
 * `move up` → move), lowercased.
 *
 * The set is enforced around the agent, not only stated in its prompt:
 * - listed actions (observations' availableActions, now and in the history) are narrowed to
 *   the set, so the tool-calling agent's `act` enum offers only those and its own check rejects
 *   others with a correction;
 * - an action whose tool is outside the set never reaches the environment: the turn ends with
 *   NO_ACTION, counted as an unusable reply, as the agent itself does after a bad reply.
 */
import { NO_ACTION } from "../../../agent/prompting.js";
import type { Agent, AgentState, Turn } from "../../../agent/types.js";
import type { Observation } from "../../../env/types.js";

const ACTION_PREFIX = /^action\s*:\s*/i;
const FIRST_WORD = /^\S+/;

/** An action's tool: its first word after an optional "Action:", lowercased ("" if none). */
export function toolOf(action: string): string {
  const rest = action.trim().replace(ACTION_PREFIX, "");
  return (FIRST_WORD.exec(rest)?.[0] ?? "").toLowerCase();
}

/** The observation with its listed actions narrowed to the tool set (unlisted: unchanged). */
export function narrowObservation(
  observation: Observation,
  tools: ReadonlySet<string>,
): Observation {
  const actions = observation.availableActions;
  if (!actions) return observation;
  return { ...observation, availableActions: actions.filter((a) => tools.has(toolOf(a))) };
}

function narrowState(state: AgentState, tools: ReadonlySet<string>): AgentState {
  return {
    instruction: state.instruction,
    observation: narrowObservation(state.observation, tools),
    history: state.history.map(
      (turn): Turn => ({ ...turn, observation: narrowObservation(turn.observation, tools) }),
    ),
  };
}

/** The agent, held to the tool set. */
export function restrictTools(agent: Agent, tools: readonly string[]): Agent {
  const allowed = new Set(tools);
  const restricted: Agent = {
    async act(state, signal) {
      const reply = await agent.act(narrowState(state, allowed), signal);
      if (reply.action === NO_ACTION || allowed.has(toolOf(reply.action))) return reply;
      return {
        action: NO_ACTION,
        message: reply.message ?? reply.action,
        parseErrors: (reply.parseErrors ?? 0) + 1,
      };
    },
  };
  if (agent.takeCalls) restricted.takeCalls = () => agent.takeCalls?.() ?? [];
  if (agent.close) restricted.close = () => agent.close?.();
  return restricted;
}
