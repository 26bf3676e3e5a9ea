import { describe, expect, it } from "vitest";
import { ModelError, type ModelRequest } from "../../src/model/types.js";
import { ScriptExhaustedError, ScriptedModel } from "../../src/testing/scripted-model.js";

function ask(content: string): ModelRequest {
  return { messages: [{ role: "user", content }] };
}

describe("ScriptedModel", () => {
  it("answers scripted strings in order with deterministic defaults", async () => {
    const model = new ScriptedModel(["first", "second reply"], { name: "m1" });
    expect(model.id).toBe("scripted:m1");
    const a = await model.complete(ask("12345678"));
    const b = await model.complete(ask("x"));
    expect(a).toEqual({
      content: "first",
      toolCalls: [],
      usage: { inputTokens: 2, outputTokens: 2 },
      finishReason: "stop",
      model: "m1",
    });
    expect(b.content).toBe("second reply");
    expect(b.usage).toEqual({ inputTokens: 1, outputTokens: 3 });
    expect(model.remaining).toBe(0);
    model.assertDone();
  });

  it("fills in tool calls: ids, serialized arguments and a tool_calls finish reason", async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: "act", arguments: { action: "go" } },
          { id: "x", name: "b", arguments: "{" },
        ],
      },
    ]);
    const reply = await model.complete(ask("hi"));
    expect(reply.toolCalls).toEqual([
      { id: "call_1_0", name: "act", arguments: '{"action":"go"}' },
      { id: "x", name: "b", arguments: "{" },
    ]);
    expect(reply.finishReason).toBe("tool_calls");
    expect(reply.content).toBe("");
  });

  it("keeps explicit response fields", async () => {
    const usage = { inputTokens: 7, outputTokens: 9 };
    const model = new ScriptedModel([
      { content: "c", usage, finishReason: "length", model: "real" },
    ]);
    expect(await model.complete(ask("q"))).toMatchObject({
      content: "c",
      usage,
      finishReason: "length",
      model: "real",
    });
  });

  it("throws scripted errors", async () => {
    const error = new ModelError("rate limited", { status: 429, retryable: true });
    const model = new ScriptedModel([error, "after"]);
    await expect(model.complete(ask("q"))).rejects.toBe(error);
    expect((await model.complete(ask("q"))).content).toBe("after");
    model.assertDone();
  });

  it("calls function replies with the request, which may return any reply or throw", async () => {
    const seen: string[] = [];
    const model = new ScriptedModel([
      (request) => {
        seen.push(request.messages[0]?.content ?? "");
        return { content: "from fn" };
      },
      async () => new Error("boom"),
      () => {
        throw new TypeError("thrown");
      },
    ]);
    expect((await model.complete(ask("hello"))).content).toBe("from fn");
    expect(seen).toEqual(["hello"]);
    await expect(model.complete(ask("q"))).rejects.toThrow("boom");
    await expect(model.complete(ask("q"))).rejects.toThrow(TypeError);
  });

  it("records deep copies of every request", async () => {
    const model = new ScriptedModel(["a"]);
    const request: ModelRequest = { ...ask("original"), sampleIndex: 3, params: { seed: 1 } };
    await model.complete(request);
    (request.messages[0] as { content: string }).content = "mutated";
    expect(model.requests).toEqual([
      { messages: [{ role: "user", content: "original" }], sampleIndex: 3, params: { seed: 1 } },
    ]);
  });

  it("fails a call past the script; assertDone reports it even when caught", async () => {
    const model = new ScriptedModel(["only"]);
    await model.complete(ask("one"));
    await expect(model.complete(ask("two"))).rejects.toThrow(ScriptExhaustedError);
    await expect(model.complete(ask("three"))).rejects.toThrow(/unexpected call 3.*"three"/);
    expect(() => model.assertDone()).toThrow(/2 call\(s\) after the script ran out/);
    expect(model.requests).toHaveLength(3);
  });

  it("assertDone fails while replies remain; push extends the script", async () => {
    const model = new ScriptedModel(["a", "b"]);
    await model.complete(ask("q"));
    expect(() => model.assertDone()).toThrow(/1 of 2 scripted replies were not used/);
    model.push("c");
    expect(model.remaining).toBe(2);
  });

  it("honours the abort signal, before and during a delay", async () => {
    const model = new ScriptedModel(["slow", "never"], { delayMs: 10_000 });
    const controller = new AbortController();
    const pending = model.complete(ask("q"), controller.signal);
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
    await expect(model.complete(ask("q"), controller.signal)).rejects.toThrow("stop");
    // The aborted call consumed its reply; the already-aborted one did not.
    expect(model.remaining).toBe(1);
  });
});
