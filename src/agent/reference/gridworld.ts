/**
 * Gridworld reference solver. It keeps its own copy of the episode's world (from the task
 * generator, updated with the same rules the environment applies) and replans every turn.
 * Towards whatever the goal needs next it follows the cheapest route (around locked doors when
 * any such route exists): with a locked door on it, it first fetches that door's key (hands
 * freed on a harmless cell); otherwise it walks to the route's first door with "go to", opens
 * and crosses it, and reaches objects in view with "go to". Single moves and turns are only used
 * to reach a cell to put something down on.
 */
import {
  applyAction,
  chebyshev,
  createWorld,
  DOOR,
  FLOOR,
  frontCell,
  generateTask,
  isEmptyFloor,
  isPassable,
  parseAction,
  visibleRooms,
  WALL,
  type World,
} from "../../env/gridworld/index.js";
import type { Agent, ReferenceSolver } from "../types.js";

interface Decision {
  action: string;
  thought: string;
}

/** Route costs of entering a cell: a closed door costs a toggle, a locked one a key errand. */
const CLOSED_DOOR_COST = 3;
const LOCKED_DOOR_COST = 40;
/** How far (in single actions) a drop spot may be before walking next to the target first. */
const NEAR_DROP_ACTIONS = 8;

function carriesKeyFor(world: World, colour: string): boolean {
  const carried = world.objects[world.carrying];
  return carried?.kind === "key" && carried.colour === colour;
}

/** Cost of stepping onto `cell`, or -1 where no route may go. */
function enterCost(world: World, cell: number, lockedCost: number): number {
  const type = world.layout[cell];
  if (type === FLOOR) return (world.objectAt[cell] ?? -1) < 0 ? 1 : -1;
  if (type !== DOOR) return -1;
  const door = world.doors[world.doorAt[cell] ?? -1];
  if (!door || door.state === "open") return 1;
  if (door.state === "closed" || carriesKeyFor(world, door.colour)) return CLOSED_DOOR_COST;
  return lockedCost;
}

/**
 * The cheapest route (cells after the agent's, up to a cell next to `target`), doors of any
 * state allowed at their cost; Dijkstra with a bucket queue since costs are small integers.
 */
function cheapestRoute(world: World, target: number, lockedCost: number): number[] | undefined {
  const size = world.layout.length;
  const cost = new Int32Array(size).fill(-1);
  const previous = new Int32Array(size).fill(-1);
  const buckets: number[][] = [[world.agent]];
  cost[world.agent] = 0;
  for (let c = 0; c < buckets.length; c++) {
    for (const cell of buckets[c] ?? []) {
      if (cost[cell] !== c) continue;
      if (world.offsets.some((o) => cell + o === target)) {
        const route: number[] = [];
        for (let at = cell; at !== world.agent; at = previous[at] as number) route.push(at);
        return route.reverse();
      }
      for (const offset of world.offsets) {
        const next = cell + offset;
        const step = enterCost(world, next, lockedCost);
        if (step < 0) continue;
        const total = c + step;
        const known = cost[next] as number;
        if (known >= 0 && known <= total) continue;
        cost[next] = total;
        previous[next] = cell;
        const bucket = buckets[total];
        if (bucket) bucket.push(next);
        else buckets[total] = [next];
      }
    }
  }
  return undefined;
}

/**
 * The route the solver follows: around locked doors whenever that is possible at all (which
 * does not depend on where the agent stands, so the choice never flips back and forth), else
 * through them. On a key errand locked doors are out of bounds.
 */
function plannedRoute(world: World, target: number, keyErrand = false): number[] | undefined {
  const lockFree = cheapestRoute(world, target, -1);
  if (lockFree || keyErrand) return lockFree;
  return cheapestRoute(world, target, LOCKED_DOOR_COST);
}

interface Pose {
  cell: number;
  dir: number;
}

/**
 * Breadth-first search over (cell, direction) with turn and move actions: the first action
 * towards the nearest pose that satisfies `isGoal`, within `maxActions`.
 */
