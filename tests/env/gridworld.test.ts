import { describe, expect, it } from "vitest";
import { solveGridworld } from "../../src/agent/reference/gridworld.js";
import {
  applyAction,
  chebyshev,
  createWorld,
  DOOR,
  FLOOR,
  frontCell,
  type GridTask,
  generateTask,
  goalReached,
  gridworldEnv,
  isEmptyFloor,
  isPassable,
  LEVEL_COUNT,
  parseAction,
  relativePosition,
  WALL,
  type World,
  walkDistances,
} from "../../src/env/gridworld/index.js";
import { EpisodeDoneError } from "../../src/env/types.js";
import { runReferenceEpisode } from "../fixtures/reference-episode.js";

const info = gridworldEnv.info;

/** Runs the reference solver on a task; every action it sends must be valid. */
async function runSolver(taskIndex: number, seed: number) {
  const record = await runReferenceEpisode(gridworldEnv, solveGridworld, taskIndex, seed);
  const invalid = record.steps.find((step) => step.info.invalid);
  if (invalid) throw new Error(`solver sent an invalid action: ${invalid.action}`);
  return record;
}

async function transcript(taskIndex: number, seed: number, actions: string[]): Promise<string[]> {
  const env = gridworldEnv.create();
  const texts = [(await env.reset(taskIndex, { seed })).text];
  for (const action of actions) texts.push((await env.step(action)).observation.text);
  return texts;
}

/** The first task index (from `from`) whose task satisfies `test`. */
function findTask(test: (task: GridTask) => boolean, from = 0): GridTask {
  for (let index = from; index < 500; index++) {
    const task = generateTask(index);
    if (test(task)) return task;
  }
  throw new Error("no such task");
}

/** Puts the agent on `cell` facing `dir` (test set-up only). */
function placeAgent(world: World, cell: number, dir: number): void {
  world.agent = cell;
  world.dir = dir;
}

/** A free floor pose of the world whose front cell satisfies `test`. */
function findPose(world: World, test: (front: number) => boolean): [number, number] {
  for (let cell = 0; cell < world.layout.length; cell++) {
    if (world.layout[cell] !== FLOOR || (world.objectAt[cell] ?? -1) >= 0) continue;
    for (let dir = 0; dir < 4; dir++) {
      if (test(cell + (world.offsets[dir] as number))) return [cell, dir];
    }
  }
  throw new Error("no such pose");
}

/** The direction that leads from `from` to the neighbouring cell `to`. */
const towards = (world: World, from: number, to: number) => world.offsets.indexOf(to - from);

const act = (world: World, action: string) => applyAction(world, parseAction(action));

describe("gridworld info and splits", () => {
  it("has the agreed splits, version, limits and documented actions", () => {
    expect(info.name).toBe("gridworld");
    expect(info.version).toBe("1.0.0");
    expect(info.splits.test).toEqual({ start: 0, end: 100 });
    expect(info.splits.train).toEqual({ start: 100, end: 500 });
    expect(info.successThreshold).toBe(1);
    expect(info.maxSteps).toBe(64);
    for (const action of ["turn left", "turn right", "move forward", "go to <colour> <kind>"]) {
      expect(info.instruction).toContain(action);
    }
    for (const action of ["pick up <colour> <kind>", "drop", "toggle", "at most 64 actions"]) {
      expect(info.instruction).toContain(action);
    }
  });
});

