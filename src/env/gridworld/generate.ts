/**
 * Seeded task generation. The task index fixes the blueprint: difficulty level (index % 5), room
 * layout, doors and their states, which objects exist and which room holds each, the agent's room
 * and the goal. The seed only moves things within their rooms: object cells and the agent's start
 * cell and direction.
 */
import { createRng, type Rng } from "../rng.js";
import type { IndexRange } from "../types.js";
import {
  COLOURS,
  type Colour,
  type DoorState,
  DX,
  DY,
  OBJECT_KINDS,
  type ObjectKind,
} from "./data.js";

export const TEST_SPLIT: IndexRange = { start: 0, end: 100 };
export const TRAIN_SPLIT: IndexRange = { start: 100, end: 500 };

/** Cell types of the layout grid. */
export const FLOOR = 0;
export const WALL = 1;
export const DOOR = 2;

// Purpose tags keep the blueprint stream and the placement stream independent.
const BLUEPRINT_STREAM = 0x67726964;
const PLACEMENT_STREAM = 0x706c6163;
const MAX_PLACEMENT_TRIES = 1000;

export type GoalKind = "goto" | "pickup" | "open" | "putnext";

/** Object and door references are indices into GridTask.objects and GridTask.doors. */
export type Goal =
  | { kind: "goto"; object: number }
  | { kind: "pickup"; object: number }
  | { kind: "open"; door: number }
  | { kind: "putnext"; object: number; target: number };

export interface Room {
  /** Column and row of the room's top-left interior cell. */
  x0: number;
  y0: number;
}

export interface DoorSpec {
  colour: Colour;
  cell: number;
  /** The two rooms the door joins. */
  rooms: readonly [number, number];
  /** Cell offset that crosses the door: 1 in a wall between columns, the width between rows. */
  across: number;
  state: DoorState;
}

export interface ObjectSpec {
  kind: ObjectKind;
  colour: Colour;
  room: number;
  cell: number;
}

export interface GridTask {
  index: number;
  seed: number;
  /** Difficulty 0..4: one room (few, then more objects), two rooms, three or four, locked door. */
  level: number;
  width: number;
  height: number;
  roomRows: number;
  roomCols: number;
  /** Interior side of every room in cells. */
  roomSize: number;
  /** Cell types (FLOOR, WALL, DOOR), row by row: cell = y * width + x. */
  layout: Uint8Array;
  rooms: readonly Room[];
  doors: readonly DoorSpec[];
  objects: readonly ObjectSpec[];
  start: number;
  /** Compass direction the agent starts facing (0 north, 1 east, 2 south, 3 west). */
  startDir: number;
  startRoom: number;
  goal: Goal;
}

interface LevelSpec {
  layouts: readonly (readonly [number, number])[];
  sizes: readonly number[];
  /** Inclusive range of object count, not counting the key of a locked door. */
  objects: readonly [number, number];
  goals: readonly GoalKind[];
  /** Chance that each door starts closed rather than open. */
  closedChance: number;
  /** Chance of one locked door (with its key on the agent's side). */
  lockChance: number;
  /** Whether the goal lies behind the locked door, so the key is needed. */
  behindLock: boolean;
  /** Chance of one door beyond the spanning tree, making a loop of rooms. */
  extraDoorChance: number;
}

const ALL_GOALS: readonly GoalKind[] = ["goto", "pickup", "open", "putnext"];

export const LEVELS: readonly LevelSpec[] = [
  {
    layouts: [[1, 1]],
    sizes: [5, 6],
    objects: [2, 3],
    goals: ["goto", "pickup"],
    closedChance: 0,
    lockChance: 0,
    behindLock: false,
    extraDoorChance: 0,
  },
  {
    layouts: [[1, 1]],
    sizes: [6, 7],
    objects: [4, 6],
    goals: ["goto", "pickup", "putnext"],
    closedChance: 0,
    lockChance: 0,
    behindLock: false,
    extraDoorChance: 0,
  },
  {
    layouts: [
      [1, 2],
      [2, 1],
    ],
    sizes: [5],
    objects: [3, 5],
    goals: ALL_GOALS,
    closedChance: 1,
    lockChance: 0,
    behindLock: false,
    extraDoorChance: 0,
  },
  {
    layouts: [
      [1, 3],
      [3, 1],
      [2, 2],
    ],
    sizes: [4, 5],
    objects: [4, 6],
    goals: ALL_GOALS,
    closedChance: 0.5,
    lockChance: 0.3,
    behindLock: false,
    extraDoorChance: 0.5,
  },
  {
    layouts: [
      [1, 2],
      [2, 1],
      [1, 3],
      [3, 1],
      [2, 2],
    ],
    sizes: [4, 5],
    objects: [3, 5],
    goals: ALL_GOALS,
    closedChance: 0.5,
    lockChance: 1,
    behindLock: true,
    extraDoorChance: 0,
  },
];

