/**
 * Teacher judges: the answer is found after the reasoning (fenced or bare JSON), the prompt
 * carries the rubric, the taxonomy and the conversation, a bad answer is sent back with the
 * reason up to `answerAttempts`, a provider error is a JudgeError (never a label), and usage
 * and cost are summed over the judgement's calls through the model layer (retries, cache,
 * prices), unit-tested on ScriptedModel and end to end against the fake model server
 * (OpenAI-compatible and Anthropic wires, bad JSON, 429s).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  extractAnswer,
  type Judge,
  JudgeError,
  type Judgement,
  type JudgeSettings,
  judgeConversation,
  judgeSystemPrompt,
  judgeUserPrompt,
  renderConversation,
  SYSTEM_PROMPT_CHARS,
  TOOL_RESULT_CHARS,
} from "../../../src/eval/goals/judge.js";
import { renderRubric, resolveRubric } from "../../../src/eval/goals/rubric.js";
import { builtinTaxonomy } from "../../../src/eval/goals/taxonomy.js";
import { createModelClient } from "../../../src/model/client.js";
import { parseConfig } from "../../../src/model/config.js";
import { type ResolvedModel, resolveModel } from "../../../src/model/resolve.js";
import { type Model, ModelError } from "../../../src/model/types.js";
import { createResponseCache } from "../../../src/store/response-cache.js";
import { RunStore } from "../../../src/store/run-store.js";
import {
  type FakeModelServer,
  type FakeRequest,
  startFakeModelServer,
} from "../../../src/testing/fake-model-server.js";
import { ScriptedModel } from "../../../src/testing/scripted-model.js";
import { answer, conversation, conversationIdIn, labels } from "../../fixtures/goals/judging.js";

const taxonomy = builtinTaxonomy("rcof");
const rubric = resolveRubric("generic");
const settings: JudgeSettings = { rubric, taxonomy };
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 2 };

const judge = (client: Model, label = "judge 1 (scripted)"): Judge => ({
  label,
  model: client.id,
  client,
});

async function judgeError(run: Promise<unknown>): Promise<JudgeError> {
  try {
    await run;
  } catch (error) {
    expect(error).toBeInstanceOf(JudgeError);
    return error as JudgeError;
  }
  throw new Error("expected a JudgeError, but the judgement succeeded");
}

describe("extractAnswer", () => {
  it("takes the fenced JSON after the reasoning", () => {
    const reply = 'Turn 1 is fine.\nTurn 2 fails.\n\n```json\n{"turns": [1, 2]}\n```\n';
    expect(extractAnswer(reply)).toEqual({
      ok: true,
      value: { turns: [1, 2] },
      reasoning: "Turn 1 is fine.\nTurn 2 fails.",
    });
  });

  it("takes the last fence that parses: an example earlier, a broken block later", () => {
    const example = 'The shape is:\n```json\n{"example": true}\n```\nNow my answer:\n';
    const reply = `${example}\`\`\`json\n{"answer": 1}\n\`\`\`\nand a slip:\n\`\`\`json\n{"oops": \n\`\`\``;
    const got = extractAnswer(reply);
    expect(got).toMatchObject({ ok: true, value: { answer: 1 } });
    expect(got.ok && got.reasoning).toBe(
      'The shape is:\n```json\n{"example": true}\n```\nNow my answer:',
    );
    // A bare fence counts as well.
    expect(extractAnswer('Why.\n```\n{"bare": 1}\n```')).toMatchObject({
      ok: true,
      value: { bare: 1 },
      reasoning: "Why.",
    });
  });

  it("pairs fences as written: a code block before the answer does not hide it", () => {
    const reply =
      "I checked the tool call:\n```python\nlookup({'id': 12})\n```\nAnswer:\n```JSON \n{\"turns\": []}\n```";
    expect(extractAnswer(reply)).toEqual({
      ok: true,
      value: { turns: [] },
      reasoning: "I checked the tool call:\n```python\nlookup({'id': 12})\n```\nAnswer:",
    });
  });

  it("without a fence, takes the last top-level object that parses", () => {
    const reply =
      'Turn 2 {the refund} failed.\nAnswer: {"turns": [{"rationale": "a } b { c \\" d"}]}\nDone.';
    expect(extractAnswer(reply)).toEqual({
      ok: true,
      value: { turns: [{ rationale: 'a } b { c " d' }] },
      reasoning: "Turn 2 {the refund} failed.\nAnswer:",
    });
    // The outer object, not the last nested one.
    expect(extractAnswer('{"a": {"b": 1}}')).toMatchObject({ ok: true, value: { a: { b: 1 } } });
    // A single-line fence is not a fence, but its object is still found.
    expect(extractAnswer('```json {"x": 1}```')).toMatchObject({ ok: true, value: { x: 1 } });
  });

  it("says why there is no answer", () => {
    expect(extractAnswer("  \n ")).toEqual({ ok: false, error: "the reply is empty" });
    expect(extractAnswer("Everything succeeded.")).toEqual({
      ok: false,
      error: "the reply has no JSON object",
    });
    const broken = extractAnswer('Here: {"turns": [1, 2,]}');
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.error).toMatch(/^the JSON object does not parse \(.+\)$/);
    // A reply cut off in its answer (finish reason "length") has no whole object.
    expect(extractAnswer('Reasoning.\n```json\n{"turns": [{"turn_number": 1')).toEqual({
      ok: false,
      error: "the reply has no JSON object",
    });
  });
});

describe("the judge's prompt", () => {
  it("renders turns with tool calls matched to their results, long text cut", () => {
    const long = "x".repeat(TOOL_RESULT_CHARS + 5);
    const rendered = renderConversation(
      conversation("c", 3, {
        system: `  Be helpful. ${"s".repeat(SYSTEM_PROMPT_CHARS)}`,
        opening: "Hello!",
        closing: "###STOP###",
        turns: [
          {
            turn_number: 1,
            user: "Find order 12",
            assistant: "",
            tool_calls: [
              { id: "a", name: "lookup", arguments: '{"id":12}' },
              { id: "b", name: "lookup", arguments: '{"id":13}' },
            ],
            // Out of order: matched by id.
            tool_results: [
              { tool_call_id: "b", content: "order 13: lost" },
              { tool_call_id: "a", content: long },
            ],
          },
          {
            turn_number: 2,
            user: "And the refund?",
            assistant: "Refunded.",
            tool_calls: [{ name: "refund", arguments: "{}" }],
            tool_results: [
              { name: "other", content: "stray" },
              { name: "refund", content: "ok" },
            ],
          },
          { turn_number: 3, user: "Thanks", assistant: "  " },
        ],
      }),
    );
    const parts = rendered.split("\n\n");
    expect(parts[0]).toBe(
      `(The assistant's instructions: Be helpful. ${"s".repeat(SYSTEM_PROMPT_CHARS - 12)} [... 12 more characters])`,
    );
    expect(parts[1]).toBe("(Before turn 1) Assistant: Hello!");
    expect(parts[2]).toBe(
      [
        "### Turn 1",
        "User: Find order 12",
        'Assistant called lookup({"id":12})',
        `Result: ${"x".repeat(TOOL_RESULT_CHARS)} [... 5 more characters]`,
        'Assistant called lookup({"id":13})',
        "Result: order 13: lost",
        "Assistant: (no reply)",
      ].join("\n"),
    );
    // Without ids, by name; a result no call claimed is still shown, named.
    expect(parts[3]).toBe(
      [
        "### Turn 2",
        "User: And the refund?",
        "Assistant called refund({})",
        "Result: ok",
        "Result of other: stray",
        "Assistant: Refunded.",
      ].join("\n"),
    );
    expect(parts[4]).toBe("### Turn 3\nUser: Thanks\nAssistant: (no reply)");
    expect(parts[5]).toBe("(After the last turn, unanswered) User: ###STOP###");
    expect(parts).toHaveLength(6);
  });

  it("gives the rubric, the taxonomy's codes and the answer's shape", () => {
    const system = judgeSystemPrompt(rubric, taxonomy);
    expect(system).toContain(renderRubric(rubric));
    expect(system).toContain('## Root causes of failure (taxonomy "rcof")');
    expect(system).toContain(
      "- E3: Incorrect retrieval. The assistant retrieved a passage or record that does not answer",
    );
    expect(system).toContain("exactly one code of the taxonomy (E1, E2, E3, E4, E5, E6, E7)");
    expect(system).toContain('{"turns": [{"turn_number": 1, "is_new_goal": true');
    // Groups are shown where a taxonomy has them.
    expect(judgeSystemPrompt(rubric, builtinTaxonomy("mast"))).toMatch(/- \S+ \[[^\]]+\]: /);
  });

  it("names the conversation and how many turns to cover", () => {
    const two = judgeUserPrompt(conversation("tau-12#3", 2));
    expect(two.startsWith("Conversation tau-12#3, 2 turns:\n\n### Turn 1\n")).toBe(true);
    expect(two.endsWith("answer with the JSON object covering turns 1..2.")).toBe(true);
    expect(conversationIdIn(two)).toBe("tau-12#3");
    expect(judgeUserPrompt(conversation("one", 1))).toMatch(/^Conversation one, 1 turn:/);
  });
});

describe("judgeConversation on a scripted model", () => {
  const two = conversation("c1", 2);

  it("returns the labels, the reasoning and what the call used", async () => {
    const model = new ScriptedModel([
      {
        content: answer(labels("N s", ". f E3"), "Turn 2 read the wrong passage."),
        usage: { inputTokens: 7, outputTokens: 3 },
      },
    ]);
    const got = await judgeConversation(
      judge(model),
      two,
      { ...settings, params: { temperature: 0 } },
      { index: 2 },
    );
    expect(got.labels).toEqual(labels("N s", ". f E3"));
    expect(got).toMatchObject({
      normalised: [],
      reasoning: "Turn 2 read the wrong passage.",
      answers: 1,
      rejected: [],
    });
    // A plain Model says nothing of prices: unpriced, cost 0.
    expect(got.spend).toMatchObject({
      calls: 1,
      usage: { inputTokens: 7, outputTokens: 3 },
      costUsd: 0,
      unpriced: true,
      cacheHits: 0,
    });
    expect(got.spend.latencyMs).toBeGreaterThanOrEqual(0);
    const [request] = model.requests;
    expect(request?.sampleIndex).toBe(2);
    expect(request?.params).toEqual({ temperature: 0 });
    expect(request?.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(request?.messages[0]?.content).toBe(judgeSystemPrompt(rubric, taxonomy));
    expect(request?.messages[1]?.content).toBe(judgeUserPrompt(two));
    model.assertDone();
  });

  it("sends a bad answer back with the reason, then takes the corrected one", async () => {
    const model = new ScriptedModel([
      "Both turns succeed. {turns: oops}",
      answer(labels("N s", ". s", "N s")),
      answer(labels("N s", ". s")),
    ]);
    const got = await judgeConversation(judge(model), two, settings);
    expect(got.answers).toBe(3);
    expect(got.rejected).toHaveLength(2);
    expect(got.rejected[0]).toMatch(/^the JSON object does not parse \(/);
    expect(got.rejected[1]).toBe(
      "labels: turns: expected 2 turns (one per turn of the conversation), got 3",
    );
    expect(got.spend.calls).toBe(3);
    // The third request carries the whole exchange: both replies and both corrections.
    const third = model.requests[2];
    expect(third?.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    expect(third?.messages[2]?.content).toBe("Both turns succeed. {turns: oops}");
    expect(third?.messages[5]?.content).toMatch(
      /^Your answer could not be used: labels: turns: expected 2 turns .*covering turns 1\.\.2, one entry per turn\.$/,
    );
    // The shape without the prompt's "more entries" ellipsis.
    expect(third?.messages[5]?.content).toContain('"rationale": "..."}]} covering');
    model.assertDone();
  });

  it("rejects labels that break the rules: a cause outside the taxonomy, a success with a cause", async () => {
    const model = new ScriptedModel([
      answer(labels("N s", ". f X9")),
      answer(labels("N s E1", ". s")),
      answer([{ ...labels("N s", ". s")[0], quality: "great" }, labels("N s", ". s")[1]] as never),
    ]);
    const error = await judgeError(judgeConversation(judge(model), two, settings));
    expect(error.message).toBe(
      'judge 1 (scripted): no usable answer in 3 attempts (last: turn 1: quality: Invalid option: expected one of "success"|"failure")',
    );
    expect(error.rejected).toEqual([
      'turn 2: rcof: "X9" is not a code of taxonomy rcof (E1, E2, E3, E4, E5, E6, E7)',
      'turn 1: rcof: must be null when quality is "success", got "E1"',
      'turn 1: quality: Invalid option: expected one of "success"|"failure"',
    ]);
    expect(error.spend.calls).toBe(3);
    model.assertDone();
  });

  it("asks only as often as answerAttempts says", async () => {
    const model = new ScriptedModel(["no JSON here"]);
    const error = await judgeError(
      judgeConversation(judge(model), two, { ...settings, answerAttempts: 1 }),
    );
    expect(error.message).toBe(
      "judge 1 (scripted): no usable answer in 1 attempt (last: the reply has no JSON object)",
    );
    model.assertDone();
  });

  it("makes a provider error a JudgeError carrying what was spent and rejected", async () => {
    const model = new ScriptedModel(["nothing", new Error("connection reset")]);
    const error = await judgeError(judgeConversation(judge(model), two, settings));
    expect(error.message).toBe("judge 1 (scripted): model call failed: connection reset");
    expect(error.rejected).toEqual(["the reply has no JSON object"]);
    expect(error.spend.calls).toBe(1);
    model.assertDone();
  });

  it("sets a first turn said not to start a goal, and says so", async () => {
    const model = new ScriptedModel([answer(labels(". s", ". s"))]);
    const got = await judgeConversation(judge(model), two, settings);
    expect(got.labels[0]?.is_new_goal).toBe(true);
    expect(got.normalised).toEqual([
      expect.objectContaining({ turn_number: 1, field: "is_new_goal", from: false, to: true }),
    ]);
  });
});

/** $1 per input token and $2 per output token: costs are exact sums of usage. */
const PRICED: ResolvedModel = {
  name: "judge",
  spec: { provider: "openai", model: "judge" },
  params: {},
  price: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 },
  stream: false,
};

