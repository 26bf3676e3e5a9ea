import { describe, expect, it } from "vitest";
import { solveMaze } from "../../src/agent/reference/maze.js";
import {
  DIRECTIONS,
  distancesFrom,
  generateMaze,
  MAX_PATH,
  type Maze,
  mazeEnv,
  neighbour,
  parseMove,
} from "../../src/env/maze/index.js";
import { EpisodeDoneError } from "../../src/env/types.js";
import { runReferenceEpisode } from "../fixtures/reference-episode.js";

const info = mazeEnv.info;
const cellOf = (maze: Maze, text: string): number => {
  const match = /current position is at position (\d+), (\d+)/.exec(text);
  if (!match) throw new Error(`no position in: ${text}`);
  return Number(match[1]) * maze.cols + Number(match[2]);
};
const openDirection = (maze: Maze, cell: number, open: boolean): number =>
  [0, 1, 2, 3].find((d) => Boolean((maze.walls[cell] ?? 0) & (1 << d)) !== open) ?? -1;

async function transcript(taskIndex: number, seed: number, actions: string[]): Promise<string[]> {
  const env = mazeEnv.create();
  const texts = [(await env.reset(taskIndex, { seed })).text];
  for (const action of actions) texts.push((await env.step(action)).observation.text);
  return texts;
}

describe("maze info and splits", () => {
  it("has the agreed splits, version and limits", () => {
    expect(info.name).toBe("maze");
    expect(info.version).toBe("1.1.0");
    expect(info.splits.test).toEqual({ start: 0, end: 100 });
    expect(info.splits.train).toEqual({ start: 100, end: 500 });
    expect(info.successThreshold).toBe(1);
    expect(info.maxSteps).toBe(50);
    for (const action of ["move up", "move down", "move left", "move right"]) {
      expect(info.instruction).toContain(action);
    }
  });
});

describe("maze generation", () => {
  it("makes connected mazes of 5..9 cells a side with short enough paths", () => {
    const sizes = new Set<string>();
    for (let index = 0; index < 500; index++) {
      for (const seed of [0, 3]) {
        const maze = generateMaze(index, seed);
        sizes.add(`${maze.rows}x${maze.cols}`);
        expect(maze.rows).toBeGreaterThanOrEqual(5);
        expect(maze.cols).toBeLessThanOrEqual(9);
        expect(Math.min(...distancesFrom(maze, maze.goal))).toBe(0); // every cell reachable
        const pathLength = maze.distanceToGoal[maze.start] ?? -1;
        expect(pathLength).toBeGreaterThan(0);
        expect(pathLength).toBeLessThanOrEqual(MAX_PATH);
      }
    }
    expect(sizes.size).toBeGreaterThan(15);
  });

  it("keeps walls symmetric and closes the border", () => {
    const maze = generateMaze(42);
    for (let cell = 0; cell < maze.rows * maze.cols; cell++) {
      for (let dir = 0; dir < 4; dir++) {
        const next = neighbour(maze.rows, maze.cols, cell, dir);
        const blocked = Boolean((maze.walls[cell] ?? 0) & (1 << dir));
        if (next < 0) expect(blocked).toBe(true);
        else expect(Boolean((maze.walls[next] ?? 0) & (1 << (dir ^ 1)))).toBe(blocked);
      }
    }
  });

  it("is deterministic per (index, seed); seeds move the start, not the maze", () => {
    expect(generateMaze(7, 2)).toEqual(generateMaze(7, 2));
    expect(generateMaze(7)).toEqual(generateMaze(7, 0));
    const starts = new Set([0, 1, 2, 3, 4, 5].map((seed) => generateMaze(7, seed).start));
    expect(starts.size).toBeGreaterThan(1);
    expect(generateMaze(7, 5).walls).toEqual(generateMaze(7).walls);
    expect(generateMaze(7, 5).goal).toBe(generateMaze(7).goal);
  });
});