describe("gridworld generation", () => {
  it("grades levels by index and never starts with the goal met", () => {
    const layouts = new Set<string>();
    const goals = new Set<string>();
    for (let index = 0; index < 500; index++) {
      for (const seed of [0, 3]) {
        const task = generateTask(index, seed);
        expect(task.level).toBe(index % LEVEL_COUNT);
        layouts.add(`${task.roomRows}x${task.roomCols}`);
        goals.add(`${task.level}:${task.goal.kind}`);
        const names = task.objects.map((o) => `${o.colour} ${o.kind}`);
        expect(new Set(names).size).toBe(names.length);
        expect(goalReached(createWorld(task))).toBe(false);
        if (task.level <= 1) expect(task.doors).toEqual([]);
        if (task.level === 4)
          expect(task.doors.filter((d) => d.state === "locked")).toHaveLength(1);
      }
    }
    expect([...layouts].sort()).toEqual(["1x1", "1x2", "1x3", "2x1", "2x2", "3x1"]);
    for (const kind of ["goto", "pickup", "open", "putnext"]) expect(goals).toContain(`4:${kind}`);
    expect(goals).not.toContain("0:putnext");
  });

  it("puts level-4 goals behind the locked door, with its key on the agent's side", () => {
    for (let index = 4; index < 500; index += LEVEL_COUNT) {
      const world = createWorld(generateTask(index, 1));
      for (const door of world.doors) if (door.state === "closed") door.state = "open";
      const lockedDoor = world.doors.find((d) => d.state === "locked");
      if (!lockedDoor) throw new Error(`task ${index} has no locked door`);
      const distance = walkDistances(world);
      const reachable = (cell: number) =>
        world.offsets.some((o) => (distance[cell + o] ?? -1) >= 0);
      const key = world.objects.find((o) => o.kind === "key" && o.colour === lockedDoor.colour);
      expect(key && reachable(key.cell), `task ${index}`).toBe(true);
      const goal = world.task.goal;
      if (goal.kind === "open") continue;
      const cells =
        goal.kind === "putnext"
          ? [goal.object, goal.target].map((id) => world.objects[id]?.cell ?? -1)
          : [world.objects[goal.object]?.cell ?? -1];
      expect(
        cells.some((cell) => !reachable(cell)),
        `task ${index}`,
      ).toBe(true);
    }
  });

  it("is deterministic per (index, seed); seeds move things, not the blueprint", () => {
    expect(generateTask(7, 2)).toEqual(generateTask(7, 2));
    expect(generateTask(7)).toEqual(generateTask(7, 0));
    const blueprint = (t: GridTask) => ({
      goal: t.goal,
      doors: t.doors,
      objects: t.objects.map(({ kind, colour, room }) => ({ kind, colour, room })),
      startRoom: t.startRoom,
    });
    const starts = new Set<string>();
    for (let seed = 0; seed < 6; seed++) {
      const task = generateTask(13, seed);
      expect(blueprint(task)).toEqual(blueprint(generateTask(13)));
      starts.add(`${task.start}/${task.objects.map((o) => o.cell).join(",")}`);
    }
    expect(starts.size).toBeGreaterThan(3);
  });
});

describe("gridworld observations", () => {
  it("phrases relative positions from the agent's point of view", () => {
    expect(relativePosition(2, -1)).toBe("2 steps ahead and 1 to your left");
    expect(relativePosition(1, 0)).toBe("1 step ahead (right in front of you)");
    expect(relativePosition(-3, 2)).toBe("3 steps behind and 2 to your right");
    expect(relativePosition(0, -1)).toBe("1 step to your left");
  });

  it("states the world, goal, position, front cell and objects in view at reset", async () => {
    const task = generateTask(0);
    const world = createWorld(task);
    const observation = await gridworldEnv.create().reset(0);
    expect(observation.text).toContain(`The world is a single room of ${task.roomSize}x`);
    expect(observation.text).toContain("Goal: pick up the ");
    expect(observation.text).toMatch(/facing (north|east|south|west), carrying nothing/);
    expect(observation.text).toMatch(/In front of you: (a wall|empty floor|a \w+ \w+)\./);
    for (const object of world.objects) expect(observation.text).toContain(`- a ${object.name}: `);
    expect(observation.availableActions?.slice(0, 2)).toEqual(["turn left", "turn right"]);
    for (const object of world.objects) {
      expect(observation.availableActions).toContain(`go to ${object.name}`);
    }
  });

  it("shows only the agent's room, both rooms from a doorway", async () => {
    const task = findTask((t) => t.level === 3 && t.doors.some((d) => d.state === "open"));
    const world = createWorld(task);
    const door = world.doors.find((d) => d.state === "open") as (typeof world.doors)[number];
    const inRoom = (room: number) => world.objects.filter((o) => world.roomOf[o.cell] === room);
    const [a, b] = door.rooms;
    const others = world.objects.filter((o) => !door.rooms.includes(world.roomOf[o.cell] ?? -1));
    placeAgent(world, door.approaches[0], towards(world, door.approaches[0], door.cell));
    expect(act(world, "move forward").invalid).toBeUndefined();
    expect(world.agent).toBe(door.cell);
    for (const object of [...inRoom(a), ...inRoom(b)]) {
      expect(act(world, `go to ${object.name}`).invalid, object.name).toBeUndefined();
      placeAgent(world, door.cell, towards(world, door.approaches[0], door.cell));
    }
    for (const object of others) {
      const outcome = act(world, `go to ${object.name}`);
      expect(outcome.invalid).toBe(true);
      expect(outcome.text).toContain(`You cannot see a ${object.name} here.`);
    }
  });
});

