/**
 * `clade eval --env-url` against servers that behave like AgentGym's (tests/fixtures/
 * agentgym-fakes.ts), with the react agent on the fake model server: what is sent to a tool
 * server (--send), what the run's configuration holds (resume with other remote settings is
 * refused), the warning for a task field the server ignores, and exports that give what the
 * model saw, under AgentGym's item ids.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findEnvInfo } from "../../src/env/infos.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import {
  type FakeModelServer,
  type FakeRule,
  lastMessageText,
  startFakeModelServer,
} from "../../src/testing/fake-model-server.js";
import {
  type FakeAgentgymServer,
  startFakeMazeServer,
  startFakeTextcraftServer,
  startFakeToolServer,
} from "../fixtures/agentgym-fakes.js";
import { runCli as cli } from "../fixtures/cli.js";

let dir: string;
let db: string;
let model: FakeModelServer;
const servers: FakeAgentgymServer[] = [];
let savedKey: string | undefined;

/** Plays the fake tasks the way each fake server wants. */
const playFakes: FakeRule = (request) => {
  const text = lastMessageText(request);
  const code = /the code is (\S+)/.exec(text)?.[1];
  if (code) {
    return {
      content: `Thought: I have it.\n\nAction: finish with Action Input: {"answer": "${code}"}`,
    };
  }
  if (text.includes("tell the code") || text.startsWith("ERROR |")) {
    return { content: "Thought: I need the code.\n\nAction: get_code with Action Input: {}" };
  }
  const goal = /Goal: craft (.*)\./.exec(text)?.[1];
  if (goal) return { content: `Thought: Craft it.\n\nAction: craft ${goal}` };
  return { content: "Thought: The goal is above me.\n\nAction: move up" };
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-remote-client-"));
  db = join(dir, "clade.db");
  savedKey = process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_API_KEY;
  model = await startFakeModelServer({ rule: playFakes });
});