function firstActionTowards(
  world: World,
  isGoal: (pose: Pose) => boolean,
  maxActions = Number.POSITIVE_INFINITY,
): string | undefined {
  const start = world.agent * 4 + world.dir;
  const depth = new Map<number, number>([[start, 0]]);
  const firstAction = new Map<number, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head] as number;
    const cell = Math.floor(state / 4);
    const dir = state % 4;
    const d = depth.get(state) ?? 0;
    if (isGoal({ cell, dir })) return firstAction.get(state);
    if (d >= maxActions) continue;
    const ahead = cell + (world.offsets[dir] as number);
    const moves: [number, string][] = [
      [cell * 4 + ((dir + 3) % 4), "turn left"],
      [cell * 4 + ((dir + 1) % 4), "turn right"],
    ];
    if (isPassable(world, ahead)) moves.push([ahead * 4 + dir, "move forward"]);
    for (const [next, action] of moves) {
      if (depth.has(next)) continue;
      depth.set(next, d + 1);
      firstAction.set(next, firstAction.get(state) ?? action);
      queue.push(next);
    }
  }
  return undefined;
}

/**
 * Whether leaving an object on `cell` keeps the world workable: not in front of a door, every
 * free cell still connected (doors counted as passable) and every object still reachable.
 */
function isHarmlessDropSpot(world: World, cell: number): boolean {
  if (!isEmptyFloor(world, cell)) return false;
  if (world.doors.some((door) => door.approaches.includes(cell))) return false;
  const blocked = (c: number) =>
    world.layout[c] === undefined || world.layout[c] === WALL || (world.objectAt[c] ?? -1) >= 0;
  world.objectAt[cell] = world.carrying;
  try {
    let free = 0;
    for (let c = 0; c < world.layout.length; c++) if (!blocked(c)) free++;
    const seen = new Uint8Array(world.layout.length);
    const stack = [world.agent];
    seen[world.agent] = 1;
    let reached = 0;
    while (stack.length > 0) {
      const c = stack.pop() as number;
      reached++;
      for (const o of world.offsets) {
        if (!seen[c + o] && !blocked(c + o)) {
          seen[c + o] = 1;
          stack.push(c + o);
        }
      }
    }
    if (reached !== free) return false;
    return world.objects.every(
      (object) =>
        object.cell < 0 ||
        world.offsets.some(
          (o) => world.layout[object.cell + o] === FLOOR && !blocked(object.cell + o),
        ),
    );
  } finally {
    world.objectAt[cell] = -1;
  }
}

function freeHands(world: World): Decision {
  const name = world.objects[world.carrying]?.name;
  const thought = `My hands must be free, so I put the ${name} down out of the way.`;
  if (isHarmlessDropSpot(world, frontCell(world))) return { action: "drop", thought };
  const okSpots = new Map<number, boolean>();
  const action = firstActionTowards(world, ({ cell, dir }) => {
    const spot = cell + (world.offsets[dir] as number);
    let ok = okSpots.get(spot);
    if (ok === undefined) {
      ok = isHarmlessDropSpot(world, spot);
      okSpots.set(spot, ok);
    }
    return ok;
  });
  return { action: action ?? "turn left", thought };
}

function isVisible(world: World, cell: number): boolean {
  const rooms = visibleRooms(world);
  const door = world.doors[world.doorAt[cell] ?? -1];
  if (door) return rooms.includes(door.rooms[0]) || rooms.includes(door.rooms[1]);
  return rooms.includes(world.roomOf[cell] ?? -1);
}

/**
 * Next action towards facing `target` (an object or door cell, not yet in front). On a key errand
 * locked doors are out of bounds, so fetching a key never sends the solver for the same key.
 */
function approach(world: World, target: number, name: string, keyErrand = false): Decision {
  const route = plannedRoute(world, target, keyErrand);
  if (!route) return { action: "turn left", thought: `I see no way to the ${name}.` };
  const doorsOnRoute = route.flatMap((cell) => world.doors[world.doorAt[cell] ?? -1] ?? []);
  // Fetch the key of any locked door on the way before walking there.
  const locked = doorsOnRoute.find((d) => d.state === "locked" && !carriesKeyFor(world, d.colour));
  if (locked) return fetchKey(world, locked.colour, locked.name);
  const door = doorsOnRoute[0];
  if (!door) {
    if (isVisible(world, target)) {
      return { action: `go to ${name}`, thought: `The ${name} is in view and the way is clear.` };
    }
    const step = firstActionTowards(world, (pose) => pose.cell === route[0]);
    return { action: step ?? "turn left", thought: `I head towards the ${name}.` };
  }
  if (frontCell(world) !== door.cell) {
    return {
      action: `go to ${door.name}`,
      thought: `The way to the ${name} leads through the ${door.name}.`,
    };
  }
  if (door.state === "open") {
    return { action: "move forward", thought: `I step through the open ${door.name}.` };
  }
  return { action: "toggle", thought: `I open the ${door.name} on the way to the ${name}.` };
}