function cache() {
  const store = RunStore.open(join(mkdtempSync(join(tmpdir(), "clade-judge-cache-")), "c.db"));
  return createResponseCache(store.db);
}

describe("judgeConversation through the model client", () => {
  const two = conversation("c1", 2);
  const usage = { inputTokens: 10, outputTokens: 5 };

  it("sums usage and cost over the judgement's calls", async () => {
    const provider = new ScriptedModel([
      { content: "no answer", usage },
      { content: answer(labels("N s", ". s")), usage: { inputTokens: 20, outputTokens: 1 } },
    ]);
    const client = createModelClient(PRICED, { retry: FAST_RETRY }, provider);
    const got = await judgeConversation(judge(client), two, settings);
    expect(got.spend).toMatchObject({
      calls: 2,
      usage: { inputTokens: 30, outputTokens: 6 },
      // (10 + 2·5) + (20 + 2·1)
      costUsd: 42,
      unpriced: false,
      cacheHits: 0,
    });
    const unpriced = createModelClient(
      { ...PRICED, price: undefined } as ResolvedModel,
      {},
      new ScriptedModel([answer(labels("N s", ". s"))]),
    );
    const free = await judgeConversation(judge(unpriced), two, settings);
    expect(free.spend).toMatchObject({ costUsd: 0, unpriced: true });
  });

  it("lets the model layer retry a 429, counting one call", async () => {
    const provider = new ScriptedModel([
      new ModelError("HTTP 429 rate limited", { status: 429, retryable: true }),
      { content: answer(labels("N s", ". s")), usage },
    ]);
    const client = createModelClient(PRICED, { retry: FAST_RETRY }, provider);
    const got = await judgeConversation(judge(client), two, settings);
    expect(got.answers).toBe(1);
    expect(got.spend).toMatchObject({ calls: 1, costUsd: 20, providerAttempts: 2 });
    expect(provider.requests).toHaveLength(2);
    provider.assertDone();
  });

  it("accounts a failed call and names the judge", async () => {
    const provider = new ScriptedModel([
      { content: "thinking only", usage },
      new ModelError("HTTP 400 bad request: context too long", { status: 400, retryable: false }),
    ]);
    const client = createModelClient(PRICED, { retry: FAST_RETRY }, provider);
    const error = await judgeError(judgeConversation(judge(client, "judge 3 (x)"), two, settings));
    expect(error.message).toBe(
      "judge 3 (x): model call failed: HTTP 400 bad request: context too long",
    );
    expect(error.spend).toMatchObject({ calls: 2, costUsd: 20, unpriced: false });
  });

  it("serves an identical judgement from the cache, but keeps two judges of one model apart", async () => {
    const provider = new ScriptedModel([
      { content: answer(labels("N s", ". s")), usage },
      { content: answer(labels("N s", ". f E1")), usage },
    ]);
    const client = createModelClient(PRICED, { cache: cache(), retry: FAST_RETRY }, provider);
    const first = await judgeConversation(judge(client), two, settings, { index: 0 });
    const again = await judgeConversation(judge(client), two, settings, { index: 0 });
    const second = await judgeConversation(judge(client), two, settings, { index: 1 });
    expect(again.labels).toEqual(first.labels);
    expect(again.spend).toMatchObject({ calls: 1, cacheHits: 1, costUsd: 0, latencyMs: null });
    expect(first.spend).toMatchObject({ cacheHits: 0, costUsd: 20 });
    // Judge 2 is a draw of its own, not judge 1's cached reply.
    expect(second.labels).toEqual(labels("N s", ". f E1"));
    expect(provider.requests.map((r) => r.sampleIndex)).toEqual([0, 1]);
    provider.assertDone();
  });
});

