/**
 * The harness: the one piece of clade that runs inside an agent's sandbox. It loads the agent
 * folder's entry module (TypeScript through tsx), builds the agent for the episode, and then
 * serves the parent's rollout one turn at a time over the sandbox's channel (fd 3, JSON lines;
 * src/sandbox/channel.ts). The environment, the scoring and the keys stay with the parent: the
 * agent only ever sees states and model replies, so it cannot step the environment itself,
 * report its own reward, or see a key.
 *
 * Requests (child → parent), each answered by the parent:
 * - `{id, op: "start"}` → `{entry, context, model}`: the entry module's path in the folder, the
 *   episode's context, and the model's id (null when the run has no model);
 * - `{id, op: "next", reply?, error?}` → `{state}` or `{end: true}`: hands over the previous
 *   turn's reply (or why the agent failed to give one; also used for a load failure) and waits
 *   for the next state;
 * - `{id, op: "model", request}` → a ModelResponse: a model call, served by the parent's client.
 */

/** The harness's file name in the sandbox's workspace (written over any agent file of that name). */
export const HARNESS_FILE = ".clade-harness.mjs";

export const HARNESS_SOURCE = String.raw`
import net from "node:net";

const channel = new net.Socket({ fd: 3 });
channel.setEncoding("utf8");
const waiting = new Map();
let nextId = 1;
let buffer = "";
channel.on("data", (chunk) => {
  buffer += chunk;
  for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      continue;
    }
    const pending = waiting.get(message.id);
    if (!pending) continue;
    waiting.delete(message.id);
    if (typeof message.error === "string") pending.reject(new Error(message.error));
    else pending.resolve(message.result);
  }
});
// The parent went away: nothing left to do.
channel.on("close", () => process.exit(0));
channel.on("error", () => process.exit(0));

function request(op, body) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    channel.write(JSON.stringify({ id, op, ...body }) + "\n");
  });
}

function describe(error) {
  if (error instanceof Error) {
    const where = (error.stack ?? "").split("\n").slice(1, 4).map((line) => line.trim());
    return [error.name + ": " + error.message, ...where].join(" | ").slice(0, 2000);
  }
  return String(error).slice(0, 2000);
}

function agentFactory(module) {
  let value = module.default;
  // tsx may hand a CommonJS-shaped module's exports over as { default: ... } once more.
  if (value && typeof value === "object" && typeof value.create !== "function" && "default" in value) {
    value = value.default;
  }
  if (typeof value === "function") return { create: value };
  if (value && typeof value.create === "function") return value;
  throw new TypeError("the entry module's default export must be { name?, create(context, setup) } or a function (context, setup) => Agent");
}

const start = await request("start", {});
const setup = {};
if (start.model !== null) {
  setup.model = {
    id: start.model,
    async complete(modelRequest) {
      const { messages, tools, params } = modelRequest ?? {};
      return request("model", { request: { messages, tools, params } });
    },
  };
}

let agent;
try {
  // Beside this file: /work in the sandbox, the workspace itself in mode "none".
  const module = await import(new URL(start.entry, import.meta.url).href);
  agent = agentFactory(module).create(start.context, setup);
  if (!agent || typeof agent.act !== "function") throw new TypeError("create() must return an object with act(state, signal)");
} catch (error) {
  await request("next", { error: "cannot load the agent: " + describe(error) });
  process.exit(0);
}

const controller = new AbortController();
let previous = {};
for (;;) {
  const next = await request("next", previous);
  if (next.end) break;
  try {
    const reply = await agent.act(next.state, controller.signal);
    previous = {
      reply: {
        action: reply?.action,
        message: reply?.message,
        parseErrors: reply?.parseErrors,
      },
    };
  } catch (error) {
    previous = { error: describe(error) };
  }
}
controller.abort();
channel.end();
process.exit(0);
`;
