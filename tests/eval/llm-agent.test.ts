/** createLlmAgent: an LLM agent in one call, against the fake model server. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLlmAgent } from "../../src/agent/llm.js";
import { runEvaluation } from "../../src/eval/evaluation.js";
import { MissingKeyError } from "../../src/model/resolve.js";
import { ModelSpecError } from "../../src/model/spec.js";
import { RunStore } from "../../src/store/run-store.js";
import {
  type FakeModelServer,
  type FakeRequest,
  startFakeModelServer,
} from "../../src/testing/index.js";

let server: FakeModelServer;
const dbPath = () => join(mkdtempSync(join(tmpdir(), "clade-llm-")), "c.db");
const chatCalls = (requests: readonly FakeRequest[]) =>
  requests.filter((r) => r.path === "/v1/chat/completions").length;

beforeEach(async () => {
  server = await startFakeModelServer({
    rule: (request) =>
      (request.body as { tools?: unknown[] }).tools
        ? { content: "", toolCalls: [{ name: "act", arguments: { action: "move up" } }] }
        : { content: "Thought: up.\nAction: move up" },
  });
});

afterEach(async () => {
  await server.close();
});

describe("createLlmAgent", () => {
  it("builds a ReAct agent on an OpenAI-compatible server; every call is stored with its turn", async () => {
    const store = RunStore.open(dbPath());
    const agent = await createLlmAgent({
      model: "fake-model",
      baseUrl: server.openaiBaseUrl,
      params: { temperature: 0.2 },
      historyWindow: 4,
      config: {},
    });
    expect(agent).toMatchObject({
      name: "react",
      modelSpec: `openai-compatible:${server.openaiBaseUrl}#fake-model`,
    });
    const run = await runEvaluation({ env: "maze", tasks: "0-1", agent, store, maxTurns: 2 });
    expect(run).toMatchObject({ ran: 2, agent: "react" });
    expect(run.episodes.every((e) => e.outcome !== "error")).toBe(true);
    expect(chatCalls(server.requests)).toBe(4);
    const calls = store.calls(run.episodes[0]?.id as number);
    expect(calls.map((c) => c.turn)).toEqual([0, 1]);
    expect(server.requests[0]?.body).toMatchObject({ model: "fake-model", temperature: 0.2 });
    // The run's configuration names the model as `clade eval --model` does.
    expect(store.getRun(run.runId)?.config).toMatchObject({
      model: agent.modelSpec,
      params: { temperature: 0.2 },
      agentOptions: { historyWindow: 4 },
    });
    store.close();
  });

  it("caches responses in the store it is given", async () => {
    const store = RunStore.open(dbPath());
    const agent = await createLlmAgent({
      kind: "tools",
      model: "fake-model",
      baseUrl: server.openaiBaseUrl,
      store,
      config: {},
    });
    const first = await runEvaluation({ env: "maze", tasks: "0", agent, store, maxTurns: 2 });
    expect(first.episodes[0]?.outcome).not.toBe("error");
    const served = chatCalls(server.requests);
    expect(served).toBe(2);
    await runEvaluation({ env: "maze", tasks: "0", agent, store, maxTurns: 2, runId: "again" });
    expect(chatCalls(server.requests)).toBe(served);
    expect(store.usageByModel("again")[0]).toMatchObject({ cacheHits: 2 });
    store.close();
  });

  it("resolves a clade.config name, with the config's parameters under the call's", async () => {
    const agent = await createLlmAgent({
      model: "local",
      params: { maxTokens: 64 },
      config: {
        models: {
          local: {
            model: `openai-compatible:${server.openaiBaseUrl}#fake-model`,
            params: { temperature: 0.7, maxTokens: 16 },
          },
        },
      },
    });
    expect(agent.identity).toMatchObject({ params: { temperature: 0.7, maxTokens: 64 } });
    const run = await runEvaluation({ env: "maze", tasks: "0", agent, maxTurns: 1 });
    expect(run.episodes[0]?.outcome).not.toBe("error");
  });

  it("redirects an openai: spec to baseUrl with the key given, and checks keys", async () => {
    const keyed = await startFakeModelServer({
      apiKey: "sk-test-0123456789",
      rule: () => ({ content: "Thought: up.\nAction: move up" }),
    });
    try {
      const agent = await createLlmAgent({
        model: "openai:gpt-4o-mini",
        baseUrl: keyed.openaiBaseUrl,
        apiKey: "sk-test-0123456789",
        config: {},
      });
      expect(agent.modelSpec).toBe("openai:gpt-4o-mini");
      const run = await runEvaluation({ env: "maze", tasks: "0", agent, maxTurns: 1 });
      expect(run.episodes[0]?.outcome).not.toBe("error");
      expect(keyed.requests.length).toBe(1);
    } finally {
      await keyed.close();
    }
    await expect(
      createLlmAgent({ model: "openai:gpt-4o-mini", config: {}, environment: {} }),
    ).rejects.toBeInstanceOf(MissingKeyError);
  });

  it("keeps credentials of a base URL out of the stored spec", async () => {
    const agent = await createLlmAgent({
      model: "fake-model",
      baseUrl: "http://user:secret@127.0.0.1:9/v1",
      config: {},
    });
    expect(agent.modelSpec).toBe("openai-compatible:http://127.0.0.1:9/v1#fake-model");
    expect(JSON.stringify(agent.identity)).not.toContain("secret");
  });

  it("refuses what it cannot use", async () => {
    await expect(createLlmAgent({ model: "fake-model", config: {} })).rejects.toBeInstanceOf(
      ModelSpecError,
    );
    await expect(
      createLlmAgent({ model: "m", baseUrl: "ftp://127.0.0.1/v1", config: {} }),
    ).rejects.toThrow(/http or https/);
    await expect(
      createLlmAgent({
        kind: "chat" as "react",
        model: "m",
        baseUrl: server.openaiBaseUrl,
        config: {},
      }),
    ).rejects.toThrow(/react or tools/);
  });
});