export const LEVEL_COUNT = LEVELS.length;

export function levelForIndex(index: number): number {
  return index % LEVEL_COUNT;
}

/** Everything the index fixes; cells are filled in by placement. */
interface Blueprint {
  level: number;
  width: number;
  height: number;
  roomRows: number;
  roomCols: number;
  roomSize: number;
  layout: Uint8Array;
  rooms: Room[];
  doors: DoorSpec[];
  objects: ObjectSpec[];
  startRoom: number;
  goal: Goal;
}

/** Pairs of side-by-side rooms, row-major room numbering. */
function adjacentRooms(rows: number, cols: number): [number, number][] {
  const pairs: [number, number][] = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const room = r * cols + c;
      if (c + 1 < cols) pairs.push([room, room + 1]);
      if (r + 1 < rows) pairs.push([room, room + cols]);
    }
  }
  return pairs;
}

/** A random spanning tree of the room graph (Kruskal over shuffled pairs), then the rest. */
function splitTree(pairs: [number, number][], roomCount: number, rng: Rng) {
  const parent = Array.from({ length: roomCount }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] as number;
    return i;
  };
  const tree: [number, number][] = [];
  const rest: [number, number][] = [];
  for (const pair of rng.shuffle(pairs)) {
    const a = find(pair[0]);
    const b = find(pair[1]);
    if (a === b) {
      rest.push(pair);
    } else {
      parent[a] = b;
      tree.push(pair);
    }
  }
  return { tree, rest };
}

/** Rooms reachable from `from` through the doors, leaving out door `without`. */
function roomsReachable(doors: readonly DoorSpec[], from: number, without: number): Set<number> {
  const seen = new Set([from]);
  const queue = [from];
  while (queue.length > 0) {
    const room = queue.pop() as number;
    doors.forEach((door, id) => {
      if (id === without || !door.rooms.includes(room)) return;
      const other = door.rooms[0] === room ? door.rooms[1] : door.rooms[0];
      if (!seen.has(other)) {
        seen.add(other);
        queue.push(other);
      }
    });
  }
  return seen;
}

/** At most this many objects per room, so rooms stay walkable. */
const roomCapacity = (size: number) => Math.floor((size * size) / 4);

