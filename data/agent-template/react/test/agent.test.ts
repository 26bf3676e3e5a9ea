import assert from "node:assert/strict";
import { test } from "node:test";
import reactAgent, { HISTORY_TURNS } from "../src/agent.ts";

const context = {
  env: {
    name: "maze",
    version: "1",
    description: "",
    instruction: "Reach the goal.",
    successThreshold: 1,
    maxSteps: 50,
  },
  taskIndex: 0,
  seed: 0,
  sampleIndex: 0,
};

/** A model that answers from a script and remembers the requests it got. */
function scriptedModel(replies) {
  const requests = [];
  return {
    requests,
    id: "fake:scripted",
    async complete(request) {
      requests.push(request);
      const content = replies.shift();
      if (content === undefined) throw new Error("the script ran out");
      return {
        content,
        toolCalls: [],
        usage: { inputTokens: 0, outputTokens: 0 },
        finishReason: "stop",
        model: "scripted",
      };
    },
  };
}

const start = {
  instruction: "Reach the goal.",
  observation: { text: "You are at (0, 0).", availableActions: ["move up", "move down"] },
  history: [],
};

test("asks the model and returns the parsed action", async () => {
  const model = scriptedModel(["Thought:\nUp.\n\nAction:\nmove up"]);
  const agent = reactAgent.create(context, { model });
  const reply = await agent.act(start, new AbortController().signal);
  assert.deepEqual(reply, {
    action: "move up",
    message: "Thought:\nUp.\n\nAction:\nmove up",
    parseErrors: 0,
  });
  const [request] = model.requests;
  assert.equal(request.messages[0].role, "system");
  assert.match(request.messages[0].content, /Reach the goal\./);
  assert.match(request.messages[1].content, /Available actions:\n- move up\n- move down/);
});

test("corrects an unusable reply, then gives up after three", async () => {
  const model = scriptedModel(["no action here", "Action: fly", "Action: move down"]);
  const agent = reactAgent.create(context, { model });
  const reply = await agent.act(start, new AbortController().signal);
  assert.equal(reply.action, "move down");
  assert.equal(reply.parseErrors, 2);
  assert.match(model.requests[2].messages.at(-1).content, /"fly" is not one of/);

  const stubborn = reactAgent.create(context, { model: scriptedModel(["a", "b", "c", "d"]) });
  await assert.rejects(stubborn.act(start, new AbortController().signal), /no usable action/);
});

test("replays the history and keeps the prompt bounded", async () => {
  const model = scriptedModel(["Action: move up", "Action: move up"]);
  const agent = reactAgent.create(context, { model });
  await agent.act(start, new AbortController().signal);
  const history = Array.from({ length: HISTORY_TURNS + 5 }, (_, i) => ({
    action: "move up",
    message: `Action: move up ${i}`,
    observation: { text: `step ${i}` },
    reward: 0,
  }));
  const latest = { text: "latest", availableActions: ["move up"] };
  await agent.act({ ...start, observation: latest, history }, new AbortController().signal);
  const messages = model.requests[1].messages;
  assert.equal(messages.length, 2 + 2 * HISTORY_TURNS);
  assert.match(messages[1].content, /^You are at \(0, 0\)\.\n\n\(5 earlier turns omitted\.\)/);
  assert.equal(messages.at(-1).content, "latest\n\nAvailable actions:\n- move up");
});

test("needs a model", () => {
  assert.throws(() => reactAgent.create(context, {}), /this agent needs a model: pass --model/);
});
