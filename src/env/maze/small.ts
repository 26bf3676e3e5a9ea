/**
 * Small maze tasks: those of at most 36 cells (5×5 to 6×6), where a small embedded policy learns
 * in seconds (the trainer's learning test, `clade demo`). A pure function of the task range: each
 * task's maze is generated from its index, so the selection is the same everywhere.
 */
import { generateMaze } from "./generate.js";

/** The most cells a small maze has: 6 × 6. */
export const SMALL_MAZE_CELLS = 36;

/** The tasks of [start, end) whose maze has at most `maxCells` cells, in order. */
export function smallMazes(
  range: { readonly start: number; readonly end: number },
  maxCells: number = SMALL_MAZE_CELLS,
): number[] {
  const out: number[] = [];
  for (let i = range.start; i < range.end; i++) {
    const maze = generateMaze(i);
    if (maze.rows * maze.cols <= maxCells) out.push(i);
  }
  return out;
}