afterEach(async () => {
  await model.close();
  await Promise.all(servers.splice(0).map((server) => server.close()));
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

async function started(server: Promise<FakeAgentgymServer>): Promise<FakeAgentgymServer> {
  const running = await server;
  servers.push(running);
  return running;
}

/** `clade eval` with the react agent on the fake model, no cache, JSON out. */
function evalReact(...args: string[]) {
  return cli(
    "eval",
    "--model",
    `openai-compatible:${model.openaiBaseUrl}#fake-model`,
    "--cache",
    "off",
    "--db",
    db,
    "--json",
    ...args,
  );
}

async function showJson(...args: string[]) {
  const shown = await cli("show", ...args, "--db", db, "--json");
  expect(shown.code).toBe(0);
  return JSON.parse(shown.stdout);
}

async function exportItems(run: string, ...args: string[]) {
  const exported = await cli("export", run, "--format", "agenttraj", "--db", db, ...args);
  expect(exported.stderr).toBe("");
  expect(exported.code).toBe(0);
  return JSON.parse(exported.stdout) as Array<{
    item_id: string;
    conversations: Array<{ from: string; loss: boolean | null; value: string }>;
  }>;
}

describe("--send: what the react agent passes to the environment", () => {
  it("sends AgentGym's tool servers the whole reply by default, and stores that choice", async () => {
    const tool = await started(startFakeToolServer());
    const args = ["--env", "todo", "--env-url", tool.url, "--dialect", "env_idx"];
    const replied = await evalReact(
      ...args,
      "--tasks",
      "0-2",
      "--max-turns",
      "3",
      "--run-id",
      "t1",
    );
    expect(replied.code).toBe(0);
    expect(JSON.parse(replied.stdout).metrics).toMatchObject({ episodes: 3, successRate: 1 });
    const steps = tool.requests.filter((r) => r.path === "/step");
    expect((steps[0] as { body: { action: string } }).body.action).toMatch(
      /^Thought: I need the code\.\n\nAction: get_code with Action Input: \{\}$/,
    );
    expect((await showJson("t1")).run.config).toMatchObject({
      envUrl: tool.url,
      dialect: "env_idx",
      agentOptions: { send: "reply" },
    });

    // The text after "Action:" alone has no "Action:" left for the server to find.
    const cut = await evalReact(
      ...args,
      "--tasks",
      "0-2",
      "--max-turns",
      "3",
      "--run-id",
      "t2",
      "--send",
      "action",
    );
    expect(cut.code).toBe(0);
    expect(JSON.parse(cut.stdout).metrics).toMatchObject({ episodes: 3, successRate: 0 });
    const episode = await showJson("t2", "--episode", "0/0");
    expect(episode.steps[0].action).toBe("get_code with Action Input: {}");
    for (const step of episode.steps) expect(step.observation.text).toMatch(/^ERROR \| TypeError/);
    expect((await showJson("t2")).run.config.agentOptions).toEqual({});
  });

  it("sends the action to everything else unless told, and refuses --send for other agents", async () => {
    const maze = await started(startFakeMazeServer());
    const run = await evalReact(
      "--env",
      "maze",
      "--env-url",
      maze.url,
      "--env-path",
      "/maze",
      "--task-field",
      "game",
      "--tasks",
      "0-1",
      "--run-id",
      "m",
    );
    expect(run.code).toBe(0);
    const steps = maze.requests.filter((r) => r.path === "/maze/step");
    expect(steps.map((r) => (r.body as { action: string }).action)).toEqual(["move up", "move up"]);

    const other = join(dir, "other.db");
    const spec = `openai-compatible:${model.openaiBaseUrl}#fake-model`;
    for (const [extra, message] of [
      [["--agent", "random", "--send", "reply"], /--send applies to the react agent, not "random"/],
      [
        ["--model", spec, "--agent", "tools", "--send", "reply"],
        /--send applies to the react agent, not "tools"/,
      ],
      [["--model", spec, "--send", "everything"], /--send must be action or reply/],
    ] as const) {
      const refused = await cli("eval", "--env", "maze", ...extra, "--db", other);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(message);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(existsSync(other)).toBe(false);
  });
});

describe("run identity of remote runs", () => {
  it("refuses to resume with another task field, /create body or --send", async () => {
    const tool = await started(startFakeToolServer());
    const base = [
      "--env",
      "todo",
      "--env-url",
      tool.url,
      "--dialect",
      "env_idx",
      "--tasks",
      "0-1",
      "--max-turns",
      "3",
      "--run-id",
      "ident",
    ];
    const first = await evalReact(
      ...base,
      "--task-field",
      "id",
      "--create-body",
      '{"id": 0, "x": [1, {"b": 2, "a": 1}]}',
    );
    expect(first.code).toBe(0);
    expect((await showJson("ident")).run.config).toMatchObject({
      taskField: "id",
      createBody: { id: 0, x: [1, { a: 1, b: 2 }] },
    });
    // The same body written in another key order is the same configuration.
    const again = await evalReact(
      ...base,
      "--task-field",
      "id",
      "--create-body",
      '{"x": [1, {"a": 1, "b": 2}], "id": 0}',
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ resumed: true, ran: 0 });

    for (const [extra, key] of [
      [
        ["--task-field", "item_id", "--create-body", '{"id": 0, "x": [1, {"a": 1, "b": 2}]}'],
        "taskField",
      ],
      [["--task-field", "id", "--create-body", '{"id": 1}'], "createBody"],
      [["--task-field", "id"], "createBody"],
      [
        [
          "--task-field",
          "id",
          "--create-body",
          '{"id": 0, "x": [1, {"a": 1, "b": 2}]}',
          "--send",
          "action",
        ],
        "agentOptions",
      ],
    ] as const) {
      const refused = await evalReact(...base, ...extra);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(new RegExp(`different configuration \\([^)]*${key}[^)]*\\)`));
    }

    // Settings that send the same thing are the same configuration: data_idx is what the id
    // dialect sends anyway, and an empty /create body adds nothing.
    const textcraft = await started(startFakeTextcraftServer());
    const tc = [
      "--env",
      "textcraft",
      "--env-url",
      textcraft.url,
      "--tasks",
      "0-1",
      "--run-id",
      "tc",
    ];
    expect((await evalReact(...tc)).code).toBe(0);
    const same = await evalReact(...tc, "--task-field", "data_idx", "--create-body", "{}");
    expect(same.code).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ resumed: true, ran: 0 });
  });
});

