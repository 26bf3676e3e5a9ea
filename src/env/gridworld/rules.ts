/**
 * What each action does to the world. Every function returns the sentence that reports the
 * result; actions whose preconditions fail change nothing and come back with a `problem`.
 */
import type { GridAction, ToggleIntent } from "./actions.js";
import { DOOR, WALL } from "./generate.js";
import {
  facingPose,
  frontCell,
  isDoorVisible,
  isEmptyFloor,
  isObjectVisible,
  isPassable,
  visibleRooms,
  type World,
  walkDistances,
} from "./world.js";

export interface Outcome {
  /** What happened, as one or two sentences. */
  text: string;
  /** Set when the action was invalid here; `text` then explains why. */
  invalid?: boolean;
  /** Extra facts for StepResult.info (e.g. blocked, locked). */
  info?: Record<string, unknown>;
}

const done = (text: string, info?: Record<string, unknown>): Outcome => ({ text, info });
const refuse = (text: string): Outcome => ({ text, invalid: true });

/** What lies on a cell, for "In front of you: ..." and refusals: "a wall", "a red ball", ... */
export function describeCell(world: World, cell: number): string {
  const object = world.objects[world.objectAt[cell] ?? -1];
  if (object) return `a ${object.name}`;
  const door = world.doors[world.doorAt[cell] ?? -1];
  if (door) return `a ${door.name} (${door.state})`;
  if (world.layout[cell] === WALL) return "a wall";
  return world.layout[cell] === DOOR ? "a doorway" : "empty floor";
}

function turn(world: World, right: boolean): Outcome {
  world.dir = (world.dir + (right ? 1 : 3)) % 4;
  return done(right ? "You turn right." : "You turn left.");
}

function moveForward(world: World): Outcome {
  const front = frontCell(world);
  if (!isPassable(world, front)) {
    const what = describeCell(world, front);
    return done(`You cannot move forward: ${what} is in the way.`, { blocked: what });
  }
  world.agent = front;
  return done("You move forward.");
}

/** The cell of a visible object or door, or a refusal. */
function visibleTarget(world: World, name: string): number | Outcome {
  const rooms = visibleRooms(world);
  const objectId = world.objectIds.get(name);
  if (objectId !== undefined) {
    if (world.carrying === objectId) return refuse(`You are already carrying the ${name}.`);
    if (isObjectVisible(world, objectId, rooms)) return world.objects[objectId]?.cell ?? -1;
  }
  const doorId = world.doorIds.get(name);
  if (doorId !== undefined && isDoorVisible(world, doorId, rooms)) {
    return world.doors[doorId]?.cell ?? -1;
  }
  return refuse(
    `You cannot see a ${name} here. You can only go to objects and doors in the room you are in.`,
  );
}

function goTo(world: World, name: string): Outcome {
  const target = visibleTarget(world, name);
  if (typeof target !== "number") return target;
  if (frontCell(world) === target) return done(`You are already facing the ${name}.`);
  const distance = walkDistances(world);
  const pose = facingPose(world, target, distance);
  if (!pose) {
    return done(`You cannot find a free path to the ${name}; something blocks the way.`, {
      blocked: name,
    });
  }
  const steps = distance[pose.cell] ?? 0;
  world.agent = pose.cell;
  world.dir = pose.dir;
  if (steps === 0) return done(`You turn to face the ${name}.`);
  return done(`You walk ${steps} step${steps === 1 ? "" : "s"} to the ${name} and face it.`);
}

function pickUp(world: World, name: string | undefined): Outcome {
  const carried = world.objects[world.carrying];
  if (carried) return refuse(`You are already carrying the ${carried.name}; drop it first.`);
  if (name?.endsWith(" door")) return refuse("Doors cannot be picked up; toggle opens them.");
  const front = frontCell(world);
  const id = world.objectAt[front] ?? -1;
  const object = world.objects[id];
  if (!object) {
    if (name) return refuse(`There is no ${name} in front of you; use "go to ${name}" first.`);
    return refuse("There is nothing in front of you to pick up.");
  }
  if (name && name !== object.name) {
    return refuse(`The ${name} is not in front of you; the ${object.name} is.`);
  }
  world.objectAt[front] = -1;
  object.cell = -1;
  world.carrying = id;
  return done(`You pick up the ${object.name}.`);
}

function drop(world: World, name: string | undefined): Outcome {
  const carried = world.objects[world.carrying];
  if (!carried) return refuse("You are not carrying anything to drop.");
  if (name && name !== carried.name) {
    return refuse(`You are carrying the ${carried.name}, not the ${name}.`);
  }
  const front = frontCell(world);
  if (!isEmptyFloor(world, front)) {
    const what = describeCell(world, front);
    return refuse(`You cannot drop the ${carried.name} here: ${what} is in front of you.`);
  }
  world.objectAt[front] = world.carrying;
  carried.cell = front;
  world.carrying = -1;
  return done(`You drop the ${carried.name} in front of you.`);
}

function toggle(world: World, name: string | undefined, intent: ToggleIntent): Outcome {
  const door = world.doors[world.doorAt[frontCell(world)] ?? -1];
  if (!door) return refuse("There is no door in front of you.");
  if (name && name !== door.name) {
    return refuse(`The door in front of you is the ${door.name}, not the ${name}.`);
  }
  if (door.state === "open") {
    if (intent === "open") return done(`The ${door.name} is already open.`);
    door.state = "closed";
    return done(`You close the ${door.name}.`);
  }
  if (intent === "close") return done(`The ${door.name} is already ${door.state}.`);
  if (door.state === "closed") {
    door.state = "open";
    return done(`You open the ${door.name}.`);
  }
  const key = world.objects[world.carrying];
  if (key?.kind === "key" && key.colour === door.colour) {
    door.state = "open";
    return done(`You unlock the ${door.name} with the ${key.name} and open it.`);
  }
  return done(`The ${door.name} is locked. You must carry the ${door.colour} key to open it.`, {
    locked: door.name,
  });
}

export function applyAction(world: World, action: GridAction): Outcome {
  switch (action.kind) {
    case "turn":
      return turn(world, action.right);
    case "forward":
      return moveForward(world);
    case "goto":
      return goTo(world, action.name);
    case "pickup":
      return pickUp(world, action.name);
    case "drop":
      return drop(world, action.name);
    case "toggle":
      return toggle(world, action.name, action.intent);
    case "invalid":
      return refuse(action.problem);
  }
}
