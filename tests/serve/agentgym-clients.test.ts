/**
 * AgentGym's own env clients against clade's server: for every client with a clade counterpart,
 * the exact requests it sends (tests/fixtures/agentgym, written from reading the clients) are
 * replayed for several tasks to the end of the episode, with the env's reference solver as the
 * model, and the episode is judged the way the client reads it. This file also keeps the client
 * table of docs/agentgym.md true.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findEnv } from "../../src/env/registry.js";
import { AGENTGYM_TASKS } from "../../src/env/remote/index.js";
import { GUESS_WORDS } from "../../src/env/wordle/data.js";
import { generateTask as wordleTask } from "../../src/env/wordle/index.js";
import {
  type RunningEnvServer,
  sqlgymAction,
  startEnvServer,
  wordleGuess,
} from "../../src/serve/index.js";
import {
  CLIENT_FIXTURES,
  ClientFailure,
  clientAction,
  loadFixture,
  loadJson,
  playEpisode,
  ReplayClient,
} from "./agentgym-replay.js";

let server: RunningEnvServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.each(CLIENT_FIXTURES)("AgentGym's %s client", (name) => {
  const fixture = loadFixture(name);
  const def = findEnv(fixture.clade_env);
  const places = [fixture.base_path, ...(fixture.also_at ?? [])];

  it.each(places)(`plays clade's ${fixture.clade_env} to the end at "%s"`, async (place) => {
    server = await startEnvServer(def);
    for (const task of fixture.tasks) {
      const client = await ReplayClient.create(fixture, server.url + place);
      expect(Number.isSafeInteger(client.id)).toBe(true);
      const { first, outputs } = await playEpisode(client, task);

      // The episode ends, and ends solved, as the client reads the last StepOutput.
      const last = outputs.at(-1);
      expect(last, `${name} task ${task}`).toMatchObject({ done: true, reward: 1 });
      expect(outputs.slice(0, -1).every((output) => !output.done)).toBe(true);

      // What the model is shown first: clade's instruction ahead of the observation, except
      // where the client shows only its own text (Wordle, with the vocabulary it fetched).
      if (fixture.observe.from === "client") {
        expect(first).toContain(wordleTask(task).answer);
      } else {
        expect(first).toContain(def.info.instruction.slice(0, 80));
      }

      // The requests went out as the client sends them.
      const [create, ...rest] = client.log;
      expect(create).toMatchObject({ method: "POST", path: "/create", status: 200 });
      expect(create?.body).toEqual(fixture.create.body ?? undefined);
      const steps = rest.filter((exchange) => exchange.path === "/step");
      expect(steps).toHaveLength(outputs.length);
      for (const step of steps) {
        expect(Object.keys(step.body as object).sort()).toEqual(
          Object.keys(fixture.step.body as object).sort(),
        );
      }
      expect(await client.close()).toBe(fixture.close !== null);
      if (fixture.close === null) {
        // No close() in this client: the instance stays until the server reclaims it.
        expect(server.pool.ids()).toContain(client.id);
        await server.pool.close(client.id as number);
      }
    }
    expect(server.pool.size).toBe(0);
  });
});

describe("the env_idx dialect", () => {
  it("answers create with a bare integer and reset in the shape each server family uses", async () => {
    server = await startEnvServer(findEnv("sql"));
    const post = async (path: string, body?: unknown) => {
      const response = await fetch(server?.url + path, {
        method: "POST",
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return response.json() as Promise<unknown>;
    };
    const id = await post("/sqlgym/create");
    expect(Number.isSafeInteger(id)).toBe(true);
    // SqlGym's server answers reset with (observation, None).
    const reset = (await post("/sqlgym/reset", { env_idx: id, item_id: 3 })) as unknown[];
    expect(reset).toEqual([expect.stringContaining("Question:"), null]);
    // The tool servers answer with the observation text.
    expect(await post("/sqlgym/reset", { env_idx: id, id: 3 })).toEqual(reset[0]);

    // A reset without a task index names the field the client should have sent.
    expect(await post("/sqlgym/reset", { env_idx: id })).toMatchObject({
      code: "invalid_request",
      error: expect.stringMatching(/missing field "item_id"/),
    });
    // GET and close by env_idx.
    const observation = await fetch(`${server.url}/sqlgym/observation?env_idx=${id}`);
    expect(await observation.json()).toBe(reset[0]);
    // At the root, the same episode without the note for SqlGym's client.
    const plain = (await post("/reset", { env_idx: id, id: 3 })) as string;
    expect(plain).not.toContain("SqlGym");
    expect(plain.endsWith((reset[0] as string).split("\n\n").at(-1) as string)).toBe(true);
    expect(await post("/sqlgym/close", { env_idx: id })).toBe(true);
    expect(await post("/sqlgym/step", { env_idx: id, action: "SELECT 1" })).toMatchObject({
      code: "unknown_instance",
    });
  });

  it("is told from the request: the root serves both dialects", async () => {
    server = await startEnvServer(findEnv("todo"));
    const post = async (body: unknown) =>
      (await fetch(`${server?.url}/create`, { method: "POST", body: JSON.stringify(body) })).json();
    // The tool clients' {"id": 0} gets a bare integer; any other body AgentGym's "id" reply.
    expect(Number.isSafeInteger(await post({ id: 0 }))).toBe(true);
    expect(await post({})).toMatchObject({ id: expect.any(Number), done: false });
    expect(await post({ minecraft_dir: "x", commands: null, goal: null })).toMatchObject({
      id: expect.any(Number),
    });
  });

  it("keeps SqlGym's bodiless create at the root in the id dialect (use /sqlgym)", async () => {
    server = await startEnvServer(findEnv("sql"));
    const reply = await (await fetch(`${server.url}/create`, { method: "POST" })).json();
    expect(reply).toMatchObject({ id: expect.any(Number) });
  });
});

describe("client-side details", () => {
  it("cut replies down the way each client does", () => {
    const reply = "Thought:\nGo.\n\nAction:\ngo to the red-ball!";
    expect(clientAction("action-line", "BabyAIEnvClient", reply)).toBe("go to the redball");
    expect(clientAction("action-line", "BabyAIEnvClient", "Action: a\nAction: b")).toBeUndefined();
    expect(clientAction("action-line", "TextCraftEnvClient", "Action: Look")).toBe("inventory");
    expect(clientAction("action-line", "BabyAIEnvClient", "no action here")).toBe("");
    expect(clientAction("split-action", "MazeEnvClient", "Thought: x\nAction:\n up ")).toBe(
      "move up",
    );
    expect(clientAction("split-action", "WordleEnvClient", "Action: Crane")).toBe("c r a n e");
    expect(clientAction("sql-block", "SqlGymEnvClient", "Action: ```sql\nSELECT 1;\n```")).toBe(
      "SELECT 1;",
    );
  });

  it("adapt the actions on task routes: Wordle's spaced guesses, SqlGym's bare statements", () => {
    expect(wordleGuess("c r a n e")).toBe("crane");
    expect(wordleGuess(" C R A N E ")).toBe("CRANE");
    expect(wordleGuess("crane")).toBe("crane");
    expect(wordleGuess("c r a n")).toBe("c r a n");
    expect(sqlgymAction("SELECT 1;")).toBe("answer: SELECT 1;");
    expect(sqlgymAction("query: SELECT 1")).toBe("query: SELECT 1");
    expect(sqlgymAction("answer: SELECT 1")).toBe("answer: SELECT 1");
  });

  it("lets a SqlGym model look first with query: inside its sql block", async () => {
    server = await startEnvServer(findEnv("sql"));
    const client = await ReplayClient.create(loadFixture("sqlgym"), `${server.url}/sqlgym`);
    await client.reset(0);
    const first = await client.observe();
    expect(first).toContain("Through AgentGym's SqlGym client");
    const looked = await client.step("Action: ```sql\nquery: SELECT 1 AS one\n```");
    expect(looked).toMatchObject({ reward: 0, done: false });
    expect(looked.state).toMatch(/Result \(1 row\)/);
    const wrong = await client.step("Action: ```sql\nSELECT 1 AS one;\n```");
    expect(wrong).toMatchObject({ reward: 0, done: true });
    expect(wrong.state).toMatch(/Your answer is wrong/);
  });

  it("serves Wordle's vocabulary: every word the game accepts, the hidden ones included", async () => {
    server = await startEnvServer(findEnv("wordle"));
    const client = await ReplayClient.create(loadFixture("wordle"), `${server.url}/wordle`);
    expect(client.vocabulary).toEqual([...GUESS_WORDS]);
    // Only for a live instance, like LMRL-Gym's server.
    const unknown = await (await fetch(`${server.url}/wordle/filtered_vocab?id=5`)).json();
    expect(unknown).toMatchObject({ code: "unknown_instance" });
    // Not at the root: WordleEnvClient belongs at /wordle, where its guesses are understood.
    expect((await fetch(`${server.url}/filtered_vocab?id=${client.id}`)).status).toBe(404);
  });

  it("refuses a client at a task this server does not play, saying what does", async () => {
    server = await startEnvServer(findEnv("gridworld"));
    const other = await fetch(`${server.url}/sqlgym/create`, { method: "POST" });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({
      error: expect.stringMatching(/clade serve-env --env sql/),
    });
    const none = await fetch(`${server.url}/sciworld/create`, { method: "POST" });
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: string }).error).toMatch(/no clade environment/);
    // A client that fails its create raises before any episode (AgentGym-RL then retries).
    const fixture = { ...loadFixture("babyai"), base_path: "/sciworld" };
    await expect(ReplayClient.create(fixture, `${server.url}/sciworld`)).rejects.toThrow(
      ClientFailure,
    );
  });
});

describe("docs/agentgym.md", () => {
  const docs = readFileSync(join(import.meta.dirname, "..", "..", "docs", "agentgym.md"), "utf8");
  const section = docs.slice(docs.indexOf("<!-- agentgym-clients -->"));
  const rows = section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => line.split("|").map((cell) => cell.trim()));

  it("lists every AgentGym-RL task name with its client, clade env and verdict", () => {
    const names = loadJson("agentgym-rl.json").task_names as string[];
    expect(AGENTGYM_TASKS.map((task) => task.name).sort()).toEqual([...names].sort());
    for (const task of AGENTGYM_TASKS) {
      const row = rows.find((cells) => cells[1] === `\`${task.name}\``);
      expect(row, task.name).toBeDefined();
      const [, , client, dialect, env, , verdict] = row as string[];
      expect(client).toBe(`\`${task.client}\``);
      expect(dialect).toBe(task.dialect);
      expect(env).toBe(task.env ? `\`${task.env}\`` : "none");
      const tested = (CLIENT_FIXTURES as readonly string[]).includes(task.name);
      expect(verdict?.startsWith(tested ? "works" : "not offered"), task.name).toBe(true);
    }
  });
});
