/** The maze's texts: instruction, and observation pieces built once so step() only concatenates. */
import { DIRECTIONS, DOWN, LEFT, type Maze, RIGHT, UP } from "./generate.js";

export const MAX_STEPS = 50;
export const MOVE_ACTIONS = DIRECTIONS.map((dir) => `move ${dir}`);

export const INSTRUCTION = `You are in a maze on a grid of cells and must walk to the goal cell.
Positions are written "row, column": row 0 is the top row and column 0 is the leftmost column.
"move up" lowers the row by one, "move down" raises it, "move left" lowers the column and
"move right" raises it. Walls lie between some cells and around the edge of the maze; moving into a
wall leaves you where you are. After every move you are told the goal position, your current
position and on which sides of you there are walls.
Reply with exactly one action per turn, one of:
move up
move down
move left
move right
Reach the goal to win (reward 1). You have at most ${MAX_STEPS} actions; invalid actions and
moves into walls count too.`;

/** How each direction's wall is described, in the order the observation lists them. */
const WALL_PHRASES: ReadonlyArray<[number, string]> = [
  [LEFT, "to your left"],
  [RIGHT, "to your right"],
  [UP, "above you"],
  [DOWN, "below you"],
];

function describeWalls(mask: number): string {
  const phrases = WALL_PHRASES.filter(([dir]) => mask & (1 << dir)).map(([, phrase]) => phrase);
  if (phrases.length === 0) return "There are no walls around you.";
  if (phrases.length === 1) return `There is a wall ${phrases[0]}.`;
  if (phrases.length === 2) return `There are walls ${phrases[0]} and ${phrases[1]}.`;
  return `There are walls ${phrases.slice(0, -1).join(", ")}, and ${phrases[phrases.length - 1]}.`;
}

/** Wall sentences for all 16 wall masks. */
export const WALL_SENTENCES: readonly string[] = Array.from({ length: 16 }, (_, mask) =>
  describeWalls(mask),
);

/** Explanations for bumping into each direction's wall. */
export const BUMP_TEXTS: readonly string[] = DIRECTIONS.map((dir, d) => {
  const where = WALL_PHRASES.find(([wallDir]) => wallDir === d)?.[1] ?? "";
  return `You cannot move ${dir}: there is a wall ${where}. You stay where you are. `;
});

export const MOVE_TEXTS: readonly string[] = DIRECTIONS.map((dir) => `You moved ${dir}. `);

export function formatPosition(maze: Pick<Maze, "cols">, cell: number): string {
  return `${Math.floor(cell / maze.cols)}, ${cell % maze.cols}`;
}

/** "The goal is at ... Your current position is ... There are walls ..." for a cell. */
export function describeCell(maze: Maze, goalSentence: string, cell: number): string {
  return (
    `${goalSentence}Your current position is at position ${formatPosition(maze, cell)}. ` +
    WALL_SENTENCES[maze.walls[cell] ?? 0]
  );
}

export function goalSentence(maze: Maze): string {
  return `The goal is at position ${formatPosition(maze, maze.goal)}. `;
}

export function introText(maze: Maze): string {
  return (
    `The maze has ${maze.rows} rows (0 to ${maze.rows - 1}) and ${maze.cols} columns ` +
    `(0 to ${maze.cols - 1}). `
  );
}

export function invalidActionText(action: string): string {
  const shown = action.length > 60 ? `${action.slice(0, 57)}...` : action;
  return (
    `Invalid action ${JSON.stringify(shown)}. Reply with exactly one of: ` +
    `${MOVE_ACTIONS.join(", ")}. `
  );
}

export function successText(maze: Maze): string {
  return `You reached the goal at position ${formatPosition(maze, maze.goal)}. Well done!`;
}

export const OUT_OF_STEPS_TEXT = ` You have used all ${MAX_STEPS} steps without reaching the goal.`;