describe("gridworld rules", () => {
  it("turns on the spot", () => {
    const world = createWorld(generateTask(0));
    const { agent, dir } = world;
    expect(act(world, "turn right").text).toBe("You turn right.");
    expect(world.dir).toBe((dir + 1) % 4);
    act(world, "turn left");
    act(world, "turn left");
    expect(world.dir).toBe((dir + 3) % 4);
    expect(world.agent).toBe(agent);
  });

  it("moves forward onto free floor and is blocked by walls, objects and closed doors", () => {
    const world = createWorld(findTask((t) => t.level === 2));
    const [cell, dir] = findPose(world, (front) => isPassable(world, front));
    placeAgent(world, cell, dir);
    expect(act(world, "move forward")).toEqual({ text: "You move forward.", info: undefined });
    expect(world.agent).toBe(cell + (world.offsets[dir] as number));
    const blockers: [string, (front: number) => boolean][] = [
      ["a wall", (front) => world.layout[front] === WALL],
      ["a ", (front) => (world.objectAt[front] ?? -1) >= 0],
      ["(closed)", (front) => world.layout[front] === DOOR],
    ];
    for (const [what, test] of blockers) {
      const [at, facing] = findPose(world, test);
      placeAgent(world, at, facing);
      const outcome = act(world, "move forward");
      expect(outcome.text).toContain("You cannot move forward:");
      expect(outcome.text).toContain(what);
      expect(outcome.invalid).toBeUndefined();
      expect(outcome.info?.blocked).toBeTruthy();
      expect(world.agent).toBe(at);
    }
  });

  it("goes to objects in view and faces them", () => {
    const world = createWorld(generateTask(5));
    for (const object of world.objects) {
      const outcome = act(world, `go to the ${object.name}`);
      if (outcome.text.startsWith("You are already facing")) continue;
      expect(outcome.text).toMatch(/^You (walk \d+ steps? to|turn to face) the /);
      expect(frontCell(world)).toBe(object.cell);
    }
    expect(act(world, "go to the red door").invalid).toBe(true);
    expect(act(world, "go to").invalid).toBe(true);
  });

  it("picks up the object in front, one at a time, and drops it in front", () => {
    const world = createWorld(findTask((t) => t.level === 1));
    const [first, second] = world.objects as [World["objects"][0], World["objects"][0]];
    placeAgent(world, ...findPose(world, (front) => isEmptyFloor(world, front)));
    expect(act(world, "pick up")).toEqual({
      text: "There is nothing in front of you to pick up.",
      invalid: true,
    });
    act(world, `go to ${first.name}`);
    const cell = first.cell;
    expect(act(world, `pick up ${second.name}`).invalid).toBe(true);
    expect(act(world, `pick up ${first.name}`).text).toBe(`You pick up the ${first.name}.`);
    expect(world.carrying).toBe(0);
    expect(world.objectAt[cell]).toBe(-1);
    act(world, `go to ${second.name}`);
    const full = act(world, `pick up ${second.name}`);
    expect(full.invalid).toBe(true);
    expect(full.text).toContain(`already carrying the ${first.name}`);
    expect(act(world, "drop").invalid).toBe(true); // the second object is in front
    placeAgent(world, ...findPose(world, (front) => isEmptyFloor(world, front)));
    const front = frontCell(world);
    expect(act(world, "drop").text).toBe(`You drop the ${first.name} in front of you.`);
    expect(world.objectAt[front]).toBe(0);
    expect(world.carrying).toBe(-1);
    expect(act(world, "drop").invalid).toBe(true);
  });

  it("opens and closes doors, never drops into a doorway", () => {
    const world = createWorld(findTask((t) => t.level === 2));
    const door = world.doors[0] as World["doors"][0];
    placeAgent(world, door.approaches[0], towards(world, door.approaches[0], door.cell));
    expect(frontCell(world)).toBe(door.cell);
    expect(act(world, "toggle").text).toBe(`You open the ${door.name}.`);
    expect(door.state).toBe("open");
    expect(act(world, `open the ${door.name}`).text).toContain("already open");
    expect(act(world, "toggle").text).toBe(`You close the ${door.name}.`);
    expect(door.state).toBe("closed");
    expect(act(world, "toggle blue ball").invalid).toBe(true);
    act(world, "toggle");
    const carried = world.objects[0] as World["objects"][0];
    world.objectAt[carried.cell] = -1;
    carried.cell = -1;
    world.carrying = 0;
    expect(act(world, "drop").invalid).toBe(true);
    act(world, "turn left");
    expect(act(world, "toggle").text).toBe("There is no door in front of you.");
  });

  it("opens a locked door only with the key of its colour", () => {
    const world = createWorld(findTask((t) => t.level === 4));
    const door = world.doors.find((d) => d.state === "locked") as World["doors"][0];
    const side = door.approaches.find((c) => world.roomOf[c] === world.task.startRoom);
    placeAgent(world, side ?? door.approaches[0], 0);
    act(world, `go to ${door.name}`);
    expect(frontCell(world)).toBe(door.cell);
    const refused = act(world, "toggle");
    expect(refused.text).toContain(`The ${door.name} is locked.`);
    expect(refused.info).toEqual({ locked: door.name });
    expect(door.state).toBe("locked");
    const keyId = world.objects.findIndex((o) => o.kind === "key" && o.colour === door.colour);
    const key = world.objects[keyId] as World["objects"][0];
    world.objectAt[key.cell] = -1;
    key.cell = -1;
    world.carrying = keyId;
    expect(act(world, "toggle").text).toBe(
      `You unlock the ${door.name} with the ${key.name} and open it.`,
    );
    expect(door.state).toBe("open");
    expect(world.carrying).toBe(keyId);
  });

  it("counts an object as next to another on any of the 8 surrounding cells", () => {
    const world = createWorld(findTask((t) => t.goal.kind === "putnext"));
    const goal = world.task.goal as { object: number; target: number };
    const x = world.objects[goal.object] as World["objects"][0];
    const y = world.objects[goal.target] as World["objects"][0];
    world.objectAt[x.cell] = -1;
    for (const [dx, dy, near] of [
      [1, 1, true],
      [0, -1, true],
      [2, 0, false],
    ] as const) {
      x.cell = y.cell + dy * world.width + dx;
      expect(chebyshev(world, x.cell, y.cell) === 1).toBe(near);
      expect(goalReached(world)).toBe(near);
    }
  });

  it("parses forgivingly but strictly", () => {
    expect(parseAction("  Turn LEFT. ")).toEqual({ kind: "turn", right: false });
    expect(parseAction("`move forward`")).toEqual({ kind: "forward" });
    expect(parseAction("go to the Red Ball.")).toEqual({ kind: "goto", name: "red ball" });
    expect(parseAction("pick up a blue key")).toEqual({ kind: "pickup", name: "blue key" });
    expect(parseAction("open yellow door")).toMatchObject({ kind: "toggle", intent: "open" });
    for (const bad of ["go to the pink ball", "go to red", "jump", "pick up red ball now"]) {
      expect(parseAction(bad).kind, bad).toBe("invalid");
    }
  });
});

