/**
 * The mutable state of one episode and the geometry queries on it. Built once per reset from the
 * generated task; step() then only updates a few numbers and typed arrays.
 */
import { type Colour, type DoorState, DX, DY, type ObjectKind, roomNames } from "./data.js";
import { DOOR, doorApproaches, FLOOR, type GridTask } from "./generate.js";

export interface WorldObject {
  kind: ObjectKind;
  colour: Colour;
  /** "red ball": unique in the world. */
  name: string;
  /** -1 while carried. */
  cell: number;
}

export interface WorldDoor {
  colour: Colour;
  /** "yellow door". */
  name: string;
  cell: number;
  rooms: readonly [number, number];
  state: DoorState;
  approaches: readonly [number, number];
}

export interface World {
  task: GridTask;
  width: number;
  /** Cell types from the task layout (FLOOR, WALL, DOOR). */
  layout: Uint8Array;
  /** Room of each interior cell; -1 for walls and doors. */
  roomOf: Int8Array;
  roomNames: readonly string[];
  /** Object id lying on each cell, or -1. */
  objectAt: Int16Array;
  /** Door id of each door cell, or -1. */
  doorAt: Int16Array;
  objects: WorldObject[];
  doors: WorldDoor[];
  /** Object or door id by name ("red ball", "yellow door"). */
  objectIds: ReadonlyMap<string, number>;
  doorIds: ReadonlyMap<string, number>;
  agent: number;
  /** Compass direction: 0 north, 1 east, 2 south, 3 west. */
  dir: number;
  /** Object id carried, or -1. */
  carrying: number;
  /** Cell offset of one step north, east, south and west. */
  offsets: readonly number[];
  /** Scratch buffers for breadth-first search, reused every step. */
  distance: Int16Array;
  queue: Int16Array;
}

export function createWorld(task: GridTask): World {
  const size = task.layout.length;
  const roomOf = new Int8Array(size).fill(-1);
  task.rooms.forEach((room, id) => {
    for (let y = room.y0; y < room.y0 + task.roomSize; y++) {
      roomOf.fill(id, y * task.width + room.x0, y * task.width + room.x0 + task.roomSize);
    }
  });
  const objectAt = new Int16Array(size).fill(-1);
  const objects = task.objects.map((spec, id) => {
    objectAt[spec.cell] = id;
    return {
      kind: spec.kind,
      colour: spec.colour,
      name: `${spec.colour} ${spec.kind}`,
      cell: spec.cell,
    };
  });
  const doorAt = new Int16Array(size).fill(-1);
  const doors = task.doors.map((spec, id) => {
    doorAt[spec.cell] = id;
    return {
      colour: spec.colour,
      name: `${spec.colour} door`,
      cell: spec.cell,
      rooms: spec.rooms,
      state: spec.state,
      approaches: doorApproaches(spec),
    };
  });
  return {
    task,
    width: task.width,
    layout: task.layout,
    roomOf,
    roomNames: roomNames(task.roomRows, task.roomCols),
    objectAt,
    doorAt,
    objects,
    doors,
    objectIds: new Map(objects.map((o, id) => [o.name, id])),
    doorIds: new Map(doors.map((d, id) => [d.name, id])),
    agent: task.start,
    dir: task.startDir,
    carrying: -1,
    offsets: [0, 1, 2, 3].map((d) => (DY[d] ?? 0) * task.width + (DX[d] ?? 0)),
    distance: new Int16Array(size),
    queue: new Int16Array(size),
  };
}

export function frontCell(world: World): number {
  return world.agent + (world.offsets[world.dir] ?? 0);
}

/** Empty floor, or a door standing open. */
export function isPassable(world: World, cell: number): boolean {
  const type = world.layout[cell];
  if (type === FLOOR) return (world.objectAt[cell] ?? -1) < 0;
  return type === DOOR && world.doors[world.doorAt[cell] ?? -1]?.state === "open";
}

