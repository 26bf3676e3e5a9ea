/**
 * Coding reference solver: writes the task's reference solution into the solution file named in
 * the first observation, runs the visible tests, then submits.
 */
import { generateTask } from "../../env/coding/index.js";
import type { Agent, AgentReply, ReferenceSolver } from "../types.js";

const FENCE = "```";
const SOLUTION_FILE = /^- (\S+\.js): your solution/m;

function reply(thought: string, action: string): AgentReply {
  return { action, message: `Thought: ${thought}\n\nAction: ${action}` };
}

export const solveCoding: ReferenceSolver = (ctx): Agent => {
  const task = generateTask(ctx.taskIndex, ctx.seed);
  let turn = 0;
  return {
    async act(state) {
      turn++;
      if (turn === 1) {
        const file = SOLUTION_FILE.exec(state.observation.text)?.[1] ?? task.solutionFile;
        const action = `write ${file}\n${FENCE}js\n${task.solution}${FENCE}`;
        return reply(`I will implement ${task.exports.join(" and ")} in ${file}.`, action);
      }
      if (turn === 2) return reply("Check the solution against the visible tests.", "run tests");
      return reply("Submit the solution for the hidden tests.", "submit");
    },
  };
};
