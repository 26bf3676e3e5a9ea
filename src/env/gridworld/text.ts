/**
 * The gridworld's texts: the instruction, and the view of the world from where the agent stands,
 * with every object and door in view placed relative to the agent ("2 steps ahead and 1 to your
 * left"), plus the list of actions that make sense right now.
 */
import { COLOURS, DIRECTION_NAMES } from "./data.js";
import { describeCell } from "./rules.js";
import {
  facingPose,
  frontCell,
  goalText,
  isDoorVisible,
  isEmptyFloor,
  isObjectVisible,
  isPassable,
  visibleRooms,
  type World,
  type WorldDoor,
} from "./world.js";

export const MAX_STEPS = 64;

export const INSTRUCTION = `You are an agent in a grid world made of one or more square rooms, \
seen from above. Walls separate the rooms; doors in the walls join them. A door is open, closed \
or locked. The rooms hold balls, boxes and keys in six colours (${COLOURS.join(", ")}). Every \
object and every door has a unique name made of its colour and kind, e.g. "red ball", "blue box", \
"grey key" or "yellow door".

You stand on one cell and face one direction. You see the room you are in (both rooms while you \
stand in a doorway): each object and door in it, placed relative to you in cells, e.g. "2 steps \
ahead and 1 to your left"; rooms are named by compass position, e.g. "the north-west room". To see \
into another room, step into the open doorway that leads there. You can carry one object at a \
time. Walls, objects and doors that are not open block your way; you can walk through open \
doors. A locked door opens only while you carry the key of the same colour (you keep the key).

Each task has one goal:
- go to the X: stand next to the X, facing it.
- pick up the X: hold the X.
- open the D: the door D is open.
- put the X next to the Y: the X lies on one of the 8 cells around the Y (diagonals count).

Actions (reply with exactly one per turn):
- turn left / turn right: turn 90 degrees where you stand.
- move forward: step one cell ahead, onto empty floor or into an open doorway.
- go to <colour> <kind>: walk the shortest free path to an object or door you can see and face \
it, e.g. "go to red ball" or "go to yellow door". One action however far; it does not open doors.
- pick up <colour> <kind>: pick up the object right in front of you (your hands must be empty).
- drop: put what you carry on the empty floor cell right in front of you (not in a doorway).
- toggle: open or close the door right in front of you.

Every observation lists the actions that make sense at that moment. You succeed (reward 1) the \
moment the goal holds. You have at most ${MAX_STEPS} actions; invalid actions count too.`;

/** "2 steps ahead and 1 to your left", from steps ahead (negative: behind) and to the right. */
export function relativePosition(ahead: number, right: number): string {
  const steps = (n: number) => `${n} step${n === 1 ? "" : "s"}`;
  const side = right > 0 ? "right" : "left";
  if (ahead === 0) return `${steps(Math.abs(right))} to your ${side}`;
  const along = ahead > 0 ? `${steps(ahead)} ahead` : `${steps(-ahead)} behind`;
  if (right === 0) return ahead === 1 ? `${along} (right in front of you)` : along;
  return `${along} and ${Math.abs(right)} to your ${side}`;
}

/** An object or door in view. */
export interface Sighting {
  name: string;
  cell: number;
  /** Manhattan distance from the agent, for nearest-first order. */
  distance: number;
  text: string;
}

function roomName(world: World, room: number): string {
  return `the ${world.roomNames[room] ?? "?"} room`;
}

function doorText(world: World, door: WorldDoor, rooms: readonly number[]): string {
  const [a, b] = door.rooms;
  if (rooms.length === 1) {
    const other = a === rooms[0] ? b : a;
    return `a ${door.name} (${door.state}, to ${roomName(world, other)})`;
  }
  return `a ${door.name} (${door.state}, between ${roomName(world, a)} and ${roomName(world, b)})`;
}