/** Whether the cheapest way to `target` crosses a locked door that the carried key opens. */
function needsCarriedKey(world: World, target: number): boolean {
  const carried = world.objects[world.carrying];
  if (carried?.kind !== "key") return false;
  const route = plannedRoute(world, target) ?? [];
  return route.some((cell) => {
    const door = world.doors[world.doorAt[cell] ?? -1];
    return door?.state === "locked" && door.colour === carried.colour;
  });
}

function pickUp(world: World, id: number, keyErrand = false): Decision {
  const object = world.objects[id];
  if (!object) return { action: "turn left", thought: "I lost track of what to pick up." };
  // Hands first (unless they hold a key the way needs): putting something down on the way
  // could otherwise undo the approach.
  if (world.carrying >= 0 && !needsCarriedKey(world, object.cell)) return freeHands(world);
  if (frontCell(world) !== object.cell) {
    return approach(world, object.cell, object.name, keyErrand);
  }
  if (world.carrying >= 0) return freeHands(world);
  return {
    action: `pick up ${object.name}`,
    thought: `The ${object.name} is right in front of me.`,
  };
}

function fetchKey(world: World, colour: string, doorName: string): Decision {
  const key = world.objects.findIndex((o) => o.kind === "key" && o.colour === colour);
  const decision = pickUp(world, key, true);
  return {
    ...decision,
    thought: `The ${doorName} is locked; I need the ${colour} key. ${decision.thought}`,
  };
}

function openDoor(world: World, id: number): Decision {
  const door = world.doors[id];
  if (!door) return { action: "turn left", thought: "I lost track of the door." };
  if (door.state === "locked" && !carriesKeyFor(world, door.colour)) {
    return fetchKey(world, door.colour, door.name);
  }
  if (frontCell(world) !== door.cell) return approach(world, door.cell, door.name);
  return { action: "toggle", thought: `The ${door.name} is in front of me; I open it.` };
}

/** The first locked door on the cheapest way to `target`, or -1. */
function lockOnTheWay(world: World, target: number): number {
  const route = plannedRoute(world, target) ?? [];
  for (const cell of route) {
    const id = world.doorAt[cell] ?? -1;
    if (world.doors[id]?.state === "locked") return id;
  }
  return -1;
}

function putNextTo(world: World, objectId: number, targetId: number): Decision {
  const target = world.objects[targetId];
  if (!target) return { action: "turn left", thought: "I lost track of the target." };
  // Unlock the way to the target first: the key errand needs free hands.
  const lock = lockOnTheWay(world, target.cell);
  if (lock >= 0) return openDoor(world, lock);
  if (world.carrying !== objectId) return pickUp(world, objectId);
  const name = world.objects[objectId]?.name;
  const thought = `I carry the ${name}; I put it down next to the ${target.name}.`;
  const fits = (cell: number) =>
    isEmptyFloor(world, cell) && chebyshev(world, cell, target.cell) === 1;
  const facesSpot = ({ cell, dir }: Pose) => fits(cell + (world.offsets[dir] as number));
  if (fits(frontCell(world))) return { action: "drop", thought };
  const near = firstActionTowards(world, facesSpot, NEAR_DROP_ACTIONS);
  if (near) return { action: near, thought };
  if (frontCell(world) === target.cell) {
    return { action: firstActionTowards(world, facesSpot) ?? "turn left", thought };
  }
  return approach(world, target.cell, target.name);
}

/** The next action for the world's goal. */
export function decideGridworldAction(world: World): Decision {
  const goal = world.task.goal;
  switch (goal.kind) {
    case "goto": {
      const object = world.objects[goal.object];
      if (!object) return { action: "turn left", thought: "I lost track of the goal." };
      return approach(world, object.cell, object.name);
    }
    case "pickup":
      return pickUp(world, goal.object);
    case "open":
      return openDoor(world, goal.door);
    case "putnext":
      return putNextTo(world, goal.object, goal.target);
  }
}

export const solveGridworld: ReferenceSolver = (ctx): Agent => {
  const world = createWorld(generateTask(ctx.taskIndex, ctx.seed));
  return {
    async act() {
      const { action, thought } = decideGridworldAction(world);
      applyAction(world, parseAction(action));
      return { action, message: `Thought: ${thought}\n\nAction: ${action}` };
    },
  };
};
