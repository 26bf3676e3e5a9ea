/**
 * The Env API's contract, checked for every built-in environment: split edges, unknown task
 * indices, step before reset. Rules particular to one environment stay in its own test file.
 */
import { describe, expect, it } from "vitest";
import { BUILTIN_ENVS } from "../../src/env/registry.js";
import { NotResetError, UnknownTaskError } from "../../src/env/types.js";

describe.each(BUILTIN_ENVS.map((def) => [def.info.name, def] as const))("%s", (_name, def) => {
  it("has 100 test and 400 train tasks (blade: one test task per dataset), and resets at the edges", async () => {
    const { test, train } = def.info.splits;
    // blade's tasks are its datasets (BLADE has no train split): six of clade's own.
    const blade = def.info.name === "blade";
    expect(test).toEqual({ start: 0, end: blade ? 6 : 100 });
    expect(train).toEqual(blade ? { start: 6, end: 6 } : { start: 100, end: 500 });
    const env = def.create();
    try {
      for (const index of blade ? [0, 5] : [0, 99, 100, 499]) {
        expect((await env.reset(index)).text.length).toBeGreaterThan(0);
      }
    } finally {
      await env.close?.();
    }
  });

  it("rejects task indices outside the splits with UnknownTaskError", async () => {
    const env = def.create();
    try {
      for (const index of [-1, 500, 1.5, 2.5, Number.NaN]) {
        await expect(env.reset(index)).rejects.toBeInstanceOf(UnknownTaskError);
      }
    } finally {
      await env.close?.();
    }
  });

  it("throws NotResetError for a step before any reset", async () => {
    const env = def.create();
    try {
      const action = def.sampleAction(() => 0.5, { text: "" });
      await expect(env.step(action)).rejects.toBeInstanceOf(NotResetError);
    } finally {
      await env.close?.();
    }
  });
});