/** Objects and doors in view, nearest first (ties: objects before doors, then by id). */
export function sightings(world: World): Sighting[] {
  const rooms = visibleRooms(world);
  const { width } = world;
  const ax = world.agent % width;
  const ay = Math.floor(world.agent / width);
  const dir = world.dir;
  const sight = (name: string, cell: number, label: string): Sighting => {
    const dx = (cell % width) - ax;
    const dy = Math.floor(cell / width) - ay;
    // Forward and right components in the agent's frame (north is -y).
    const ahead = dir === 0 ? -dy : dir === 1 ? dx : dir === 2 ? dy : -dx;
    const right = dir === 0 ? dx : dir === 1 ? dy : dir === 2 ? -dx : -dy;
    const where = relativePosition(ahead, right);
    return { name, cell, distance: Math.abs(dx) + Math.abs(dy), text: `${label}: ${where}` };
  };
  const seen: Sighting[] = [];
  world.objects.forEach((object, id) => {
    if (isObjectVisible(world, id, rooms)) {
      seen.push(sight(object.name, object.cell, `a ${object.name}`));
    }
  });
  world.doors.forEach((door, id) => {
    if (door.cell !== world.agent && isDoorVisible(world, id, rooms)) {
      seen.push(sight(door.name, door.cell, doorText(world, door, rooms)));
    }
  });
  return seen.sort((p, q) => p.distance - q.distance);
}

const carryingText = (world: World) =>
  world.carrying >= 0 ? `carrying the ${world.objects[world.carrying]?.name}` : "carrying nothing";

/** "Walls of this room: 3 steps ahead, 2 behind, ..." so the agent can plan single moves. */
function wallsText(world: World, room: number): string {
  const { x0, y0 } = world.task.rooms[room] ?? { x0: 0, y0: 0 };
  const size = world.task.roomSize;
  const x = world.agent % world.width;
  const y = Math.floor(world.agent / world.width);
  // Distance to the wall in each compass direction: north, east, south, west.
  const byCompass = [y - (y0 - 1), x0 + size - x, y0 + size - y, x - (x0 - 1)];
  const at = (turns: number) => byCompass[(world.dir + turns) % 4] ?? 0;
  const steps = (n: number) => `${n} step${n === 1 ? "" : "s"}`;
  return (
    `Walls of this room: ${steps(at(0))} ahead, ${at(2)} behind, ` +
    `${at(3)} to your left and ${at(1)} to your right.`
  );
}

function positionText(world: World): string {
  const facing = `facing ${DIRECTION_NAMES[world.dir]}, ${carryingText(world)}`;
  const room = world.roomOf[world.agent] ?? -1;
  if (room < 0) {
    const door = world.doors[world.doorAt[world.agent] ?? -1];
    const [a, b] = door?.rooms ?? [0, 0];
    return (
      `You stand in the doorway of the ${door?.name}, between ${roomName(world, a)} and ` +
      `${roomName(world, b)}, ${facing}.`
    );
  }
  const size = `${world.task.roomSize}x${world.task.roomSize}`;
  const where = world.roomNames.length === 1 ? "the room" : roomName(world, room);
  return `You are in ${where} (${size} cells), ${facing}.\n${wallsText(world, room)}`;
}

/** The part of every observation that shows the world: goal, position, front cell, sightings. */
export function viewText(world: World, seen: readonly Sighting[]): string {
  const lines = [
    `Goal: ${goalText(world)}.`,
    positionText(world),
    `In front of you: ${describeCell(world, frontCell(world))}.`,
  ];
  if (seen.length === 0) {
    lines.push("You see no objects or doors here.");
  } else {
    lines.push("You see:");
    for (const s of seen) lines.push(`- ${s.text}`);
  }
  return lines.join("\n");
}

/** The first observation's opening line: the shape of the world. */
export function introText(world: World): string {
  const size = `${world.task.roomSize}x${world.task.roomSize}`;
  const names = world.roomNames;
  if (names.length === 1) return `The world is a single room of ${size} cells.`;
  const list = `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
  return `The world has ${names.length} rooms (${list}) of ${size} cells each, joined by doors.`;
}

/** Actions that make sense now; `distance` comes from walkDistances for the current state. */
export function availableActions(
  world: World,
  seen: readonly Sighting[],
  distance: Int16Array,
): string[] {
  const actions = ["turn left", "turn right"];
  const front = frontCell(world);
  if (isPassable(world, front)) actions.push("move forward");
  const ahead = world.objects[world.objectAt[front] ?? -1];
  if (ahead && world.carrying < 0) actions.push(`pick up ${ahead.name}`);
  if (world.carrying >= 0 && isEmptyFloor(world, front)) actions.push("drop");
  if ((world.doorAt[front] ?? -1) >= 0) actions.push("toggle");
  for (const s of seen) {
    if (s.cell !== front && facingPose(world, s.cell, distance)) actions.push(`go to ${s.name}`);
  }
  return actions;
}

export function invalidActionText(shown: string, problem: string): string {
  return `Invalid action "${shown}". ${problem}`;
}

export const OUT_OF_STEPS = `You have used all ${MAX_STEPS} actions without reaching the goal.`;
