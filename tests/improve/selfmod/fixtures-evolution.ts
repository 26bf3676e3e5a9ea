/**
 * Test doubles for searches over real agent folders: an agent model whose play depends on the
 * agent's own source (a marker in its system prompt), and a modify-model that diagnoses and then
 * patches that source. With them a self-modification really changes behaviour: the starting agent
 * fails every gridworld task, an agent whose prompt holds the marker solves them.
 */
import { resolveAgent } from "../../../src/agent/registry.js";
import { findEnv } from "../../../src/env/registry.js";
import type { Model, ModelRequest, ModelResponse } from "../../../src/model/types.js";
import { runEpisode } from "../../../src/rollout/episode.js";
import type { FakeRequest, FakeRule } from "../../../src/testing/index.js";

export const MARKER = "PLAN-EACH-STEP";
export const ENV = "gridworld";

/** The reference solver's actions per task, keyed by the task's first observation. */
export async function referenceActions(tasks: readonly number[]): Promise<Map<string, string[]>> {
  const env = findEnv(ENV);
  const solver = resolveAgent("reference", env);
  const byObservation = new Map<string, string[]>();
  for (const task of tasks) {
    const context = { env: env.info, taskIndex: task, seed: 0, sampleIndex: 0 };
    const record = await runEpisode({
      env: env.create(),
      agent: solver.create(context),
      context,
      limits: { maxTurns: 50, timeoutMs: 10_000 },
    });
    if (record.outcome !== "success" || !record.initialObservation) {
      throw new Error(`the reference solver failed task ${task}`);
    }
    byObservation.set(
      record.initialObservation.text,
      record.steps.map((step) => step.action),
    );
  }
  return byObservation;
}

interface Message {
  role: string;
  content?: string | null;
}

/**
 * What the agent's model answers: the reference's next action when the agent's system prompt
 * holds the marker, else "turn left" again and again (an episode that goes nowhere).
 */
export function agentReply(messages: readonly Message[], actions: Map<string, string[]>): string {
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  const firstUser = messages.find((m) => m.role === "user")?.content ?? "";
  const plan = [...actions].find(([observation]) => firstUser.startsWith(observation))?.[1];
  if (!plan) return "Thought:\nI do not know this task.\n\nAction:\nlook";
  const step = messages.filter((m) => m.role === "assistant").length;
  const action = system.includes(MARKER) ? (plan[step] ?? plan.at(-1)) : "turn left";
  return `Thought:\nOne step at a time.\n\nAction:\n${action}`;
}

export const PLAN = {
  log_summarization: "The agent turned left at every step and never finished the task.",
  potential_improvements: ["Ask the model to plan each step anew"],
  improvement_proposal: "Tell the model to plan each step from the latest observation.",
  implementation_suggestion: "Add an instruction to SYSTEM_PROMPT in src/prompts.ts.",
  problem_description: "The system prompt does not ask the model to plan each step.",
};

export type PatchKind = "fix" | "break-typecheck";

/** The tool call the scripted implementer makes first. */
function patchCall(kind: PatchKind): { name: string; arguments: string } {
  if (kind === "fix") {
    return {
      name: "replace_in_file",
      arguments: JSON.stringify({
        path: "src/prompts.ts",
        // Still there after the replacement: every improvement of every agent can apply it.
        old: "think about what to do",
        new: `think about what to do (${MARKER})`,
      }),
    };
  }
  return {
    name: "write_file",
    arguments: JSON.stringify({
      path: "src/prompts.ts",
      content: 'export const SYSTEM_PROMPT: number = "not a number";\n',
    }),
  };
}

/**
 * The modify-model's answer: a JSON plan to a diagnosis request (no tools), a patch and then
 * `finish` to the implementer (tools offered).
 */
export function modifyReply(
  request: { tools?: unknown[] | undefined; messages: readonly Message[] },
  kind: PatchKind,
): { content: string; toolCalls: { id: string; name: string; arguments: string }[] } {
  if (!request.tools || request.tools.length === 0) {
    return {
      content: `Reasoning first.\n\n\`\`\`json\n${JSON.stringify(PLAN)}\n\`\`\``,
      toolCalls: [],
    };
  }
  const acted = request.messages.some((m) => m.role === "tool");
  const call = acted
    ? { name: "finish", arguments: JSON.stringify({ summary: "asked for a plan at each step" }) }
    : patchCall(kind);
  return { content: "", toolCalls: [{ id: `call-${request.messages.length}`, ...call }] };
}

function response(content: string, toolCalls: ModelResponse["toolCalls"] = []): ModelResponse {
  return {
    content,
    toolCalls,
    usage: { inputTokens: 10, outputTokens: 5 },
    finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    model: "scripted",
  };
}

/** In-process models for runAgentEvolution. */
export function scriptedModels(actions: Map<string, string[]>, kind: PatchKind) {
  const agentRequests: ModelRequest[] = [];
  const agent: Model = {
    id: "scripted:agent",
    complete: async (request) => {
      agentRequests.push(request);
      return response(agentReply(request.messages, actions));
    },
  };
  const modify: Model = {
    id: "scripted:modify",
    complete: async (request) => {
      const reply = modifyReply(request, kind);
      return response(reply.content, reply.toolCalls);
    },
  };
  return { agent, modify, agentRequests };
}

/** A fake OpenAI server's rule playing both models (told apart by the model name). */
export function fakeServerRule(actions: Map<string, string[]>, kind: PatchKind): FakeRule {
  return (request: FakeRequest) => {
    const body = request.body as {
      model?: string;
      tools?: unknown[];
      messages: (Message & { tool_call_id?: string })[];
    };
    if (body.model === "agent-model") return { content: agentReply(body.messages, actions) };
    const reply = modifyReply(body, kind);
    return reply.toolCalls.length > 0 ? { toolCalls: reply.toolCalls } : { content: reply.content };
  };
}
