/**
 * Seeded maze generation: a perfect maze carved by randomized depth-first search, sometimes
 * braided with a few extra openings, then a start and goal whose shortest path fits the step limit.
 */
import { createRng, type Rng } from "../rng.js";

/** Direction indices, in the order actions and wall bits use them. */
export const UP = 0;
export const DOWN = 1;
export const LEFT = 2;
export const RIGHT = 3;
export const DIRECTIONS = ["up", "down", "left", "right"] as const;
export type Direction = (typeof DIRECTIONS)[number];

const ROW_STEP = [-1, 1, 0, 0] as const;
const COL_STEP = [0, 0, -1, 1] as const;
const OPPOSITE = [DOWN, UP, RIGHT, LEFT] as const;

export const MIN_SIDE = 5;
export const MAX_SIDE = 9;
/** Longest shortest path a task may ask for; well within the 50-step limit. */
export const MAX_PATH = 30;

/** Tags keep the task stream and the start-cell stream independent of each other. */
const TASK_STREAM = 0x6d617a65;
const START_STREAM = 0x73746172;

export interface Maze {
  rows: number;
  cols: number;
  /** Per cell (index row * cols + col): bit d set when direction d is blocked. */
  walls: Uint8Array;
  /** Cell index the agent starts on. */
  start: number;
  /** Cell index of the goal. */
  goal: number;
  /** Moves to the goal from each cell (breadth-first search from the goal). */
  distanceToGoal: Int16Array;
}

/** The cell one move from `cell` in direction `dir`, ignoring walls; -1 off the grid. */
export function neighbour(rows: number, cols: number, cell: number, dir: number): number {
  const row = Math.floor(cell / cols) + (ROW_STEP[dir] ?? 0);
  const col = (cell % cols) + (COL_STEP[dir] ?? 0);
  if (row < 0 || row >= rows || col < 0 || col >= cols) return -1;
  return row * cols + col;
}

function openWall(maze: Pick<Maze, "rows" | "cols" | "walls">, cell: number, dir: number): void {
  const next = neighbour(maze.rows, maze.cols, cell, dir);
  maze.walls[cell] = (maze.walls[cell] ?? 0) & ~(1 << dir);
  maze.walls[next] = (maze.walls[next] ?? 0) & ~(1 << (OPPOSITE[dir] ?? 0));
}

/** Randomized depth-first search (recursive backtracker, iterative): every cell reachable once. */
function carvePerfectMaze(rows: number, cols: number, rng: Rng): Uint8Array {
  const walls = new Uint8Array(rows * cols).fill(0b1111);
  const grid = { rows, cols, walls };
  const visited = new Uint8Array(rows * cols);
  const stack = [rng.int(rows * cols)];
  visited[stack[0] ?? 0] = 1;
  while (stack.length > 0) {
    const cell = stack[stack.length - 1] ?? 0;
    const options: number[] = [];
    for (let dir = 0; dir < 4; dir++) {
      const next = neighbour(rows, cols, cell, dir);
      if (next >= 0 && !visited[next]) options.push(dir);
    }
    if (options.length === 0) {
      stack.pop();
      continue;
    }
    const dir = rng.pick(options);
    const next = neighbour(rows, cols, cell, dir);
    openWall(grid, cell, dir);
    visited[next] = 1;
    stack.push(next);
  }
  return walls;
}

/** Opens a few random interior walls so some mazes have loops (near-perfect mazes). */
function braid(grid: Pick<Maze, "rows" | "cols" | "walls">, count: number, rng: Rng): void {
  for (let opened = 0, tries = 0; opened < count && tries < 100; tries++) {
    const cell = rng.int(grid.rows * grid.cols);
    const dir = rng.int(4);
    const next = neighbour(grid.rows, grid.cols, cell, dir);
    if (next < 0 || !((grid.walls[cell] ?? 0) & (1 << dir))) continue;
    openWall(grid, cell, dir);
    opened++;
  }
}

/** Breadth-first distances (in moves) from `from` to every cell. */
export function distancesFrom(
  grid: Pick<Maze, "rows" | "cols" | "walls">,
  from: number,
): Int16Array {
  const distance = new Int16Array(grid.rows * grid.cols).fill(-1);
  const queue = new Int16Array(grid.rows * grid.cols);
  let head = 0;
  let tail = 0;
  queue[tail++] = from;
  distance[from] = 0;
  while (head < tail) {
    const cell = queue[head++] ?? 0;
    const walls = grid.walls[cell] ?? 0;
    for (let dir = 0; dir < 4; dir++) {
      if (walls & (1 << dir)) continue;
      const next = neighbour(grid.rows, grid.cols, cell, dir);
      if ((distance[next] ?? 0) >= 0) continue;
      distance[next] = (distance[cell] ?? 0) + 1;
      queue[tail++] = next;
    }
  }
  return distance;
}

/** Cells whose distance lies in [low, high]. */
function cellsWithin(distance: Int16Array, low: number, high: number): number[] {
  const cells: number[] = [];
  distance.forEach((d, cell) => {
    if (d >= low && d <= high) cells.push(cell);
  });
  return cells;
}

/**
 * The maze of a task. The task index fixes the grid, the goal and the default start (seed 0);
 * another seed draws a different start cell, at a distance between half the default one and
 * MAX_PATH, so every (index, seed) pair is solvable well within the step limit.
 */
export function generateMaze(taskIndex: number, seed = 0): Maze {
  const rng = createRng(TASK_STREAM, taskIndex);
  const rows = MIN_SIDE + rng.int(MAX_SIDE - MIN_SIDE + 1);
  const cols = MIN_SIDE + rng.int(MAX_SIDE - MIN_SIDE + 1);
  const walls = carvePerfectMaze(rows, cols, rng);
  const grid = { rows, cols, walls };
  if (rng.next() < 0.5) braid(grid, 1 + rng.int(Math.max(1, Math.floor((rows * cols) / 12))), rng);

  const defaultStart = rng.int(rows * cols);
  const fromStart = distancesFrom(grid, defaultStart);
  const reach = Math.min(MAX_PATH, Math.max(...fromStart));
  const goal = rng.pick(cellsWithin(fromStart, Math.max(1, Math.floor(reach * 0.7)), reach));
  const distanceToGoal = distancesFrom(grid, goal);

  let start = defaultStart;
  if (seed !== 0) {
    const low = Math.max(1, Math.floor((distanceToGoal[defaultStart] ?? 0) / 2));
    start = createRng(START_STREAM, taskIndex, seed).pick(
      cellsWithin(distanceToGoal, low, MAX_PATH),
    );
  }
  return { rows, cols, walls, start, goal, distanceToGoal };
}
