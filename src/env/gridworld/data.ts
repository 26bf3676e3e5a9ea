/** The gridworld's vocabulary: colours, object kinds, compass directions and room names. */

export const COLOURS = ["red", "green", "blue", "purple", "yellow", "grey"] as const;
export type Colour = (typeof COLOURS)[number];

/** Things that lie on the floor and can be carried; doors are fixed in the walls. */
export const OBJECT_KINDS = ["ball", "box", "key"] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

export type DoorState = "open" | "closed" | "locked";

/** Compass directions in clockwise order, so turning right adds one. */
export const NORTH = 0;
export const EAST = 1;
export const SOUTH = 2;
export const WEST = 3;
export const DIRECTION_NAMES = ["north", "east", "south", "west"] as const;
/** Column and row change of one step in each direction. */
export const DX = [0, 1, 0, -1] as const;
export const DY = [-1, 0, 1, 0] as const;

/**
 * Names of the rooms of each layout (rows x columns), row by row, so observations can say
 * "the north-west room" instead of a number.
 */
const ROOM_NAMES: Record<string, readonly string[]> = {
  "1x1": ["only"],
  "1x2": ["west", "east"],
  "2x1": ["north", "south"],
  "1x3": ["west", "middle", "east"],
  "3x1": ["north", "middle", "south"],
  "2x2": ["north-west", "north-east", "south-west", "south-east"],
};

export function roomNames(rows: number, cols: number): readonly string[] {
  const names = ROOM_NAMES[`${rows}x${cols}`];
  if (!names) throw new RangeError(`no room names for a ${rows}x${cols} layout`);
  return names;
}
