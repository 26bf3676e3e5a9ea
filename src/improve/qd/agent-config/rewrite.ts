/**
 * The model-driven rewrite: the mutator model (its own role, beside the agent's model) is shown
 * the tasks, which of them is the quality task, and the configuration's prompt parts, and asked
 * for a new text of one part. The reply is read strictly: exactly one ```prompt fenced block,
 * non-empty, no fence inside, within MAX_TEXT_CHARS, different from the current text. A reply
 * that fails is answered with what was wrong and asked again, up to a bounded number of attempts;
 * then the rewrite gives up and says why. It never throws, except when the signal aborts: a model
 * error ends it as a failure too, so a generation never crashes on the mutator.
 */
import { EMPTY_REPLY_PLACEHOLDER } from "../../../agent/prompting.js";
import type { EnvDefinition } from "../../../env/types.js";
import type { ChatMessage, Model } from "../../../model/types.js";
import { type AgentConfig, MAX_TEXT_CHARS } from "./config.js";

// ---------------------------------------------------------------------------------------------
// Hyperparameters
// ---------------------------------------------------------------------------------------------

/** Model calls per rewrite before it gives up (the first ask and the corrections). */
export const REWRITE_ATTEMPTS = 3;
/** The mutator's sampling temperature: some variety between children, still on task. */
export const REWRITE_TEMPERATURE = 0.7;
/** The mutator's reply limit, in tokens: room for a part of MAX_TEXT_CHARS and a little more. */
export const REWRITE_MAX_TOKENS = 4096;
/** How much of the quality task's instruction the mutator sees. */
export const INSTRUCTION_CHARS = 4000;

/** What the mutator is told about task k. */
export interface TaskDescription {
  readonly name: string;
  readonly description: string;
  /** The task statement the agent sees first (rules and action format). */
  readonly instruction: string;
}

export function describeEnvTask(env: EnvDefinition): TaskDescription {
  const { name, description, instruction } = env.info;
  return { name, description, instruction };
}

export const REWRITE_SYSTEM_PROMPT = `You improve LLM agents that act in text environments. An \
agent's system prompt is made of named parts; you rewrite one part so that the agent does better \
on one task (the quality task) while staying useful on the others.`;

export const REWRITE_FENCE = "```prompt";

function clip(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}\n[... ${text.length - max} more characters]`;
}

/** The user message asking for a new text of part `partIndex`. */
export function rewritePrompt(
  config: AgentConfig,
  partIndex: number,
  qualityTask: number,
  tasks: readonly TaskDescription[],
): string {
  const part = config.parts[partIndex];
  const quality = tasks[qualityTask];
  if (!part) throw new RangeError(`no prompt part ${partIndex}`);
  if (!quality) throw new RangeError(`no task ${qualityTask}`);
  const taskLines = tasks.map(
    (t, k) =>
      `- task ${k}: ${t.name}: ${t.description}${k === qualityTask ? " (quality task)" : ""}`,
  );
  const parts = config.parts.map((p) => `## part "${p.name}"\n${p.text}`);
  return [
    `# The tasks the agent is scored on\n${taskLines.join("\n")}`,
    `# The quality task: ${quality.name}\n${quality.description}\n\nWhat the agent is told at the start of each episode:\n-----\n${clip(quality.instruction, INSTRUCTION_CHARS)}\n-----`,
    `# The agent's system prompt parts, in order\n${parts.join("\n\n")}`,
    `# Your job\nRewrite the part "${part.name}" so that the agent succeeds more often on the quality task (${quality.name}), keeping what helps on the other tasks. Do not restate the reply format: the agent's own prompt already gives it.\n\nAnswer with the new text of the part in exactly one fenced block opened by ${REWRITE_FENCE} on a line of its own and closed by \`\`\` on a line of its own. The text must not contain \`\`\`, must differ from the current text, and must be at most ${MAX_TEXT_CHARS} characters.`,
  ].join("\n\n");
}

