/**
 * SQL reference solver: runs the task's gold query once as an exploratory query, then submits
 * it as the answer. The gold query comes from the task generator; the env judges by result.
 */
import { generateTask } from "../../env/sql/task.js";
import type { Agent, AgentReply, ReferenceSolver } from "../types.js";

export const solveSql: ReferenceSolver = (ctx): Agent => {
  const { gold, database } = generateTask(ctx.taskIndex, ctx.seed);
  const sql = gold.replace(/\s+/g, " ");
  return {
    async act(state): Promise<AgentReply> {
      const explored = state.history.some((turn) => turn.action.startsWith("query:"));
      const [action, thought] = explored
        ? [`answer: ${sql}`, "The result answers the question, so I submit this query."]
        : [
            `query: ${sql}`,
            `I can answer this from the ${database} database; let me check my query's result.`,
          ];
      return { action, message: `Thought: ${thought}\n\nAction: ${action}` };
    },
  };
};