describe("a task field the server ignores", () => {
  it("warns on stderr, naming the field and the one TextCraft's server reads", async () => {
    const textcraft = await started(startFakeTextcraftServer());
    const args = [
      "--env",
      "textcraft",
      "--env-url",
      textcraft.url,
      "--tasks",
      "0-5",
      "--max-turns",
      "2",
    ];
    const wrong = await evalReact(...args, "--task-field", "game", "--run-id", "tc-game");
    expect(wrong.code).toBe(0);
    // Reported as success: every index played task 0.
    expect(JSON.parse(wrong.stdout).metrics).toMatchObject({ episodes: 6, successRate: 1 });
    const warnings = wrong.stderr.split("\n").filter((line) => line.startsWith("warning:"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^warning: textcraft: tasks \d+, \d+, \d+ began alike .*ignoring the task field "game".*TextCraft server reads "data_idx": try --task-field data_idx$/,
    );

    const right = await evalReact(...args, "--task-field", "data_idx", "--run-id", "tc-right");
    expect(right.code).toBe(0);
    expect(right.stderr).not.toMatch(/warning/);
  });
});

describe("exports of remote runs", () => {
  it("give what the model saw: an empty instruction for an LMRL-Gym-like maze, AgentGym's item ids", async () => {
    const maze = await started(startFakeMazeServer());
    const run = await evalReact(
      "--env",
      "maze",
      "--env-url",
      maze.url,
      "--env-path",
      "/maze",
      "--task-field",
      "game",
      "--tasks",
      "0-2",
      "--run-id",
      "lmrl",
    );
    expect(run.code).toBe(0);
    const items = await exportItems("lmrl");
    expect(items.map((item) => item.item_id)).toEqual([
      "lmrlgym_maze_0",
      "lmrlgym_maze_1",
      "lmrlgym_maze_2",
    ]);
    // Not clade's maze rules: the model was told nothing before the first observation.
    expect(items[0]?.conversations[0]).toEqual({ from: "human", loss: null, value: "" });
    expect(items[0]?.conversations[2]?.value).toMatch(/^The goal is at position 1, 0\./);
    expect((await exportItems("lmrl", "--item-ids", "clade")).map((i) => i.item_id)).toEqual([
      "maze_0",
      "maze_1",
      "maze_2",
    ]);
    expect((await showJson("lmrl", "--episode", "1/0")).instruction).toBe("");

    const chat = await cli("export", "lmrl", "--format", "chat", "--db", db);
    expect(JSON.parse(chat.stdout.split("\n")[0] as string).messages[0]).toEqual({
      role: "system",
      content: "",
    });
  });

  it("export a run under a name clade has no environment for", async () => {
    const tool = await started(startFakeToolServer());
    const run = await evalReact(
      "--env",
      "box-codes",
      "--env-url",
      tool.url,
      "--dialect",
      "env_idx",
      "--send",
      "reply",
      "--tasks",
      "0-1",
      "--max-turns",
      "3",
      "--run-id",
      "boxes",
    );
    expect(run.code).toBe(0);
    const items = await exportItems("boxes");
    expect(items.map((item) => item.item_id)).toEqual(["box-codes_0", "box-codes_1"]);
    expect(items[1]?.conversations.slice(0, 3)).toEqual([
      { from: "human", loss: null, value: "" },
      { from: "gpt", loss: false, value: "OK." },
      {
        from: "human",
        loss: null,
        value: expect.stringMatching(/accomplish the goal: tell the code of box 1/),
      },
    ]);
  });

  it("refuse --item-ids with chat, and bad styles, in one line", async () => {
    await cli("eval", "--env", "maze", "--tasks", "0", "--run-id", "r", "--db", db);
    for (const [args, message] of [
      [["--format", "chat", "--item-ids", "clade"], /--item-ids applies to --format agenttraj/],
      [
        ["--format", "agenttraj", "--item-ids", "python"],
        /--item-ids must be "agentgym" or "clade"/,
      ],
    ] as const) {
      const refused = await cli("export", "r", ...args, "--db", db);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(message);
      expect(refused.stdout).toBe("");
    }
  });
});

describe("episodes stored before instructions were kept", () => {
  it("export with the built-in env's instruction, or refuse, writing nothing, when there is none", async () => {
    expect(
      (await cli("eval", "--env", "maze", "--tasks", "0-1", "--run-id", "old", "--db", db)).code,
    ).toBe(0);
    const tool = await started(startFakeToolServer());
    const boxes = await evalReact(
      "--env",
      "box-codes",
      "--env-url",
      tool.url,
      "--dialect",
      "env_idx",
      "--send",
      "reply",
      "--tasks",
      "0",
      "--run-id",
      "boxes",
    );
    expect(boxes.code).toBe(0);
    const conn = new Database(db);
    conn.exec("UPDATE episodes SET instruction_id = NULL");
    conn.close();

    const items = await exportItems("old");
    expect(items[0]?.conversations[0]?.value).toBe(findEnvInfo("maze")?.instruction);

    const out = join(dir, "boxes.json");
    const refused = await cli("export", "boxes", "--format", "agenttraj", "--out", out, "--db", db);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^clade: error: run "boxes" used environment "box-codes", which this clade does not have, and its episodes were stored without the instruction their agent saw\n$/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("read a store of schema 4, leaving it as it is until the next write upgrades it", async () => {
    const conn = new Database(db);
    for (const migration of MIGRATIONS.slice(0, 4)) conn.exec(migration);
    conn.pragma("user_version = 4");
    const now = new Date().toISOString();
    conn
      .prepare(
        `INSERT INTO runs (id, env, env_version, agent, config, status, created_at, updated_at)
         VALUES ('v4', 'maze', ?, 'reference', '{}', 'complete', ?, ?)`,
      )
      .run(findEnvInfo("maze")?.version, now, now);
    const { lastInsertRowid } = conn
      .prepare(
        `INSERT INTO episodes (run_id, task_index, sample_index, seed, outcome, reward, end_reason,
           initial_observation, turns, started_at, duration_ms)
         VALUES ('v4', 0, 0, 0, 'success', 1, 'done', 'You are at the start.', 1, ?, 1)`,
      )
      .run(now);
    conn
      .prepare("INSERT INTO trajectories (episode_id, steps) VALUES (?, ?)")
      .run(
        lastInsertRowid,
        '[{"action":"move up","observation":"Success","reward":1,"done":true,"ms":1}]',
      );
    conn.close();

    const items = await exportItems("v4");
    expect(items[0]?.conversations.map((c) => c.value)).toEqual([
      findEnvInfo("maze")?.instruction,
      "OK.",
      "You are at the start.",
      "move up",
    ]);
    expect((await showJson("v4", "--episode", "0/0")).instruction).toBe(
      findEnvInfo("maze")?.instruction,
    );
    const version = () => {
      const read = new Database(db, { readonly: true });
      const value = read.pragma("user_version", { simple: true });
      read.close();
      return value;
    };
    expect(version()).toBe(4);
    expect(
      (await cli("eval", "--env", "maze", "--tasks", "0", "--run-id", "new", "--db", db)).code,
    ).toBe(0);
    expect(version()).toBe(MIGRATIONS.length);
    expect((await exportItems("v4"))[0]?.conversations[0]?.value).toBe(
      findEnvInfo("maze")?.instruction,
    );
    expect(readFileSync(db).length).toBeGreaterThan(0);
  });
});
