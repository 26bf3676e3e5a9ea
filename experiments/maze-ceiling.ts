/**
 * How well can any agent do on maze's test tasks when, like the embedded policy, it sees only the
 * walls around it? Two map-less strategies with perfect memory of what they have seen, each given
 * the environment's 50 actions:
 *
 * - goal-directed depth-first search: step to the unvisited open neighbour nearest the goal
 *   (Manhattan distance), backtrack from dead ends;
 * - online best-first: walk to the known-but-unvisited cell that minimises (path length through
 *   known cells + α · its Manhattan distance to the goal), for several α.
 *
 *   npx tsx experiments/maze-ceiling.ts
 *
 * Both read the maze through generateMaze only to answer "which sides of this cell are open?",
 * which is what the observation says.
 */
import { generateMaze, MAX_STEPS, type Maze, neighbour } from "../src/env/maze/index.js";
import { findEnv } from "../src/env/registry.js";

const ALPHAS = [0.5, 1, 2, 4];

function openNeighbours(m: Maze, cell: number): number[] {
  return [0, 1, 2, 3]
    .filter((dir) => ((m.walls[cell] ?? 0) & (1 << dir)) === 0)
    .map((dir) => neighbour(m.rows, m.cols, cell, dir))
    .filter((next) => next >= 0);
}

function manhattan(m: Maze, a: number, b: number): number {
  return (
    Math.abs(Math.floor(a / m.cols) - Math.floor(b / m.cols)) +
    Math.abs((a % m.cols) - (b % m.cols))
  );
}

/** Moves to the goal by goal-directed DFS, or null when MAX_STEPS run out first. */
function depthFirst(m: Maze): number | null {
  const visited = new Set([m.start]);
  const stack = [m.start];
  let cell = m.start;
  for (let steps = 0; steps < MAX_STEPS; steps++) {
    const fresh = openNeighbours(m, cell)
      .filter((n) => !visited.has(n))
      .sort((a, b) => manhattan(m, a, m.goal) - manhattan(m, b, m.goal));
    const next = fresh[0];
    if (next !== undefined) {
      visited.add(next);
      stack.push(next);
      cell = next;
    } else {
      stack.pop();
      cell = stack.at(-1) ?? m.start;
    }
    if (cell === m.goal) return steps + 1;
  }
  return null;
}

/** Moves to the goal by online best-first exploration, or null when MAX_STEPS run out first. */
function bestFirst(m: Maze, alpha: number): number | null {
  const visited = new Set([m.start]);
  let cell = m.start;
  for (let steps = 0; steps < MAX_STEPS; steps++) {
    // Breadth-first over visited cells; the frontier is their unvisited open neighbours.
    const dist = new Map([[cell, 0]]);
    const previous = new Map<number, number>();
    const queue = [cell];
    let target = -1;
    let targetScore = Number.POSITIVE_INFINITY;
    while (queue.length > 0) {
      const c = queue.shift() as number;
      for (const n of openNeighbours(m, c)) {
        if (dist.has(n)) continue;
        dist.set(n, (dist.get(c) as number) + 1);
        previous.set(n, c);
        if (visited.has(n)) {
          queue.push(n);
        } else {
          const score = (dist.get(n) as number) + alpha * manhattan(m, n, m.goal);
          if (score < targetScore) {
            targetScore = score;
            target = n;
          }
        }
      }
    }
    let step = target;
    while (previous.get(step) !== cell) step = previous.get(step) as number;
    cell = step;
    visited.add(cell);
    if (cell === m.goal) return steps + 1;
  }
  return null;
}

const { start, end } = findEnv("maze").info.splits.test;
const mazes = Array.from({ length: end - start }, (_, i) => generateMaze(start + i));
const rate = (solve: (m: Maze) => number | null) =>
  mazes.filter((m) => solve(m) !== null).length / mazes.length;
const shortest = mazes.reduce((sum, m) => sum + (m.distanceToGoal[m.start] ?? 0), 0) / mazes.length;

console.log(`maze test tasks: ${mazes.length}; mean shortest path ${shortest.toFixed(1)} moves`);
console.log(`goal-directed DFS, perfect memory: ${rate(depthFirst).toFixed(2)}`);
for (const alpha of ALPHAS) {
  console.log(`online best-first, α = ${alpha}: ${rate((m) => bestFirst(m, alpha)).toFixed(2)}`);
}
