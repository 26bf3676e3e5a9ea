/** The AgentGym "id" dialect of the env server: every endpoint, and every bad input. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MazeEnv, mazeEnv } from "../../src/env/maze/index.js";
import { type RunningEnvServer, startEnvServer } from "../../src/serve/index.js";
import { counterEnv } from "../fixtures/counter-env.js";

let server: RunningEnvServer;

afterEach(async () => {
  await server?.close();
});

async function post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(server.url + path);
  return { status: response.status, body: await response.json() };
}

/** clade's ids: random integers in [2^31, 2^53), exact in JSON. */
function expectLargeId(id: unknown) {
  expect(Number.isSafeInteger(id)).toBe(true);
  expect(id as number).toBeGreaterThanOrEqual(2 ** 31);
}

/** AgentGym's way of failing: HTTP 200 and {"error"}. */
function expectError(reply: { status: number; body: unknown }, code: string, text?: RegExp) {
  expect(reply.status).toBe(200);
  const body = reply.body as { error: string; code: string };
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe("string");
  if (text) expect(body.error).toMatch(text);
}

describe("AgentGym id dialect on maze", () => {
  beforeEach(async () => {
    server = await startEnvServer(mazeEnv);
  });

  it("answers banner, create, reset, step, observation, actions, detail, close", async () => {
    expect(await get("/")).toEqual({
      status: 200,
      body: expect.stringContaining("This is environment maze"),
    });

    const created = await post("/create", {});
    expect(created.status).toBe(200);
    const createBody = created.body as Record<string, unknown>;
    expect(createBody).toMatchObject({ reward: 0, done: false });
    expect(createBody.observation).toBe(mazeEnv.info.instruction);
    const id = createBody.id as number;
    expectLargeId(id);

    const local = new MazeEnv();
    const first = await local.reset(7);
    const reset = await post("/reset", { id, data_idx: 7 });
    expect(reset.body).toEqual({
      id,
      observation: `${mazeEnv.info.instruction}\n\n${first.text}`,
      reward: 0,
      score: 0,
      done: false,
      available_actions: first.availableActions,
      task_index: 7,
      seed: 0,
    });

    const bare = await post("/reset", { id, data_idx: 7, include_instruction: false });
    expect((bare.body as { observation: string }).observation).toBe(first.text);

    const expected = await local.step("move up");
    const stepped = await post("/step", { id, action: "move up" });
    expect(stepped.body).toEqual({
      observation: expected.observation.text,
      reward: expected.reward,
      score: expected.reward,
      done: expected.done,
      available_actions: expected.observation.availableActions,
      info: expected.info,
    });

    expect(await get(`/observation?id=${id}`)).toEqual({
      status: 200,
      body: expected.observation.text,
    });
    expect((await get(`/available_actions?id=${id}`)).body).toEqual(
      expected.observation.availableActions,
    );
    expect((await get(`/detail?id=${id}`)).body).toMatchObject({
      id,
      env: "maze",
      version: mazeEnv.info.version,
      task_index: 7,
      seed: 0,
      steps: 1,
      done: expected.done,
      observation: expected.observation.text,
    });

    expect(await post("/close", { id })).toEqual({ status: 200, body: true });
    expect(await post("/close", { id })).toEqual({ status: 200, body: false });
    expect(server.pool.size).toBe(0);
  });

  it("serves the same API under /<env name> as AgentGym's Maze and Wordle servers do", async () => {
    expect((await get("/maze")).body).toEqual(expect.stringContaining("maze"));
    const created = await post("/maze/create", {});
    const id = (created.body as { id: number }).id;
    const reset = await post("/maze/reset", { id, game: 3 });
    expect(reset.body).toMatchObject({ id, task_index: 3, done: false });
    const stepped = await post("/maze/step", { id, action: "move left" });
    expect(stepped.body).toMatchObject({ done: false, reward: 0 });
  });

  it("takes the task index under each name AgentGym's clients use, and a seed", async () => {
    const { id } = (await post("/create", {})).body as { id: number };
    for (const field of ["data_idx", "game", "idx", "seed"]) {
      const reply = await post("/reset", { id, [field]: 12 });
      expect((reply.body as { task_index: number }).task_index).toBe(12);
    }
    const local = new MazeEnv();
    const seeded = await local.reset(12, { seed: 5 });
    const reply = await post("/reset", {
      id,
      data_idx: 12,
      episode_seed: 5,
      include_instruction: false,
    });
    expect(reply.body).toMatchObject({ observation: seeded.text, seed: 5 });
  });

  it("accepts TextCraft's create body and ignores fields it does not know", async () => {
    const created = await post("/create", { commands: null, goal: null, minecraft_dir: "x" });
    const id = (created.body as { id: number }).id;
    expectLargeId(id);
    const reply = await post("/reset", { id, data_idx: 1, extra: [1, 2] });
    expect((reply.body as { done: boolean }).done).toBe(false);
  });

  it("hands out unique ids and never reuses a closed one", async () => {
    const ids = await Promise.all(
      Array.from(
        { length: 50 },
        async () => ((await post("/create", {})).body as { id: number }).id,
      ),
    );
    expect(new Set(ids).size).toBe(50);
    for (const id of ids) expectLargeId(id);
    // Random, not counted: no two neighbours, and not in creation order.
    const sorted = [...ids].sort((a, b) => a - b);
    expect(sorted).not.toEqual(ids);
    expect(sorted.some((id, i) => i > 0 && id - (sorted[i - 1] as number) === 1)).toBe(false);
    await post("/close", { id: ids[0] });
    const next = ((await post("/create", {})).body as { id: number }).id;
    expect(ids).not.toContain(next);
    expectError(await post("/step", { id: ids[0], action: "move up" }), "unknown_instance");
  });

  it("reports malformed JSON and bodies that are not objects", async () => {
    expectError(await post("/step", "{not json"), "bad_json", /not valid JSON/);
    expectError(await post("/step", "[1, 2]"), "invalid_request", /JSON object/);
    expectError(await post("/step", '"move up"'), "invalid_request", /JSON object/);
    expectError(await post("/reset", "null"), "invalid_request");
  });

  it("names missing and mistyped fields", async () => {
    const { id } = (await post("/create", {})).body as { id: number };
    expectError(await post("/step", { id }), "invalid_request", /missing field "action"/);
    expectError(
      await post("/step", { action: "move up" }),
      "invalid_request",
      /missing field "id"/,
    );
    expectError(await post("/step", { id, action: 3 }), "invalid_request", /"action"/);
    expectError(await post("/step", { id: -1, action: "x" }), "invalid_request", /"id"/);
    expectError(await post("/step", { id: 1.5, action: "x" }), "invalid_request", /"id"/);
    expectError(await post("/step", { id: 2 ** 53, action: "x" }), "invalid_request", /"id"/);
    expectError(await get("/observation?id=9007199254740992"), "invalid_request", /"id"/);
    expectError(await post("/reset", { id }), "invalid_request", /data_idx/);
    expectError(await post("/reset", { id, data_idx: "7" }), "invalid_request", /data_idx/);
    expectError(await post("/close", {}), "invalid_request", /missing field "id"/);
    expectError(await get("/observation"), "invalid_request", /query parameter "id"/);
    expectError(await get("/observation?id=abc"), "invalid_request", /"id"/);
  });

  it("reports unknown and closed ids, steps out of turn, unknown tasks", async () => {
    expectError(await post("/step", { id: 99, action: "move up" }), "unknown_instance", /99/);
    expectError(await get("/detail?id=99"), "unknown_instance");
    const { id } = (await post("/create", {})).body as { id: number };
    expectError(await post("/step", { id, action: "move up" }), "not_reset", /reset first/);
    expectError(await get(`/observation?id=${id}`), "not_reset");
    expectError(await post("/reset", { id, data_idx: 100_000 }), "unknown_task", /100000/);

    // Walk the reference route to the goal, then step once more.
    await post("/reset", { id, data_idx: 0 });
    const { solveMaze } = await import("../../src/agent/reference/maze.js");
    const agent = solveMaze({ env: mazeEnv.info, taskIndex: 0, seed: 0, sampleIndex: 0 });
    let observation = { text: (await get(`/observation?id=${id}`)).body as string };
    for (let turn = 0; turn < mazeEnv.info.maxSteps; turn++) {
      const { action } = await agent.act(
        { instruction: "", observation, history: [] },
        new AbortController().signal,
      );
      const reply = (await post("/step", { id, action })).body as {
        observation: string;
        done: boolean;
        reward: number;
      };
      observation = { text: reply.observation };
      if (reply.done) {
        expect(reply.reward).toBe(1);
        break;
      }
    }
    expectError(await post("/step", { id, action: "move up" }), "episode_done", /finished/);

    await post("/close", { id });
    expectError(await post("/step", { id, action: "move up" }), "unknown_instance", /no longer/);
    expectError(await post("/reset", { id, data_idx: 1 }), "unknown_instance");
  });

  it("answers unknown paths with 404 and wrong methods with 405", async () => {
    const missing = await post("/nope", {});
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: "not_found" });
    const wrong = await get("/step");
    expect(wrong.status).toBe(405);
    expect(wrong.body).toMatchObject({ code: "method_not_allowed" });
  });

  it("refuses a 10 MB action with a clear error and keeps serving", async () => {
    const { id } = (await post("/create", {})).body as { id: number };
    await post("/reset", { id, data_idx: 1 });
    const huge = await post("/step", { id, action: "x".repeat(10 * 1024 * 1024) });
    expectError(huge, "too_large", /exceeds the limit of 1048576 bytes/);
    const after = await post("/step", { id, action: "move up" });
    expect((after.body as { done: boolean }).done).toBe(false);
  });
});

describe("AgentGym id dialect with a failing env", () => {
  it("turns an env crash into {error} and keeps the instance usable", async () => {
    server = await startEnvServer(counterEnv, { instructionInFirstObservation: false });
    const { id } = (await post("/create", {})).body as { id: number };
    const reset = await post("/reset", { id, data_idx: 2 });
    expect((reset.body as { observation: string }).observation).toBe("count 0 of 3");
    expect(reset.body).not.toHaveProperty("available_actions");
    expectError(await post("/step", { id, action: "explode" }), "env_error", /env crashed/);
    const after = await post("/step", { id, action: "inc" });
    expect(after.body).toMatchObject({ observation: "count 1 of 3", done: false });
    expect((await get(`/available_actions?id=${id}`)).body).toEqual([]);
  });
});
