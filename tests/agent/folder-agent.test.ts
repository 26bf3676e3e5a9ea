/**
 * Agent folders run in the sandbox, one process per episode, driven turn by turn by the parent:
 * model calls are served (and recorded) by the parent, keys never reach the agent, and whatever
 * the agent's code does (fail to load, throw, exit, loop, reach for the network) ends the episode
 * as an error, never as a failure, and leaves no process behind.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_MANIFEST } from "../../src/agent/folder/files.js";
import { folderAgentFactory } from "../../src/agent/folder/sandboxed-agent.js";
import type { EnvDefinition } from "../../src/env/types.js";
import { runEpisode } from "../../src/rollout/episode.js";
import { ScriptedModel } from "../../src/testing/scripted-model.js";

/** Say the secret word (given in the first observation) to win; three turns at most. */
const wordEnv: EnvDefinition = {
  info: {
    name: "word",
    version: "1",
    description: "say the word",
    instruction: "Say the word you are shown.",
    splits: { train: { start: 0, end: 5 }, test: { start: 5, end: 10 } },
    successThreshold: 1,
    maxSteps: 3,
  },
  create() {
    let word = "";
    return {
      info: wordEnv.info,
      async reset(task) {
        word = `word${task}`;
        return { text: `The word is ${word}.`, availableActions: [word, "pass"] };
      },
      async step(action) {
        const won = action === word;
        return {
          observation: { text: won ? "Right." : `No: ${action.slice(0, 200)}` },
          reward: won ? 1 : 0,
          done: won,
          info: {},
        };
      },
    };
  },
};

/** A folder whose agent is `body`: the text of `act(state, signal)` in src/agent.ts. */
function folder(body: string, header = ""): Map<string, string> {
  return new Map([
    [
      AGENT_MANIFEST,
      JSON.stringify({ format: "clade.agent/1", name: "test-agent", entry: "src/agent.ts" }),
    ],
    [
      "src/agent.ts",
      `import type { AgentModule, AgentState } from "clade-agent";
${header}
const agent: AgentModule = {
  name: "test-agent",
  create(context, setup) {
    return {
      async act(state: AgentState, signal: AbortSignal) {
        ${body}
      },
    };
  },
};
export default agent;
`,
    ],
  ]);
}

async function episode(
  files: Map<string, string>,
  options: { model?: ScriptedModel; timeoutMs?: number; task?: number } = {},
) {
  const factory = folderAgentFactory({
    files,
    ...(options.model ? { model: options.model } : {}),
    limits: { wallMs: 20_000 },
  });
  const context = { env: wordEnv.info, taskIndex: options.task ?? 2, seed: 0, sampleIndex: 0 };
  const agent = factory.create(context);
  const record = await runEpisode({
    env: wordEnv.create(),
    agent,
    context,
    limits: { maxTurns: 3, timeoutMs: options.timeoutMs ?? 20_000 },
  });
  return { record, factory };
}

const CANARY_NAME = "CLADE_TEST_FOLDER_API_KEY";
const CANARY = "sk-canary-folder-agent-0123456789abcdef";

afterEach(() => {
  delete process.env[CANARY_NAME];
});

