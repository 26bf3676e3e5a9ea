import { describe, expect, it } from "vitest";
import { gridworldEnv } from "../../src/env/gridworld/index.js";
import { mazeEnv } from "../../src/env/maze/index.js";
import { createTaskMixture, trainedOnEnv } from "../../src/env/mixture.js";
import { textcraftEnv } from "../../src/env/textcraft/index.js";
import { type EnvDefinition, NotResetError, UnknownTaskError } from "../../src/env/types.js";

const members = [mazeEnv, textcraftEnv, gridworldEnv];
const size = (r: { start: number; end: number }) => r.end - r.start;

describe("task mixture", () => {
  const mixture = createTaskMixture(members);

  it("lays the members' test splits, then their train splits, end to end", () => {
    const tests = members.map((m) => size(m.info.splits.test));
    const trains = members.map((m) => size(m.info.splits.train));
    const testTotal = tests.reduce((a, b) => a + b, 0);
    expect(mixture.info.splits.test).toEqual({ start: 0, end: testTotal });
    expect(mixture.info.splits.train).toEqual({
      start: testTotal,
      end: testTotal + trains.reduce((a, b) => a + b, 0),
    });
    expect(mixture.info.name).toBe("maze+textcraft+gridworld");
    expect(mixture.info.maxSteps).toBe(Math.max(...members.map((m) => m.info.maxSteps)));
    // Member 1's first test task follows member 0's whole test split.
    expect(mixture.locate(tests[0] as number)).toEqual({
      member: 1,
      task: textcraftEnv.info.splits.test.start,
    });
    expect(mixture.locate(testTotal)).toEqual({ member: 0, task: mazeEnv.info.splits.train.start });
  });

  it("maps every member task to one index and back", () => {
    const seen = new Set<number>();
    members.forEach((m, k) => {
      for (const split of ["test", "train"] as const) {
        const { start, end } = m.info.splits[split];
        for (let task = start; task < end; task += 7) {
          const index = mixture.indexOf(k, task);
          expect(seen.has(index)).toBe(false);
          seen.add(index);
          expect(mixture.locate(index)).toEqual({ member: k, task });
        }
      }
    });
    expect(() => mixture.locate(mixture.info.splits.train.end)).toThrow(UnknownTaskError);
    expect(() => mixture.locate(-1)).toThrow(UnknownTaskError);
    expect(() => mixture.indexOf(0, 1_000_000)).toThrow(UnknownTaskError);
  });

  it("plays the member's episode, with the member's info after reset", async () => {
    const env = mixture.create();
    expect(env.info.name).toBe(mixture.info.name);
    await expect(env.step("look")).rejects.toThrow(NotResetError);
    const index = mixture.indexOf(2, gridworldEnv.info.splits.test.start + 3);
    const observation = await env.reset(index);
    const alone = await gridworldEnv.create().reset(gridworldEnv.info.splits.test.start + 3);
    expect(observation).toEqual(alone);
    expect(env.info.instruction).toBe(gridworldEnv.info.instruction);
    const action = observation.availableActions?.[0] as string;
    const direct = gridworldEnv.create();
    await direct.reset(gridworldEnv.info.splits.test.start + 3);
    expect(await env.step(action)).toEqual(await direct.step(action));
    // A reset onto another member switches the episode and the info.
    await env.reset(mixture.indexOf(0, 0));
    expect(env.info.name).toBe("maze");
    await env.close?.();
  });

  it("refuses fewer than two members, repeats and unequal success thresholds", () => {
    expect(() => createTaskMixture([mazeEnv])).toThrow(/≥ 2/);
    expect(() => createTaskMixture([mazeEnv, mazeEnv])).toThrow(/listed twice/);
    const lenient: EnvDefinition = {
      ...gridworldEnv,
      info: { ...gridworldEnv.info, successThreshold: 0.5 },
    };
    expect(() => createTaskMixture([mazeEnv, lenient])).toThrow(/success threshold/);
  });

  it("lets a policy trained on a mixture play its members at the mixed versions", () => {
    const trained = { name: mixture.info.name, version: mixture.info.version };
    expect(trainedOnEnv(trained, mazeEnv.info)).toBe(true);
    expect(trainedOnEnv(trained, gridworldEnv.info)).toBe(true);
    expect(trainedOnEnv(trained, { name: "wordle", version: "1" })).toBe(false);
    expect(trainedOnEnv(trained, { name: "maze", version: "0.0.1" })).toBe(false);
    expect(trainedOnEnv(mazeEnv.info, mazeEnv.info)).toBe(true);
    expect(trainedOnEnv(mazeEnv.info, gridworldEnv.info)).toBe(false);
  });
});
