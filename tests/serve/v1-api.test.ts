/** clade's own /v1 API of the env server: resources, status codes, error bodies. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MazeEnv, mazeEnv } from "../../src/env/maze/index.js";
import { type RunningEnvServer, startEnvServer } from "../../src/serve/index.js";
import { counterEnv } from "../fixtures/counter-env.js";

let server: RunningEnvServer;

afterEach(async () => {
  await server?.close();
});

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

async function call(method: string, path: string, body?: unknown): Promise<Reply> {
  const response = await fetch(server.url + path, {
    method,
    ...(body === undefined
      ? {}
      : {
          headers: { "content-type": "application/json" },
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? undefined : JSON.parse(text),
  };
}

/** Creates an instance and returns its id (random, at least 2^31). */
async function create(): Promise<number> {
  const created = await call("POST", "/v1/instances");
  expect(created.status).toBe(201);
  const id = (created.body as { id: number }).id;
  expect(Number.isSafeInteger(id) && id >= 2 ** 31).toBe(true);
  return id;
}

function expectError(reply: Reply, status: number, code: string, text?: RegExp) {
  expect(reply.status).toBe(status);
  expect(reply.body).toMatchObject({ code });
  if (text) expect((reply.body as { error: string }).error).toMatch(text);
}

describe("/v1 on maze", () => {
  beforeEach(async () => {
    server = await startEnvServer(mazeEnv, { maxInstances: 3 });
  });

  it("publishes the env info and instance counts", async () => {
    const reply = await call("GET", "/v1/info");
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      server: "clade",
      api: 1,
      env: mazeEnv.info,
      instances: { active: 0, max: 3, maxPerClient: 1, yours: 0 },
      idleTimeoutMs: 24 * 3600_000,
      evictIdleAfterMs: 60_000,
      maxBodyBytes: 1024 * 1024,
    });
  });

  it("creates, resets, steps, shows and deletes an instance", async () => {
    const created = await call("POST", "/v1/instances");
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    expect(created.body).toEqual({ id });
    expect(Number.isSafeInteger(id) && id >= 2 ** 31).toBe(true);
    expect(created.headers.get("location")).toBe(`/v1/instances/${id}`);

    const local = new MazeEnv();
    const first = await local.reset(4, { seed: 2 });
    const reset = await call("POST", `/v1/instances/${id}/reset`, { task: 4, seed: 2 });
    expect(reset).toMatchObject({ status: 200, body: { observation: first } });

    const expected = await local.step("move down");
    const stepped = await call("POST", `/v1/instances/${id}/step`, { action: "move down" });
    expect(stepped).toMatchObject({ status: 200, body: expected });

    const shown = await call("GET", `/v1/instances/${id}`);
    expect(shown.body).toEqual({
      id,
      episode: {
        task: 4,
        seed: 2,
        steps: 1,
        reward: expected.reward,
        done: expected.done,
        observation: expected.observation,
        info: expected.info,
      },
    });

    const deleted = await call("DELETE", `/v1/instances/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expectError(await call("DELETE", `/v1/instances/${id}`), 404, "unknown_instance");
    expectError(
      await call("GET", `/v1/instances/${id}`),
      404,
      "unknown_instance",
      /no longer exists/,
    );
  });

  it("shows an instance without an episode as episode null", async () => {
    const id = await create();
    expect((await call("GET", `/v1/instances/${id}`)).body).toEqual({ id, episode: null });
  });

  it("answers bad requests with 400 and a message", async () => {
    const id = await create();
    expectError(await call("POST", `/v1/instances/${id}/reset`, "{oops"), 400, "bad_json");
    expectError(
      await call("POST", `/v1/instances/${id}/reset`, {}),
      400,
      "invalid_request",
      /"task"/,
    );
    expectError(
      await call("POST", `/v1/instances/${id}/reset`, { task: "one" }),
      400,
      "invalid_request",
      /"task"/,
    );
    expectError(
      await call("POST", `/v1/instances/${id}/reset`, { task: 1, seed: 0.5 }),
      400,
      "invalid_request",
      /"seed"/,
    );
    expectError(
      await call("POST", `/v1/instances/${id}/reset`, { task: 9999 }),
      400,
      "unknown_task",
    );
    expectError(
      await call("POST", `/v1/instances/${id}/step`, { act: "x" }),
      400,
      "invalid_request",
    );
    expectError(
      await call("POST", "/v1/instances/abc/step", { action: "x" }),
      400,
      "invalid_request",
    );
  });

  it("answers unknown ids with 404 and steps out of turn with 409", async () => {
    expectError(
      await call("POST", "/v1/instances/7/step", { action: "move up" }),
      404,
      "unknown_instance",
    );
    const id = await create();
    expectError(
      await call("POST", `/v1/instances/${id}/step`, { action: "move up" }),
      409,
      "not_reset",
    );
  });

  it("answers a step after done with 409", async () => {
    await server.close();
    server = await startEnvServer(counterEnv);
    const id = await create();
    await call("POST", `/v1/instances/${id}/reset`, { task: 0 });
    const done = await call("POST", `/v1/instances/${id}/step`, { action: "inc" });
    expect(done.body).toMatchObject({ reward: 1, done: true });
    expectError(
      await call("POST", `/v1/instances/${id}/step`, { action: "inc" }),
      409,
      "episode_done",
      /reset/,
    );
    // A new episode on the same instance is fine.
    expect((await call("POST", `/v1/instances/${id}/reset`, { task: 1 })).status).toBe(200);
  });

  it("answers an env crash with 500", async () => {
    await server.close();
    server = await startEnvServer(counterEnv);
    const id = await create();
    await call("POST", `/v1/instances/${id}/reset`, { task: 0 });
    expectError(
      await call("POST", `/v1/instances/${id}/step`, { action: "explode" }),
      500,
      "env_error",
      /env crashed/,
    );
  });

  it("answers 503 with Retry-After when every instance is taken", async () => {
    await server.close();
    server = await startEnvServer(mazeEnv, { maxInstances: 3, maxInstancesPerClient: 3 });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push(await create());
    const full = await call("POST", "/v1/instances");
    expectError(full, 503, "capacity", /all 3/);
    expect(full.headers.get("retry-after")).toBe("1");
    await call("DELETE", `/v1/instances/${ids[1]}`);
    const again = await create();
    expect(ids).not.toContain(again);
  });

  it("answers 429 with Retry-After when this client holds its share", async () => {
    await create();
    const mine = await call("POST", "/v1/instances");
    expectError(mine, 429, "client_capacity", /holds 1 /);
    expect(mine.headers.get("retry-after")).toBe("1");
    expect((await call("GET", "/v1/info")).body).toMatchObject({
      instances: { active: 1, max: 3, maxPerClient: 1, yours: 1 },
    });
  });

  it("answers a body over the limit with 413", async () => {
    const id = await create();
    await call("POST", `/v1/instances/${id}/reset`, { task: 1 });
    const reply = await call("POST", `/v1/instances/${id}/step`, {
      action: "y".repeat(10 * 1024 * 1024),
    });
    expectError(reply, 413, "too_large");
    expect((await call("POST", `/v1/instances/${id}/step`, { action: "move up" })).status).toBe(
      200,
    );
  });

  it("answers unknown endpoints with 404 and wrong methods with 405", async () => {
    expectError(await call("GET", "/v1/nothing"), 404, "not_found");
    expectError(await call("POST", "/v1/info"), 405, "method_not_allowed");
    expectError(await call("GET", "/v1/instances"), 405, "method_not_allowed");
    const id = await create();
    const wrong = await call("GET", `/v1/instances/${id}/step`);
    expectError(wrong, 405, "method_not_allowed");
    expect(wrong.headers.get("allow")).toBe("POST");
  });
});
