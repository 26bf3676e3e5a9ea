/**
 * Maze reference solver: reads its position from the observation and takes the move that lowers
 * the breadth-first distance to the goal, computed from the task's generated maze.
 */
import { DIRECTIONS, generateMaze, type Maze, neighbour } from "../../env/maze/index.js";
import type { Agent, ReferenceSolver } from "../types.js";

const POSITION = /current position is at position (\d+), (\d+)/;

/** The direction index of a shortest-path move from `cell`, or -1 at the goal. */
export function bestMove(maze: Maze, cell: number): number {
  const here = maze.distanceToGoal[cell] ?? -1;
  for (let dir = 0; dir < 4; dir++) {
    if ((maze.walls[cell] ?? 0) & (1 << dir)) continue;
    const next = neighbour(maze.rows, maze.cols, cell, dir);
    if ((maze.distanceToGoal[next] ?? -1) === here - 1) return dir;
  }
  return -1;
}

export const solveMaze: ReferenceSolver = (ctx): Agent => {
  const maze = generateMaze(ctx.taskIndex, ctx.seed);
  return {
    async act(state) {
      const match = POSITION.exec(state.observation.text);
      const cell = match ? Number(match[1]) * maze.cols + Number(match[2]) : maze.start;
      const dir = Math.max(0, bestMove(maze, cell));
      const action = `move ${DIRECTIONS[dir]}`;
      const left = maze.distanceToGoal[cell] ?? 0;
      const moves = left === 1 ? "1 move" : `${left} moves`;
      const thought = `The goal is ${moves} away; the shortest path goes ${DIRECTIONS[dir]}.`;
      return { action, message: `Thought: ${thought}\n\nAction: ${action}` };
    },
  };
};
