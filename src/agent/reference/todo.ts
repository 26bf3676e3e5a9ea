/**
 * Reference solver for todo: replays the task's gold tool calls, then finishes with every
 * required answer. Replaying the generator's own plan is the honest proof that the gold state
 * is reachable with the public tools within the step limit.
 */
import { formatAction, generateScenario } from "../../env/todo/index.js";
import type { Agent, ReferenceSolver } from "../types.js";

function finalAnswer(answers: readonly string[]): string {
  return answers.length === 0 ? "Done." : `Done. The answer is: ${answers.join(", ")}.`;
}

export const solveTodo: ReferenceSolver = (ctx) => {
  const scenario = generateScenario(ctx.taskIndex, ctx.seed);
  const actions = scenario.goldCalls.map(formatAction);
  actions.push(formatAction({ tool: "finish", args: { answer: finalAnswer(scenario.answers) } }));
  let next = 0;
  const agent: Agent = {
    async act() {
      const action = actions[Math.min(next, actions.length - 1)] as string;
      const thought =
        next < actions.length - 1
          ? `Step ${next + 1} of the plan for: ${scenario.request}`
          : "All changes are made; I can answer the user.";
      next += 1;
      return {
        action,
        message: `Thought: ${thought}\n\nAction: ${action.slice("Action: ".length)}`,
      };
    },
  };
  return agent;
};