function buildBlueprint(index: number): Blueprint {
  const rng = createRng(BLUEPRINT_STREAM, index);
  const level = levelForIndex(index);
  const spec = LEVELS[level] as LevelSpec;
  const [roomRows, roomCols] = rng.pick(spec.layouts);
  const roomSize = rng.pick(spec.sizes);
  const width = roomCols * (roomSize + 1) + 1;
  const height = roomRows * (roomSize + 1) + 1;
  const layout = new Uint8Array(width * height).fill(WALL);
  const rooms: Room[] = [];
  for (let r = 0; r < roomRows; r++) {
    for (let c = 0; c < roomCols; c++) {
      const room = { x0: c * (roomSize + 1) + 1, y0: r * (roomSize + 1) + 1 };
      rooms.push(room);
      for (let y = room.y0; y < room.y0 + roomSize; y++) {
        layout.fill(FLOOR, y * width + room.x0, y * width + room.x0 + roomSize);
      }
    }
  }

  const { tree, rest } = splitTree(adjacentRooms(roomRows, roomCols), rooms.length, rng);
  const pairs = tree.slice();
  if (rest.length > 0 && rng.next() < spec.extraDoorChance) pairs.push(rng.pick(rest));
  const doorColours = rng.shuffle(COLOURS);
  const doors: DoorSpec[] = pairs.map(([a, b], i) => {
    const first = rooms[a] as Room;
    const second = rooms[b] as Room;
    const offset = rng.int(roomSize);
    const sideBySide = Math.floor(a / roomCols) === Math.floor(b / roomCols);
    const cell = sideBySide
      ? (first.y0 + offset) * width + second.x0 - 1
      : (second.y0 - 1) * width + first.x0 + offset;
    layout[cell] = DOOR;
    const state: DoorState = rng.next() < spec.closedChance ? "closed" : "open";
    return {
      colour: doorColours[i] as Colour,
      cell,
      rooms: [a, b],
      across: sideBySide ? 1 : width,
      state,
    };
  });

  // A locked door splits the rooms into the agent's side and the far side (empty if the door
  // lies on a loop); its key always lies on the agent's side.
  const allRooms = rooms.map((_, i) => i);
  let locked = -1;
  let agentSide = allRooms;
  let farSide: number[] = [];
  if (tree.length > 0 && rng.next() < spec.lockChance) {
    locked = rng.int(tree.length);
    const door = doors[locked] as DoorSpec;
    door.state = "locked";
    const fromFirst = roomsReachable(doors, door.rooms[0], locked);
    if (!fromFirst.has(door.rooms[1])) {
      const sides = [[...fromFirst], allRooms.filter((room) => !fromFirst.has(room))];
      const pick = rng.int(2);
      agentSide = sides[pick] as number[];
      farSide = sides[1 - pick] as number[];
    }
  }
  const startRoom = rng.pick(agentSide);

  const load: number[] = rooms.map((_, i) => (i === startRoom ? 1 : 0));
  const capacity = roomCapacity(roomSize);
  const assignRoom = (candidates: readonly number[]): number => {
    const open = candidates.filter((room) => (load[room] ?? 0) < capacity);
    const room = rng.pick(
      open.length > 0 ? open : allRooms.filter((r) => (load[r] ?? 0) < capacity),
    );
    load[room] = (load[room] ?? 0) + 1;
    return room;
  };

  const lockedColour = locked >= 0 ? (doors[locked] as DoorSpec).colour : undefined;
  const pool = rng
    .shuffle(COLOURS.flatMap((colour) => OBJECT_KINDS.map((kind) => ({ kind, colour }))))
    .filter((o) => !(o.kind === "key" && o.colour === lockedColour));
  const objects: ObjectSpec[] = [];
  const addObject = (candidates: readonly number[]): number => {
    const next = pool.pop() as { kind: ObjectKind; colour: Colour };
    objects.push({ ...next, room: assignRoom(candidates), cell: -1 });
    return objects.length - 1;
  };
  if (lockedColour !== undefined) {
    objects.push({ kind: "key", colour: lockedColour, room: assignRoom(agentSide), cell: -1 });
  }

  const behind = spec.behindLock && farSide.length > 0;
  const otherRooms = allRooms.filter((room) => room !== startRoom);
  const kind = rng.pick(spec.goals);
  let goal: Goal;
  if (kind === "open") {
    const door = behind ? locked : rng.int(doors.length);
    const target = doors[door] as DoorSpec;
    if (target.state === "open") target.state = "closed";
    goal = { kind, door };
  } else if (kind === "putnext") {
    const farFirst = behind && rng.next() < 0.5;
    const object = addObject(behind && farFirst ? farSide : behind ? agentSide : allRooms);
    const target = addObject(behind && !farFirst ? farSide : allRooms);
    goal = { kind, object, target };
  } else {
    const elsewhere = otherRooms.length > 0 && rng.next() < 0.6;
    goal = { kind, object: addObject(behind ? farSide : elsewhere ? otherRooms : allRooms) };
  }
  const count = spec.objects[0] + rng.int(spec.objects[1] - spec.objects[0] + 1);
  const wanted = count + (locked >= 0 ? 1 : 0);
  while (objects.length < wanted && load.some((n) => n < capacity)) addObject(allRooms);

  // Shuffle the objects so the goal's objects are not always listed first.
  const order = rng.shuffle(objects.map((_, i) => i));
  const newId = (old: number) => order.indexOf(old);
  if (goal.kind === "goto" || goal.kind === "pickup")
    goal = { ...goal, object: newId(goal.object) };
  if (goal.kind === "putnext") {
    goal = { ...goal, object: newId(goal.object), target: newId(goal.target) };
  }
  return {
    level,
    width,
    height,
    roomRows,
    roomCols,
    roomSize,
    layout,
    rooms,
    doors,
    objects: order.map((i) => objects[i] as ObjectSpec),
    startRoom,
    goal,
  };
}

