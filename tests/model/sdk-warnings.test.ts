/**
 * The Anthropic SDK prints a deprecation warning with console.warn on every messages.create for
 * a deprecated model name (claude-sonnet-4-5, as of SDK 1.12). clade shows each distinct SDK
 * warning once per process, against the fake server over real HTTP.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { createAnthropicModel } from "../../src/model/providers/anthropic.js";
import { createOpenAIModel } from "../../src/model/providers/openai.js";
import { onceEach, resetShownWarnings } from "../../src/model/providers/sdk-warnings.js";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/fake-model-server.js";

const DEPRECATED = "claude-sonnet-4-5";
const request = { messages: [{ role: "user" as const, content: "hello" }] };

let server: FakeModelServer;
let warn: MockInstance<typeof console.warn>;

beforeEach(async () => {
  server = await startFakeModelServer({ rule: () => ({ content: "hi" }) });
  resetShownWarnings();
  warn = vi.spyOn(console, "warn").mockImplementation(() => {});
});

afterEach(async () => {
  warn.mockRestore();
  await server.close();
});

const deprecationWarnings = () =>
  warn.mock.calls.filter((args: unknown[]) =>
    String(args[0]).includes(`'${DEPRECATED}' is deprecated`),
  );

describe("SDK warnings", () => {
  it("the SDK itself warns on every call for a deprecated model (the problem)", async () => {
    const client = new Anthropic({
      apiKey: "k",
      baseURL: server.anthropicBaseUrl,
      maxRetries: 0,
      logLevel: "off",
    });
    for (let i = 0; i < 3; i++) {
      await client.messages.create({
        model: DEPRECATED,
        max_tokens: 10,
        messages: [{ role: "user", content: "hello" }],
      });
    }
    expect(deprecationWarnings()).toHaveLength(3);
  });

  it("clade's Anthropic provider shows it once, however many calls", async () => {
    const model = createAnthropicModel({
      spec: { provider: "anthropic", model: DEPRECATED },
      apiKey: "k",
      baseUrl: server.anthropicBaseUrl,
    });
    for (let i = 0; i < 5; i++) expect((await model.complete(request)).content).toBe("hi");
    await Promise.all(Array.from({ length: 5 }, () => model.complete(request)));
    // A second client for the same model (another agent, a resumed run in the same process).
    const again = createAnthropicModel({
      spec: { provider: "anthropic", model: DEPRECATED },
      apiKey: "k",
      baseUrl: server.anthropicBaseUrl,
    });
    await again.complete(request);
    expect(server.requests.filter((r) => r.api === "anthropic")).toHaveLength(11);
    expect(deprecationWarnings()).toHaveLength(1);
    expect(String(deprecationWarnings()[0]?.[0])).toMatch(/end-of-life/);
  });

  it("a model the SDK does not warn about prints nothing", async () => {
    const model = createAnthropicModel({
      spec: { provider: "anthropic", model: "claude-haiku-4-5" },
      apiKey: "k",
      baseUrl: server.anthropicBaseUrl,
    });
    await model.complete(request);
    const openai = createOpenAIModel({
      spec: { provider: "openai-compatible", model: "m", baseUrl: server.openaiBaseUrl },
    });
    await openai.complete(request);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe("onceEach", () => {
  it("shows each distinct warning once and leaves other output alone", () => {
    for (let i = 0; i < 3; i++) {
      onceEach(() => {
        console.warn("first", 1);
        console.warn("second");
      });
      console.warn("not from an SDK call");
    }
    expect(warn.mock.calls).toEqual([
      ["first", 1],
      ["second"],
      ["not from an SDK call"],
      ["not from an SDK call"],
      ["not from an SDK call"],
    ]);
  });

  it("dedups process.emitWarning too, and restores both after a throw", () => {
    const emit = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      for (let i = 0; i < 3; i++) {
        expect(() =>
          onceEach(() => {
            process.emitWarning("old API", "DeprecationWarning");
            throw new Error("boom");
          }),
        ).toThrow("boom");
      }
      expect(emit).toHaveBeenCalledTimes(1);
      expect(emit).toHaveBeenCalledWith("old API", "DeprecationWarning");
      expect(process.emitWarning).toBe(emit);
      expect(console.warn).toBe(warn);
    } finally {
      emit.mockRestore();
    }
  });

  it("returns what the call returns", async () => {
    expect(onceEach(() => 42)).toBe(42);
    await expect(onceEach(() => Promise.resolve("later"))).resolves.toBe("later");
  });
});
