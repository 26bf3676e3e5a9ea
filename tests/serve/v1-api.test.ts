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
      instances: { active: 0, max: 3 },
      idleTimeoutMs: 600_000,
      maxBodyBytes: 1024 * 1024,
    });
  });

  it("creates, resets, steps, shows and deletes an instance", async () => {
    const created = await call("POST", "/v1/instances");
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: 0 });
    expect(created.headers.get("location")).toBe("/v1/instances/0");

    const local = new MazeEnv();
    const first = await local.reset(4, { seed: 2 });
    const reset = await call("POST", "/v1/instances/0/reset", { task: 4, seed: 2 });
    expect(reset).toMatchObject({ status: 200, body: { observation: first } });

    const expected = await local.step("move down");
    const stepped = await call("POST", "/v1/instances/0/step", { action: "move down" });
    expect(stepped).toMatchObject({ status: 200, body: expected });

    const shown = await call("GET", "/v1/instances/0");
    expect(shown.body).toEqual({
      id: 0,
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

    const deleted = await call("DELETE", "/v1/instances/0");
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expectError(await call("DELETE", "/v1/instances/0"), 404, "unknown_instance");
    expectError(await call("GET", "/v1/instances/0"), 404, "unknown_instance", /no longer exists/);
  });

  it("shows an instance without an episode as episode null", async () => {
    await call("POST", "/v1/instances");
    expect((await call("GET", "/v1/instances/0")).body).toEqual({ id: 0, episode: null });
  });

  it("answers bad requests with 400 and a message", async () => {
    await call("POST", "/v1/instances");
    expectError(await call("POST", "/v1/instances/0/reset", "{oops"), 400, "bad_json");
    expectError(await call("POST", "/v1/instances/0/reset", {}), 400, "invalid_request", /"task"/);
    expectError(
      await call("POST", "/v1/instances/0/reset", { task: "one" }),
      400,
      "invalid_request",
      /"task"/,
    );
    expectError(
      await call("POST", "/v1/instances/0/reset", { task: 1, seed: 0.5 }),
      400,
      "invalid_request",
      /"seed"/,
    );
    expectError(await call("POST", "/v1/instances/0/reset", { task: 9999 }), 400, "unknown_task");
    expectError(await call("POST", "/v1/instances/0/step", { act: "x" }), 400, "invalid_request");
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
    await call("POST", "/v1/instances");
    expectError(
      await call("POST", "/v1/instances/0/step", { action: "move up" }),
      409,
      "not_reset",
    );
  });

  it("answers a step after done with 409", async () => {
    await server.close();
    server = await startEnvServer(counterEnv);
    await call("POST", "/v1/instances");
    await call("POST", "/v1/instances/0/reset", { task: 0 });
    const done = await call("POST", "/v1/instances/0/step", { action: "inc" });
    expect(done.body).toMatchObject({ reward: 1, done: true });
    expectError(
      await call("POST", "/v1/instances/0/step", { action: "inc" }),
      409,
      "episode_done",
      /reset/,
    );
    // A new episode on the same instance is fine.
    expect((await call("POST", "/v1/instances/0/reset", { task: 1 })).status).toBe(200);
  });

  it("answers an env crash with 500", async () => {
    await server.close();
    server = await startEnvServer(counterEnv);
    await call("POST", "/v1/instances");
    await call("POST", "/v1/instances/0/reset", { task: 0 });
    expectError(
      await call("POST", "/v1/instances/0/step", { action: "explode" }),
      500,
      "env_error",
      /env crashed/,
    );
  });

  it("answers 503 with Retry-After when every instance is taken", async () => {
    for (let i = 0; i < 3; i++) expect((await call("POST", "/v1/instances")).status).toBe(201);
    const full = await call("POST", "/v1/instances");
    expectError(full, 503, "capacity", /all 3/);
    expect(full.headers.get("retry-after")).toBe("1");
    await call("DELETE", "/v1/instances/1");
    expect((await call("POST", "/v1/instances")).body).toEqual({ id: 3 });
  });

  it("answers a body over the limit with 413", async () => {
    await call("POST", "/v1/instances");
    await call("POST", "/v1/instances/0/reset", { task: 1 });
    const reply = await call("POST", "/v1/instances/0/step", {
      action: "y".repeat(10 * 1024 * 1024),
    });
    expectError(reply, 413, "too_large");
    expect((await call("POST", "/v1/instances/0/step", { action: "move up" })).status).toBe(200);
  });

  it("answers unknown endpoints with 404 and wrong methods with 405", async () => {
    expectError(await call("GET", "/v1/nothing"), 404, "not_found");
    expectError(await call("POST", "/v1/info"), 405, "method_not_allowed");
    expectError(await call("GET", "/v1/instances"), 405, "method_not_allowed");
    await call("POST", "/v1/instances");
    const wrong = await call("GET", "/v1/instances/0/step");
    expectError(wrong, 405, "method_not_allowed");
    expect(wrong.headers.get("allow")).toBe("POST");
  });
});
