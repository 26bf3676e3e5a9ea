/**
 * One scrubber for every place a key could be stored: reply text (before the agent sees it), the
 * response cache, recorded requests and errors. And the call recorder keeps every call, a call
 * abandoned at the caller's deadline included.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CallRecorder } from "../../src/model/call-record.js";
import { createModelClient } from "../../src/model/client.js";
import { redactSecrets as fromHttpErrors } from "../../src/model/http-errors.js";
import type { ResolvedModel } from "../../src/model/resolve.js";
import {
  modelSecrets,
  REDACTED,
  redactSecrets,
  scrubDeep,
  scrubKnownSecrets,
} from "../../src/model/secrets.js";
import type { ModelRequest } from "../../src/model/types.js";
import { createResponseCache } from "../../src/store/response-cache.js";
import { RunStore } from "../../src/store/run-store.js";
import {
  API_KEY_PLACEHOLDER,
  type FakeModelServer,
  startFakeModelServer,
} from "../../src/testing/fake-model-server.js";
import { ScriptedModel } from "../../src/testing/scripted-model.js";

const KEY = "tok-QUOTED-0d9e8f7a6b";

let server: FakeModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the scrubber", () => {
  it("replaces known secrets verbatim and as JSON escapes them, but not short ones", () => {
    expect(scrubKnownSecrets(`a ${KEY} b ${KEY}`, [KEY])).toBe(`a ${REDACTED} b ${REDACTED}`);
    const quoted = 'pa"ss\\word-123';
    expect(scrubKnownSecrets(JSON.stringify({ k: quoted }), [quoted])).toBe(`{"k":"${REDACTED}"}`);
    expect(scrubKnownSecrets("the cat sat", ["cat"])).toBe("the cat sat");
    // Reply text keeps key-shaped words that are not known secrets; error messages lose them.
    const text = "api_key = os.environ['X'] and sk-abcdef123";
    expect(scrubKnownSecrets(text, [KEY])).toBe(text);
    expect(redactSecrets(text)).not.toContain("sk-abcdef123");
    expect(fromHttpErrors).toBe(redactSecrets);
  });

  it("scrubs deep copies only where needed", () => {
    const clean = { messages: [{ role: "user", content: "hi" }] };
    expect(scrubDeep(clean, [KEY])).toBe(clean);
    const dirty = { messages: [{ role: "user", content: `key ${KEY}` }, { n: 1 }], [KEY]: true };
    const scrubbed = scrubDeep(dirty, [KEY]);
    expect(JSON.stringify(scrubbed)).not.toContain(KEY);
    expect(scrubbed.messages[1]).toBe(dirty.messages[1]);
    expect(dirty.messages[0]?.content).toContain(KEY); // the original is untouched
  });

  it("knows a model's key and the credentials in its base URL", () => {
    expect(
      modelSecrets({
        apiKey: KEY,
        spec: {
          provider: "openai-compatible",
          model: "m",
          baseUrl: "http://someuser:p%40ssword99@h/v1",
        },
      }),
    ).toEqual(expect.arrayContaining([KEY, "p%40ssword99", "p@ssword99", "someuser"]));
  });
});

describe("a server that quotes the key in its completions", () => {
  it("never shows it to the agent, the cache or the recorded call", async () => {
    server = await startFakeModelServer({
      rule: () => ({
        content: `Your key is ${API_KEY_PLACEHOLDER}.`,
        toolCalls: [{ name: "act", arguments: { action: "go", echo: API_KEY_PLACEHOLDER } }],
        model: `m-${API_KEY_PLACEHOLDER}`,
        echoKey: true,
      }),
    });
    const resolved: ResolvedModel = {
      name: "m",
      spec: { provider: "openai-compatible", model: "m", baseUrl: server.openaiBaseUrl },
      apiKey: KEY,
      params: {},
      stream: false,
    };
    const store = RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-secret-")), "s.db"));
    const recorder = new CallRecorder(
      createModelClient(resolved, { cache: createResponseCache(store.db) }),
    );
    // A request that itself carries the key (an observation echoing it, say).
    const request: ModelRequest = { messages: [{ role: "user", content: `I know ${KEY}` }] };
    const reply = await recorder.complete(request);
    expect(reply.content).toBe(`Your key is ${REDACTED}.`);
    expect(reply.model).toBe(`m-${REDACTED}`);
    expect(JSON.parse(reply.toolCalls[0]?.arguments ?? "{}")).toEqual({
      action: "go",
      echo: REDACTED,
    });
    // It really was sent back: the server saw the key and put it in its reply.
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    const [call] = recorder.take();
    expect(JSON.stringify(call)).not.toContain(KEY);
    expect(call?.request.messages[0]?.content).toBe(`I know ${REDACTED}`);
    const cached = store.db.prepare("SELECT response FROM model_cache").all();
    expect(cached).toHaveLength(1);
    expect(JSON.stringify(cached)).not.toContain(KEY);
    // A cache entry written before scrubbing existed is scrubbed on the way out.
    store.db
      .prepare("UPDATE model_cache SET response = replace(response, ?, ?)")
      .run(REDACTED, KEY);
    const replayed = await recorder.complete(request);
    expect(recorder.take()[0]?.cacheHit).toBe(true);
    expect(JSON.stringify(replayed)).not.toContain(KEY);
    store.close();
  });

  it("streamed: the reply assembled from pieces is scrubbed as a whole", async () => {
    server = await startFakeModelServer({
      rule: () => ({ content: `a b c ${API_KEY_PLACEHOLDER} d e`, echoKey: true }),
    });
    const resolved: ResolvedModel = {
      name: "m",
      spec: { provider: "openai-compatible", model: "m", baseUrl: server.openaiBaseUrl },
      apiKey: KEY,
      params: {},
      stream: true,
    };
    const reply = await createModelClient(resolved).complete({
      messages: [{ role: "user", content: "hi" }],
    });
    expect(reply.content).toBe(`a b c ${REDACTED} d e`);
    expect(server.requests[0]?.stream).toBe(true);
  });
});

describe("the call recorder", () => {
  it("records a call abandoned at the caller's deadline the moment it is abandoned", async () => {
    const provider = new ScriptedModel(["late"], { delayMs: 10_000 });
    const resolved: ResolvedModel = {
      name: "s",
      spec: { provider: "openai", model: "s" },
      params: {},
      stream: false,
    };
    const recorder = new CallRecorder(createModelClient(resolved, {}, provider));
    const controller = new AbortController();
    const pending = recorder.complete(
      { messages: [{ role: "user", content: "hi" }] },
      controller.signal,
    );
    pending.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error("episode exceeded 20 ms"));
    // Synchronously, before the call's promise settles: what the episode runner relies on.
    const [call] = recorder.take();
    expect(call).toMatchObject({
      error: "model call abandoned: episode exceeded 20 ms",
      attempts: 1,
      attemptErrors: ["model call abandoned: episode exceeded 20 ms"],
      cacheHit: false,
      costUsd: 0,
    });
    await expect(pending).rejects.toThrow(/episode exceeded/);
    expect(recorder.take()).toEqual([]); // recorded once
  });
});