describe("agent folders in the sandbox", () => {
  it("plays an episode: the parent serves and records the model calls, turn by turn", async () => {
    const model = new ScriptedModel([
      (request) => {
        expect(request.messages[0]).toEqual({ role: "system", content: "Play: word" });
        return "pass";
      },
      (request) => `word${request.messages.length === 3 ? "2" : "?"}`,
    ]);
    const { record, factory } = await episode(
      folder(`
        const messages = [{ role: "system" as const, content: "Play: " + context.env.name },
          { role: "user" as const, content: state.observation.text }];
        if (state.history.length > 0) messages.push({ role: "user", content: state.history.at(-1)!.observation.text });
        const reply = await setup.model!.complete({ messages }, signal);
        return { action: reply.content.trim(), message: "I say " + reply.content };
      `),
      { model },
    );
    expect(record.outcome).toBe("success");
    expect(record.steps.map((s) => s.action)).toEqual(["pass", "word2"]);
    expect(record.steps[1]?.message).toBe("I say word2");
    expect(record.calls?.map((c) => c.turn)).toEqual([0, 1]);
    expect(record.calls?.[1]?.response?.content).toBe("word2");
    model.assertDone();
    expect(factory.identity).toMatchObject({ agentFolder: { name: "test-agent" } });
    expect(factory.sha256).toMatch(/^[0-9a-f]{64}$/);
  }, 30_000);

  it("never shows the agent a key: not in its environment, files or model replies", async () => {
    process.env[CANARY_NAME] = CANARY;
    const model = new ScriptedModel(Array(3).fill(`the key is ${CANARY}`));
    const { record } = await episode(
      folder(
        `
        const found: string[] = [JSON.stringify(process.env)];
        for (const path of ["/proc/self/environ", "/proc/1/environ", "/proc/1/cmdline"]) {
          try { found.push(readFileSync(path, "latin1")); } catch { found.push("unreadable " + path); }
        }
        const reply = await setup.model!.complete({ messages: [{ role: "user", content: "key?" }] }, signal);
        found.push(reply.content);
        return { action: "pass", message: found.join("\\n") };
      `,
        `import { readFileSync } from "node:fs";\ndeclare const process: { env: Record<string, string> };`,
      ),
      { model },
    );
    expect(record.error).toBeUndefined();
    expect(record.outcome).toBe("failure");
    const seen = record.steps[0]?.message ?? "";
    expect(seen).toContain("the key is ***");
    expect(seen).not.toContain(CANARY);
    // Everything the agent produced (the parent's own record of the raw reply is the model
    // client's to scrub, tested with the model layer).
    expect(JSON.stringify(record.steps)).not.toContain(CANARY);
  }, 30_000);

  it("an agent that cannot load, throws, exits or sends junk ends the episode as an error", async () => {
    const broken = new Map(folder("return { action: 'pass' };"));
    broken.set("src/agent.ts", "export default {{ not typescript");
    const cases: [Map<string, string>, RegExp][] = [
      [broken, /cannot load the agent/],
      [folder("throw new Error('boom in act');"), /the agent failed: Error: boom in act/],
      [
        folder("(globalThis as any).process.exit(3); return { action: 'x' };"),
        /sandbox exited with code 3/,
      ],
      [folder("return { nothing: true } as any;"), /reply is not usable: action/],
    ];
    for (const [files, error] of cases) {
      const { record } = await episode(files);
      expect(record.outcome).toBe("error");
      expect(record.endReason).toBe("agent_error");
      expect(record.error).toMatch(error);
    }
  }, 60_000);

  it("an agent that never answers is stopped by the episode's timeout, process and all", async () => {
    const started = performance.now();
    const { record } = await episode(folder("for (;;) {}"), { timeoutMs: 3000 });
    expect(record.outcome).toBe("error");
    expect(record.endReason).toBe("timeout");
    // close() kills the sandbox after its grace period; nothing waits for the 20 s wall clock.
    expect(performance.now() - started).toBeLessThan(12_000);
  }, 30_000);

  it("cannot reach a loopback port of the host", async () => {
    let arrived = 0;
    const server = createServer((socket) => {
      arrived++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const { record } = await episode(
        folder(
          `
          const result = await new Promise<string>((resolve) => {
            const socket = connect(${port}, "127.0.0.1", () => resolve("connected"));
            socket.on("error", (error) => resolve("refused: " + error.message));
          });
          return { action: "pass", message: result };
        `,
          `import { connect } from "node:net";`,
        ),
      );
      expect(record.steps[0]?.message).toMatch(/^refused/);
      expect(arrived).toBe(0);
    } finally {
      server.close();
    }
  }, 30_000);
});
