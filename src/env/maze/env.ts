/** The maze environment: walk from the start cell to the goal cell with `move <direction>`. */
import {
  activeEpisode,
  checkTaskIndex,
  type Env,
  type EnvInfo,
  type Observation,
  type ResetOptions,
  type StepResult,
} from "../types.js";
import { DIRECTIONS, generateMaze, type Maze, neighbour } from "./generate.js";
import {
  BUMP_TEXTS,
  describeCell,
  goalSentence,
  INSTRUCTION,
  introText,
  invalidActionText,
  MAX_STEPS,
  MOVE_ACTIONS,
  MOVE_TEXTS,
  OUT_OF_STEPS_TEXT,
  successText,
} from "./text.js";

export const MAZE_INFO: EnvInfo = {
  name: "maze",
  version: "1.1.0",
  description:
    "Grid mazes (5x5 to 9x9 cells) with walls: reach the goal cell using move up/down/left/right.",
  instruction: INSTRUCTION,
  splits: { train: { start: 100, end: 500 }, test: { start: 0, end: 100 } },
  successThreshold: 1,
  maxSteps: MAX_STEPS,
};

/** Direction index of each exact action string: the hot path is one Map lookup. */
const ACTION_DIRECTIONS = new Map<string, number>(MOVE_ACTIONS.map((action, d) => [action, d]));

const isQuote = (char: string) => char === '"' || char === "'" || char === "`";
const isSpace = (char: string) => /\s/.test(char);

/**
 * The action without surrounding whitespace, quotes, backticks and trailing periods, as chat
 * models often add them. A plain loop, because an end-anchored regex backtracks quadratically
 * on long runs of these characters.
 */
function unwrap(action: string): string {
  let start = 0;
  let end = action.length;
  while (start < end && (isQuote(action[start] as string) || isSpace(action[start] as string))) {
    start++;
  }
  for (; end > start; end--) {
    const char = action[end - 1] as string;
    if (!isQuote(char) && !isSpace(char) && char !== ".") break;
  }
  return action.slice(start, end);
}

/**
 * The direction an action names, tolerating case, extra whitespace, surrounding quotes or
 * backticks and a trailing period ("`move up`", "move up."); -1 when invalid.
 */
export function parseMove(action: string): number {
  const exact = ACTION_DIRECTIONS.get(action);
  if (exact !== undefined) return exact;
  const normalized = unwrap(action).toLowerCase().replace(/\s+/g, " ");
  return ACTION_DIRECTIONS.get(normalized) ?? -1;
}

/** Everything step() needs, computed once per reset. */
interface Episode {
  maze: Maze;
  /** Per cell and direction (cell * 4 + dir): the cell a move reaches, -1 into a wall. */
  moves: Int16Array;
  goalSentence: string;
  /** Per-cell observation texts, filled on first visit. */
  cellTexts: (string | undefined)[];
  position: number;
  steps: number;
  done: boolean;
}

function moveTable(maze: Maze): Int16Array {
  const moves = new Int16Array(maze.rows * maze.cols * 4);
  for (let cell = 0; cell < maze.rows * maze.cols; cell++) {
    const walls = maze.walls[cell] ?? 0;
    for (let dir = 0; dir < 4; dir++) {
      moves[cell * 4 + dir] = walls & (1 << dir) ? -1 : neighbour(maze.rows, maze.cols, cell, dir);
    }
  }
  return moves;
}

function cellText(episode: Episode, cell: number): string {
  let text = episode.cellTexts[cell];
  if (text === undefined) {
    text = describeCell(episode.maze, episode.goalSentence, cell);
    episode.cellTexts[cell] = text;
  }
  return text;
}

function observe(text: string): Observation {
  return { text, availableActions: MOVE_ACTIONS.slice() };
}

export class MazeEnv implements Env {
  readonly info = MAZE_INFO;
  private episode: Episode | undefined;

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    const maze = generateMaze(taskIndex, options.seed ?? 0);
    const episode: Episode = {
      maze,
      moves: moveTable(maze),
      goalSentence: goalSentence(maze),
      cellTexts: new Array(maze.rows * maze.cols),
      position: maze.start,
      steps: 0,
      done: false,
    };
    this.episode = episode;
    return observe(introText(maze) + cellText(episode, maze.start));
  }

  async step(action: string): Promise<StepResult> {
    const episode = activeEpisode(this.info.name, this.episode);
    episode.steps++;

    const dir = parseMove(action);
    let text: string;
    let info: Record<string, unknown>;
    if (dir < 0) {
      text = invalidActionText(action) + cellText(episode, episode.position);
      info = { invalid: true };
    } else {
      const next = episode.moves[episode.position * 4 + dir] ?? -1;
      if (next < 0) {
        text = (BUMP_TEXTS[dir] ?? "") + cellText(episode, episode.position);
        info = { wall: DIRECTIONS[dir] };
      } else {
        episode.position = next;
        if (next === episode.maze.goal) {
          episode.done = true;
          return {
            observation: observe(successText(episode.maze)),
            reward: 1,
            done: true,
            info: { success: true, steps: episode.steps },
          };
        }
        text = (MOVE_TEXTS[dir] ?? "") + cellText(episode, next);
        info = {};
      }
    }
    if (episode.steps >= MAX_STEPS) {
      episode.done = true;
      return {
        observation: observe(text + OUT_OF_STEPS_TEXT),
        reward: 0,
        done: true,
        info: { ...info, success: false, steps: episode.steps },
      };
    }
    return { observation: observe(text), reward: 0, done: false, info };
  }

  async close(): Promise<void> {
    this.episode = undefined;
  }
}