describe("gridworld episodes", () => {
  it("answers invalid and hostile input with an explanation and goes on", async () => {
    const env = gridworldEnv.create();
    const first = await env.reset(3);
    const inputs = [
      "",
      "   ",
      "x".repeat(1_000_000),
      "🙂 go to 🔴",
      '{"action":"turn left"}',
      "\u0000",
    ];
    for (const input of inputs) {
      const result = await env.step(input);
      expect(result).toMatchObject({ reward: 0, done: false, info: { invalid: true } });
      expect(result.observation.text).toMatch(/^Invalid action "/);
      expect(result.observation.text.split("\n")[0]?.length).toBeLessThan(260);
      expect(result.observation.text).toContain("Goal: ");
      expect(result.observation.availableActions).toEqual(first.availableActions);
    }
  });

  it("ends at the step limit, counting invalid actions, then throws", async () => {
    const env = gridworldEnv.create();
    await env.reset(20);
    for (let step = 1; step < info.maxSteps; step++) {
      expect((await env.step(step % 2 ? "wait" : "turn left")).done).toBe(false);
    }
    const last = await env.step("wait");
    expect(last).toMatchObject({ reward: 0, done: true, info: { success: false, steps: 64 } });
    expect(last.observation.text).toContain("used all 64 actions");
    await expect(env.step("turn left")).rejects.toBeInstanceOf(EpisodeDoneError);
  });

  it("rewards each goal kind and then refuses steps until reset", async () => {
    const plans: [GridTask, (t: GridTask) => string[]][] = [
      [findTask((t) => t.goal.kind === "goto"), (t) => [`go to ${name(t, goalObject(t))}`]],
      [
        findTask((t) => t.goal.kind === "pickup" && t.level === 0),
        (t) => [`go to ${name(t, goalObject(t))}`, `pick up ${name(t, goalObject(t))}`],
      ],
      [
        findTask((t) => t.goal.kind === "open" && t.level === 2),
        (t) => {
          const door = t.doors[0];
          return [`go to ${door?.colour} door`, "toggle"];
        },
      ],
    ];
    for (const [task, plan] of plans) {
      const env = gridworldEnv.create();
      await env.reset(task.index);
      const actions = plan(task);
      let last = await env.step(actions[0] as string);
      for (const action of actions.slice(1)) last = await env.step(action);
      expect(last, `task ${task.index}`).toMatchObject({
        reward: 1,
        done: true,
        info: { success: true, steps: actions.length },
      });
      expect(last.observation.text).toContain("You reached the goal:");
      await expect(env.step("turn left")).rejects.toBeInstanceOf(EpisodeDoneError);
      await env.reset(task.index);
      await expect(env.step("turn left")).resolves.toBeTruthy();
    }
  });
});

const goalObject = (t: GridTask) => (t.goal.kind === "open" ? -1 : t.goal.object);
const name = (t: GridTask, id: number) => `${t.objects[id]?.colour} ${t.objects[id]?.kind}`;

describe("gridworld determinism", () => {
  const actions = ["turn left", "move forward", "jump", "go to red ball", "turn right", "drop"];

  it("repeats the same observations for the same index and seed", async () => {
    expect(await transcript(9, 4, actions)).toEqual(await transcript(9, 4, actions));
    expect(await transcript(9, 0, actions)).toEqual(await transcript(9, 0, actions));
  });

  it("differs across indices and seeds", async () => {
    const firsts = new Set<string>();
    for (let index = 0; index < 100; index++) firsts.add((await transcript(index, 0, []))[0] ?? "");
    expect(firsts.size).toBe(100);
    const bySeed = new Set<string>();
    for (let seed = 0; seed < 6; seed++) bySeed.add((await transcript(9, seed, []))[0] ?? "");
    expect(bySeed.size).toBeGreaterThan(3);
  });
});

describe("gridworld reference solver", () => {
  it("solves every test task for seed 0 and three other seeds", async () => {
    for (const seed of [0, 1, 17, 123456]) {
      const failures: number[] = [];
      for (let index = info.splits.test.start; index < info.splits.test.end; index++) {
        const { reward } = await runSolver(index, seed);
        if (reward < info.successThreshold) failures.push(index);
      }
      expect(failures, `seed ${seed}`).toEqual([]);
    }
  });

  it("solves train tasks, fetching keys, with AgentGym-style messages", async () => {
    for (const index of [100, 104, 251, 377, 499]) {
      const { reward, steps } = await runSolver(index, 5);
      const actions = steps.map((step) => step.action);
      const reply = steps.at(-1);
      expect(reward, `task ${index}`).toBe(1);
      expect(reply?.message).toMatch(/^Thought: .+\n\nAction: .+$/);
      expect(reply?.message?.endsWith(`Action: ${reply.action}`)).toBe(true);
      if (index === 104) {
        const key = generateTask(104, 5).doors.find((d) => d.state === "locked")?.colour;
        expect(actions).toContain(`pick up ${key} key`);
        expect(actions).toContain("toggle");
      }
    }
  });
});

describe("gridworld sampleAction", () => {
  it("draws offered actions, which the env accepts", async () => {
    const env = gridworldEnv.create();
    let observation = await env.reset(0);
    let state = 7;
    const random = () => {
      state = (state * 48271) % 2147483647;
      return state / 2147483647;
    };
    const kinds = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const action = gridworldEnv.sampleAction(random, observation);
      expect(observation.availableActions).toContain(action);
      kinds.add(action.split(" ").slice(0, 2).join(" "));
      const result = await env.step(action);
      expect(result.info.invalid, action).toBeUndefined();
      observation = result.done ? await env.reset(i % 100, { seed: i }) : result.observation;
    }
    for (const kind of ["turn left", "move forward", "go to", "pick up", "drop", "toggle"]) {
      expect(kinds).toContain(kind);
    }
  });
});