describe("judges against the fake model server", () => {
  let server: FakeModelServer;
  afterEach(async () => {
    await server.close();
  });

  const config = (url: string) =>
    parseConfig({
      models: {
        local: {
          model: `openai-compatible:${url}/v1#judge-local`,
          price: { inputPerMTok: 2, outputPerMTok: 10 },
          maxRetries: 2,
        },
        claude: {
          model: "anthropic:claude-judge",
          apiKey: "test-key",
          price: { inputPerMTok: 1, outputPerMTok: 5 },
          maxRetries: 2,
        },
      },
    });

  function client(name: "local" | "claude") {
    const resolved = resolveModel(name, config(server.url), {});
    const model =
      name === "claude"
        ? { ...resolved, spec: { ...resolved.spec, baseUrl: server.anthropicBaseUrl } }
        : resolved;
    return createModelClient(model, { retry: FAST_RETRY });
  }

  const text = (request: FakeRequest) => JSON.stringify(request.body);

  it.each(["local", "claude"] as const)(
    "%s: bad JSON is sent back, a 429 retried, and the cost follows the reported usage",
    async (name) => {
      const replies = [
        { fault: "rate_limit" as const, retryAfterSeconds: 0 },
        { content: "Turn 2 fails: {not json}", usage: { inputTokens: 1000, outputTokens: 100 } },
        {
          content: answer(labels("N s", ". f E4")),
          usage: { inputTokens: 2000, outputTokens: 200 },
        },
      ];
      server = await startFakeModelServer({ replies });
      const got: Judgement = await judgeConversation(
        judge(client(name), `judge 1 (${name})`),
        conversation("c7", 2),
        settings,
      );
      expect(got.labels).toEqual(labels("N s", ". f E4"));
      expect(got.answers).toBe(2);
      expect(got.rejected).toEqual([expect.stringMatching(/^the JSON object does not parse/)]);
      // Three requests reached the server (429, bad JSON, answer), in two calls of the judge.
      expect(server.requests).toHaveLength(3);
      expect(
        server.requests.every((r) => r.api === (name === "claude" ? "anthropic" : "openai")),
      ).toBe(true);
      expect(server.requests.every((r) => conversationIdIn(text(r)) === "c7")).toBe(true);
      expect(text(server.requests[2] as FakeRequest)).toContain("Your answer could not be used");
      const [input, output] = name === "local" ? [2, 10] : [1, 5];
      expect(got.spend.calls).toBe(2);
      expect(got.spend.usage).toEqual({ inputTokens: 3000, outputTokens: 300 });
      expect(got.spend.costUsd).toBeCloseTo((3000 * input + 300 * output) / 1e6, 12);
      expect(got.spend.unpriced).toBe(false);
      expect(server.unexpectedRequests).toEqual([]);
    },
  );

  it("a 5xx beyond the retries is a JudgeError, after maxRetries + 1 requests", async () => {
    server = await startFakeModelServer({ rule: () => ({ fault: "server_error", status: 503 }) });
    const error = await judgeError(
      judgeConversation(judge(client("local"), "judge 2 (local)"), conversation("c8", 1), settings),
    );
    expect(error.message).toMatch(/^judge 2 \(local\): model call failed: .*HTTP 503/);
    expect(error.spend).toMatchObject({ calls: 1, costUsd: 0 });
    expect(server.requests).toHaveLength(3);
  });
});