const BLOCK = /^```prompt[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?```[ \t]*$/gm;

/** The new text a reply gives, or what is wrong with it (one line). */
export function readRewrite(
  reply: string,
  current: string,
): { text: string } | { problem: string } {
  if (reply.trim() === "") return { problem: "the reply was empty" };
  const blocks = [...reply.matchAll(BLOCK)];
  if (blocks.length === 0) return { problem: `the reply has no ${REWRITE_FENCE} block` };
  if (blocks.length > 1) {
    return { problem: `the reply has ${blocks.length} ${REWRITE_FENCE} blocks, not exactly one` };
  }
  const text = (blocks[0]?.[1] ?? "").trim();
  if (text === "") return { problem: `the ${REWRITE_FENCE} block is empty` };
  if (text.includes("```")) return { problem: "the new text contains ```" };
  if (text.length > MAX_TEXT_CHARS) {
    return { problem: `the new text has ${text.length} characters, over ${MAX_TEXT_CHARS}` };
  }
  if (text === current.trim()) return { problem: "the new text is the current text unchanged" };
  return { text };
}

function correction(problem: string): string {
  return `Your reply could not be used: ${problem}. Answer again: the part's new text in exactly one ${REWRITE_FENCE} block, closed by \`\`\` on a line of its own.`;
}

export interface RewriteOptions {
  model: Model;
  config: AgentConfig;
  partIndex: number;
  qualityTask: number;
  tasks: readonly TaskDescription[];
  /** Passed as the request's seed, so a seeded provider answers the same child the same way. */
  seed: number;
  maxAttempts?: number;
  signal?: AbortSignal;
}

export type RewriteOutcome =
  | {
      readonly ok: true;
      readonly part: string;
      readonly text: string;
      readonly attempts: number;
      readonly tokens: number;
    }
  | {
      readonly ok: false;
      readonly part: string;
      readonly reason: string;
      readonly attempts: number;
      readonly tokens: number;
    };

/** Asks the mutator for a new text of one part (see the module comment). */
export async function rewritePart(options: RewriteOptions): Promise<RewriteOutcome> {
  const { model, config, partIndex, signal } = options;
  const maxAttempts = options.maxAttempts ?? REWRITE_ATTEMPTS;
  const part = config.parts[partIndex];
  if (!part) throw new RangeError(`no prompt part ${partIndex}`);
  const messages: ChatMessage[] = [
    { role: "system", content: REWRITE_SYSTEM_PROMPT },
    {
      role: "user",
      content: rewritePrompt(config, partIndex, options.qualityTask, options.tasks),
    },
  ];
  const params = {
    temperature: REWRITE_TEMPERATURE,
    maxTokens: REWRITE_MAX_TOKENS,
    seed: options.seed,
  };
  let tokens = 0;
  let problem = "no attempt was made";
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    let content: string;
    try {
      const response = await model.complete({ messages: [...messages], params }, signal);
      tokens += response.usage.inputTokens + response.usage.outputTokens;
      content = response.content;
      const reading = readRewrite(content, part.text);
      if ("text" in reading) {
        return { ok: true, part: part.name, text: reading.text, attempts: attempt, tokens };
      }
      problem =
        response.finishReason === "length"
          ? `${reading.problem} (the reply was cut off at the length limit)`
          : reading.problem;
    } catch (error) {
      if (signal?.aborted) throw error;
      // The client has already retried what retrying could fix; asking again would not help.
      const message = error instanceof Error ? error.message : String(error);
      return {
        ok: false,
        part: part.name,
        reason: `model error: ${message}`,
        attempts: attempt,
        tokens,
      };
    }
    messages.push(
      { role: "assistant", content: content === "" ? EMPTY_REPLY_PLACEHOLDER : content },
      { role: "user", content: correction(problem) },
    );
  }
  return {
    ok: false,
    part: part.name,
    reason: `no usable rewrite after ${maxAttempts} attempt(s): ${problem}`,
    attempts: maxAttempts,
    tokens,
  };
}