/** Floor where an object may be put down: not a doorway, nothing on it. */
export function isEmptyFloor(world: World, cell: number): boolean {
  return world.layout[cell] === FLOOR && (world.objectAt[cell] ?? -1) < 0;
}

/** Rooms in view: the agent's room, or both rooms of the doorway it stands in. */
export function visibleRooms(world: World): readonly number[] {
  const room = world.roomOf[world.agent] ?? -1;
  if (room >= 0) return [room];
  return world.doors[world.doorAt[world.agent] ?? -1]?.rooms ?? [];
}

export function isObjectVisible(world: World, id: number, rooms: readonly number[]): boolean {
  const cell = world.objects[id]?.cell ?? -1;
  return cell >= 0 && rooms.includes(world.roomOf[cell] ?? -1);
}

export function isDoorVisible(world: World, id: number, rooms: readonly number[]): boolean {
  const door = world.doors[id];
  return door !== undefined && (rooms.includes(door.rooms[0]) || rooms.includes(door.rooms[1]));
}

/** Walking distances from the agent through passable cells, into world.distance (-1 unreached). */
export function walkDistances(world: World): Int16Array {
  const { distance, queue, offsets } = world;
  distance.fill(-1);
  let head = 0;
  let tail = 0;
  queue[tail++] = world.agent;
  distance[world.agent] = 0;
  while (head < tail) {
    const cell = queue[head++] as number;
    const next = (distance[cell] as number) + 1;
    for (let d = 0; d < 4; d++) {
      const to = cell + (offsets[d] as number);
      if ((distance[to] as number) >= 0 || !isPassable(world, to)) continue;
      distance[to] = next;
      queue[tail++] = to;
    }
  }
  return distance;
}

export interface Pose {
  cell: number;
  dir: number;
}

/**
 * The nearest place (by `distance`) from which the agent faces `target`, or undefined when no
 * free path leads next to it. Ties go to the first direction in compass order.
 */
export function facingPose(world: World, target: number, distance: Int16Array): Pose | undefined {
  let best: Pose | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (let dir = 0; dir < 4; dir++) {
    const cell = target - (world.offsets[dir] as number);
    const d = distance[cell] ?? -1;
    if (d >= 0 && d < bestDistance) {
      best = { cell, dir };
      bestDistance = d;
    }
  }
  return best;
}

/** Chessboard distance between two cells: 1 when they touch, diagonals included. */
export function chebyshev(world: World, a: number, b: number): number {
  const dx = Math.abs((a % world.width) - (b % world.width));
  const dy = Math.abs(Math.floor(a / world.width) - Math.floor(b / world.width));
  return Math.max(dx, dy);
}

/** Whether the task's goal holds in the current state. */
export function goalReached(world: World): boolean {
  const goal = world.task.goal;
  switch (goal.kind) {
    case "goto":
      return frontCell(world) === world.objects[goal.object]?.cell;
    case "pickup":
      return world.carrying === goal.object;
    case "open":
      return world.doors[goal.door]?.state === "open";
    case "putnext": {
      const a = world.objects[goal.object]?.cell ?? -1;
      const b = world.objects[goal.target]?.cell ?? -1;
      return a >= 0 && b >= 0 && chebyshev(world, a, b) === 1;
    }
  }
}

/** The goal in words, without a final period: "put the green ball next to the purple box". */
export function goalText(world: World): string {
  const goal = world.task.goal;
  const object = (id: number) => world.objects[id]?.name ?? "?";
  switch (goal.kind) {
    case "goto":
      return `go to the ${object(goal.object)}`;
    case "pickup":
      return `pick up the ${object(goal.object)}`;
    case "open":
      return `open the ${world.doors[goal.door]?.name ?? "?"}`;
    case "putnext":
      return `put the ${object(goal.object)} next to the ${object(goal.target)}`;
  }
}