function roomCells(bp: Blueprint, room: number): number[] {
  const { x0, y0 } = bp.rooms[room] as Room;
  const cells: number[] = [];
  for (let y = y0; y < y0 + bp.roomSize; y++) {
    for (let x = x0; x < x0 + bp.roomSize; x++) cells.push(y * bp.width + x);
  }
  return cells;
}

const offsetsFor = (width: number) => [0, 1, 2, 3].map((d) => (DY[d] ?? 0) * width + (DX[d] ?? 0));

/** Whether the placed world is fair: everything connected and the goal not already met. */
function placementIsValid(
  bp: Blueprint,
  objectAt: Int16Array,
  cells: readonly number[],
  start: number,
  startDir: number,
): boolean {
  const offsets = offsetsFor(bp.width);
  const walkable = (cell: number) => bp.layout[cell] !== WALL && (objectAt[cell] ?? -1) < 0;
  let walkableCount = 0;
  for (let cell = 0; cell < bp.layout.length; cell++) if (walkable(cell)) walkableCount++;
  // Every free cell (doors counted as passable) is reachable from the start.
  const seen = new Uint8Array(bp.layout.length);
  const queue = [start];
  seen[start] = 1;
  let reached = 0;
  while (queue.length > 0) {
    const cell = queue.pop() as number;
    reached++;
    for (const offset of offsets) {
      const next = cell + offset;
      if (!seen[next] && walkable(next)) {
        seen[next] = 1;
        queue.push(next);
      }
    }
  }
  if (reached !== walkableCount) return false;
  // Every object can be approached from a free floor cell.
  for (const cell of cells) {
    if (!offsets.some((o) => bp.layout[cell + o] === FLOOR && (objectAt[cell + o] ?? -1) < 0)) {
      return false;
    }
  }
  const goal = bp.goal;
  if (goal.kind === "goto" && start + (offsets[startDir] ?? 0) === cells[goal.object]) {
    return false;
  }
  if (goal.kind === "putnext") {
    const a = cells[goal.object] ?? 0;
    const b = cells[goal.target] ?? 0;
    const dx = Math.abs((a % bp.width) - (b % bp.width));
    const dy = Math.abs(Math.floor(a / bp.width) - Math.floor(b / bp.width));
    if (Math.max(dx, dy) <= 1) return false;
  }
  return true;
}

/** The cells in front of each door on both sides; kept free so every door can be reached. */
export function doorApproaches(door: Pick<DoorSpec, "cell" | "across">): [number, number] {
  return [door.cell - door.across, door.cell + door.across];
}

/**
 * The task of an index and seed. The index fixes everything but positions inside rooms; the seed
 * (default 0) draws the object cells and the agent's start.
 */
export function generateTask(index: number, seed = 0): GridTask {
  const bp = buildBlueprint(index);
  const rng = createRng(PLACEMENT_STREAM, index, seed);
  const reserved = new Uint8Array(bp.layout.length);
  for (const door of bp.doors) for (const cell of doorApproaches(door)) reserved[cell] = 1;
  const free = bp.rooms.map((_, room) => roomCells(bp, room).filter((cell) => !reserved[cell]));

  for (let attempt = 0; attempt < MAX_PLACEMENT_TRIES; attempt++) {
    const taken = new Set<number>();
    const take = (room: number): number => {
      const options = (free[room] as number[]).filter((cell) => !taken.has(cell));
      const cell = rng.pick(options);
      taken.add(cell);
      return cell;
    };
    const objectAt = new Int16Array(bp.layout.length).fill(-1);
    const cells = bp.objects.map((object, id) => {
      const cell = take(object.room);
      objectAt[cell] = id;
      return cell;
    });
    const start = take(bp.startRoom);
    const startDir = rng.int(4);
    if (!placementIsValid(bp, objectAt, cells, start, startDir)) continue;
    return {
      index,
      seed,
      ...bp,
      doors: bp.doors.map((door) => ({ ...door })),
      objects: bp.objects.map((object, id) => ({ ...object, cell: cells[id] as number })),
      start,
      startDir,
    };
  }
  throw new Error(`gridworld: no valid placement for task ${index}, seed ${seed}`);
}