describe("maze rules", () => {
  it("states maze size, goal, position and walls at reset", async () => {
    const maze = generateMaze(5);
    const observation = await mazeEnv.create().reset(5);
    expect(observation.text).toContain(`The maze has ${maze.rows} rows`);
    const goal = `${Math.floor(maze.goal / maze.cols)}, ${maze.goal % maze.cols}`;
    expect(observation.text).toContain(`The goal is at position ${goal}.`);
    expect(cellOf(maze, observation.text)).toBe(maze.start);
    expect(observation.text).toMatch(/There (is a wall|are walls|are no walls)/);
    expect(observation.availableActions).toEqual([
      "move up",
      "move down",
      "move left",
      "move right",
    ]);
  });

  it("describes walls in AgentGym's words", async () => {
    // Find a cell walled left, above and below, and check the sentence.
    for (let index = 0; index < 500; index++) {
      const maze = generateMaze(index);
      if (maze.walls[maze.start] !== 0b0111) continue;
      const observation = await mazeEnv.create().reset(index);
      expect(observation.text).toContain("There are walls to your left, above you, and below you.");
      return;
    }
    throw new Error("no start cell walled left, above and below");
  });

  it("moves through openings for each direction", async () => {
    const seen = new Set<number>();
    for (let index = 0; index < 30 && seen.size < 4; index++) {
      const maze = generateMaze(index);
      const dir = openDirection(maze, maze.start, true);
      const next = neighbour(maze.rows, maze.cols, maze.start, dir);
      if (seen.has(dir) || next === maze.goal) continue;
      seen.add(dir);
      const env = mazeEnv.create();
      await env.reset(index);
      const result = await env.step(`move ${DIRECTIONS[dir]}`);
      expect(result).toMatchObject({ reward: 0, done: false, info: {} });
      expect(result.observation.text).toContain(`You moved ${DIRECTIONS[dir]}.`);
      expect(cellOf(maze, result.observation.text)).toBe(next);
    }
    expect(seen.size).toBe(4);
  });

  it("keeps the position when bumping into a wall", async () => {
    const maze = generateMaze(11);
    const dir = openDirection(maze, maze.start, false);
    const env = mazeEnv.create();
    await env.reset(11);
    const result = await env.step(`move ${DIRECTIONS[dir]}`);
    expect(result.reward).toBe(0);
    expect(result.done).toBe(false);
    expect(result.info).toEqual({ wall: DIRECTIONS[dir] });
    expect(result.observation.text).toContain(`You cannot move ${DIRECTIONS[dir]}`);
    expect(cellOf(maze, result.observation.text)).toBe(maze.start);
  });

  it("explains invalid actions and tolerates case and spacing", async () => {
    const maze = generateMaze(12);
    const env = mazeEnv.create();
    await env.reset(12);
    for (const action of ["jump", "move", "move north", "up", ""]) {
      const result = await env.step(action);
      expect(result).toMatchObject({ reward: 0, done: false, info: { invalid: true } });
      expect(result.observation.text).toContain("Invalid action");
      expect(cellOf(maze, result.observation.text)).toBe(maze.start);
    }
    expect(parseMove("  Move   LEFT ")).toBe(2);
    expect(parseMove("move right")).toBe(3);
    expect(parseMove("move upward")).toBe(-1);
  });

  it("accepts a trailing period and surrounding quotes or backticks", async () => {
    for (const action of ["move up.", '"move up"', "'move up.'", "`move up`", " `Move Up.` "]) {
      expect(parseMove(action), action).toBe(0);
    }
    expect(parseMove('"move down".')).toBe(1);
    for (const action of ["move. up", "move up!", "`move` up", '"move upward"', "."]) {
      expect(parseMove(action), action).toBe(-1);
    }
    const env = mazeEnv.create();
    await env.reset(12);
    const result = await env.step("move up.");
    expect(result.info.invalid).toBeUndefined();
    // Long runs of strippable characters stay cheap (no backtracking regex) and short in echo.
    const huge = await env.step(`move up${' ."`'.repeat(100_000)}x`);
    expect(huge.info.invalid).toBe(true);
    expect(huge.observation.text.length).toBeLessThan(400);
  });

  it("ends at the step limit, counting invalid actions, then throws", async () => {
    const env = mazeEnv.create();
    await env.reset(20);
    for (let step = 1; step < info.maxSteps; step++) {
      expect((await env.step("wait")).done).toBe(false);
    }
    const last = await env.step("wait");
    expect(last).toMatchObject({ reward: 0, done: true, info: { success: false, steps: 50 } });
    expect(last.observation.text).toContain("used all 50 steps");
    await expect(env.step("move up")).rejects.toBeInstanceOf(EpisodeDoneError);
  });

  it("rewards reaching the goal and then refuses steps until reset", async () => {
    const env = mazeEnv.create();
    const maze = generateMaze(3);
    await env.reset(3);
    let cell = maze.start;
    let last = await env.step("wait");
    while (cell !== maze.goal) {
      const dir = [0, 1, 2, 3].find((d) => {
        const next = neighbour(maze.rows, maze.cols, cell, d);
        const open = !((maze.walls[cell] ?? 0) & (1 << d));
        return open && maze.distanceToGoal[next] === (maze.distanceToGoal[cell] ?? 0) - 1;
      }) as number;
      cell = neighbour(maze.rows, maze.cols, cell, dir);
      last = await env.step(`move ${DIRECTIONS[dir]}`);
    }
    expect(last).toMatchObject({ reward: 1, done: true, info: { success: true } });
    expect(last.observation.text).toContain("You reached the goal");
    await expect(env.step("move up")).rejects.toBeInstanceOf(EpisodeDoneError);
    await env.reset(3);
    await expect(env.step("move up")).resolves.toBeTruthy();
  });
});

describe("maze determinism", () => {
  const actions = ["move up", "move left", "jump", "move down", "move right", "move right"];

  it("repeats the same observations for the same index and seed", async () => {
    expect(await transcript(9, 4, actions)).toEqual(await transcript(9, 4, actions));
    const env = mazeEnv.create();
    expect((await env.reset(9)).text).toBe((await transcript(9, 0, []))[0]);
  });

  it("differs across indices and seeds", async () => {
    const firsts = new Set<string>();
    for (let index = 0; index < 100; index++) firsts.add((await transcript(index, 0, []))[0] ?? "");
    expect(firsts.size).toBe(100);
    const bySeed = new Set<string>();
    for (let seed = 0; seed < 6; seed++) bySeed.add((await transcript(9, seed, []))[0] ?? "");
    expect(bySeed.size).toBeGreaterThan(1);
  });
});

describe("maze reference solver", () => {
  it("solves every test task for seed 0 and three other seeds", async () => {
    for (const seed of [0, 1, 17, 123456]) {
      const failures: number[] = [];
      for (let index = info.splits.test.start; index < info.splits.test.end; index++) {
        const { reward } = await runReferenceEpisode(mazeEnv, solveMaze, index, seed);
        if (reward < info.successThreshold) failures.push(index);
      }
      expect(failures, `seed ${seed}`).toEqual([]);
    }
  });

  it("solves train tasks along the shortest path with AgentGym-style messages", async () => {
    for (const index of [100, 250, 377, 499]) {
      const { reward, steps } = await runReferenceEpisode(mazeEnv, solveMaze, index, 5);
      const reply = steps.at(-1);
      const maze = generateMaze(index, 5);
      expect(reward).toBe(1);
      expect(steps.length).toBe(maze.distanceToGoal[maze.start]);
      expect(reply?.message).toMatch(/^Thought: .+\n\nAction: move (up|down|left|right)$/);
      expect(reply?.message?.endsWith(`Action: ${reply.action}`)).toBe(true);
    }
  });
});

describe("maze sampleAction", () => {
  it("draws well-formed moves covering all four directions", async () => {
    const env = mazeEnv.create();
    let observation = await env.reset(0);
    let state = 1;
    const random = () => {
      state = (state * 48271) % 2147483647;
      return state / 2147483647;
    };
    const drawn = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const action = mazeEnv.sampleAction(random, observation);
      drawn.add(action);
      const result = await env.step(action);
      expect(result.info.invalid).toBeUndefined();
      observation = result.done ? await env.reset(i % 100) : result.observation;
    }
    expect([...drawn].sort()).toEqual(["move down", "move left", "move right", "move up"]);
  });
});
