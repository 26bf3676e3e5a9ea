/**
 * The implementation (hgm.md, "How a self-modification is made", step 3): a coding agent works on
 * a copy of the parent's files with file tools, may typecheck the agent and run its own unit tests
 * (never the benchmark), and stops when it calls `finish` or a bound runs out: steps, tokens or
 * time. Files live in memory; everything that runs code is the injected `checks`, so this module
 * runs nothing itself.
 */
import { z } from "zod";
import {
  AGENT_API_FILE,
  AGENT_MANIFEST,
  type AgentFiles,
  agentManifest,
  checkAgentFiles,
  isAgentPath,
  sortedFiles,
} from "../../agent/folder/files.js";
import { EMPTY_REPLY_PLACEHOLDER } from "../../agent/prompting.js";
import type { ChatMessage, Model, ToolCall, ToolSpec } from "../../model/types.js";
import { clipMiddle, type Plan } from "./plan.js";
import { type Target, THEME_DESCRIPTIONS } from "./target.js";
import { addUsage, completeCounted, NO_USAGE, type WorkUsage } from "./usage.js";

export const DEFAULT_MAX_STEPS = 30;
/** Input and output tokens of all the coding agent's calls together. */
export const DEFAULT_MAX_TOKENS = 400_000;
export const DEFAULT_MAX_MS = 10 * 60 * 1000;
/** How much of a file, or of a check's output, one tool result shows. */
const READ_CHARS = 60_000;
const CHECK_OUTPUT_CHARS = 10_000;

/** The result of running the agent's typecheck or its tests (in the sandbox, by the caller). */
export interface CheckOutcome {
  ok: boolean;
  output: string;
}

export interface AgentChecks {
  typecheck(files: AgentFiles, signal: AbortSignal): Promise<CheckOutcome>;
  tests(files: AgentFiles, signal: AbortSignal): Promise<CheckOutcome>;
}

export interface ImplementLimits {
  maxSteps: number;
  maxTokens: number;
  maxMs: number;
}

export type ImplementStopReason =
  | "finished"
  | "max_steps"
  | "max_tokens"
  | "max_time"
  | "no_tool_call";

export interface ImplementOptions extends Partial<ImplementLimits> {
  model: Model;
  files: AgentFiles;
  plan: Plan;
  target: Target;
  checks: AgentChecks;
  signal?: AbortSignal;
  /** The clock, in milliseconds (tests replace it). */
  now?: () => number;
}

export interface Implementation {
  files: Map<string, string>;
  /** The coding agent's summary (from `finish`), or why it stopped. */
  summary: string;
  /** Model calls made. */
  steps: number;
  stopReason: ImplementStopReason;
  usage: WorkUsage;
}

export const IMPLEMENTER_SYSTEM_PROMPT = `You are a careful software engineer. You work on an LLM \
agent written in TypeScript: a folder whose manifest (${AGENT_MANIFEST}) names the entry module \
and the agent's own tests. You change the folder only through your tools: list_files, \
read_file, write_file, replace_in_file, typecheck, run_tests and finish.

Implement the change the issue describes, in general form: it must help the agent on every task \
of its environment, not on one. Read the code before you change it. Keep the agent \
type-correct and its tests passing: run typecheck and run_tests after your changes and fix what \
they report; add or update tests for what you change. You cannot run the agent on its \
environment. ${AGENT_API_FILE} is clade's agent API: read it, never change it.

When you are done, call finish with a short summary of what you changed.`;

const NO_TOOL_CALL_REMINDER = `Your reply called no tool. Work only through the tools; when you \
are done, call finish with a summary of what you changed.`;

const pathSchema = z.string({ error: "must be a string" }).min(1, "must not be empty");
const argumentSchemas = {
  list_files: z.object({}),
  read_file: z.object({ path: pathSchema }),
  write_file: z.object({ path: pathSchema, content: z.string({ error: "must be a string" }) }),
  replace_in_file: z.object({
    path: pathSchema,
    old: z.string({ error: "must be a string" }).min(1, "must not be empty"),
    new: z.string({ error: "must be a string" }),
  }),
  typecheck: z.object({}),
  run_tests: z.object({}),
  finish: z.object({ summary: z.string({ error: "must be a string" }) }),
} as const;
type ToolName = keyof typeof argumentSchemas;

const stringProperty = (description: string) => ({ type: "string", description });
const objectSchema = (properties: Record<string, unknown>) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

export const IMPLEMENTER_TOOLS: readonly ToolSpec[] = [
  {
    name: "list_files",
    description: "List the agent's files with their sizes.",
    parameters: objectSchema({}),
  },
  {
    name: "read_file",
    description: "Read one file of the agent.",
    parameters: objectSchema({ path: stringProperty("The file's path, relative to the folder.") }),
  },
  {
    name: "write_file",
    description: "Create a file or replace its whole content.",
    parameters: objectSchema({
      path: stringProperty("The file's path, relative to the folder."),
      content: stringProperty("The file's new content."),
    }),
  },
  {
    name: "replace_in_file",
    description:
      "Replace one piece of text in a file. `old` must occur exactly once in the file: include " +
      "enough surrounding lines to make it unique.",
    parameters: objectSchema({
      path: stringProperty("The file's path, relative to the folder."),
      old: stringProperty("The exact text to replace."),
      new: stringProperty("The text to put in its place."),
    }),
  },
  {
    name: "typecheck",
    description: "Typecheck the agent (tsc, strict). Returns the compiler's errors, if any.",
    parameters: objectSchema({}),
  },
  {
    name: "run_tests",
    description: "Run the agent's own unit tests. Returns their output.",
    parameters: objectSchema({}),
  },
  {
    name: "finish",
    description: "End the work, with a short summary of what you changed.",
    parameters: objectSchema({ summary: stringProperty("What you changed, and why.") }),
  },
];

function describeTarget(target: Target): string {
  if (target.kind === "task" && target.evaluation.outcome === "pass") {
    return `The agent solved task ${target.task} of its environment; make it more reliable or quicker.`;
  }
  return target.kind === "task"
    ? `The agent failed task ${target.task} of its environment.`
    : THEME_DESCRIPTIONS[target.theme];
}

function listing(files: AgentFiles): string {
  return [...files]
    .map(([path, text]) => {
      const note = path === AGENT_API_FILE ? ", read-only" : "";
      return `- ${path} (${text.split("\n").length} lines${note})`;
    })
    .join("\n");
}

/** The first user message: the plan, what it is meant to fix, and the files. */
export function implementPrompt(plan: Plan, target: Target, files: AgentFiles): string {
  return `# The issue
${plan.problem_description}

# The plan
Proposal: ${plan.improvement_proposal}

Implementation suggestion: ${plan.implementation_suggestion}

# Where it comes from
${describeTarget(target)}
${plan.log_summarization}

# The agent's files
${listing(files)}`;
}

/** A tool's arguments, validated, or the message that says what is wrong. */
function readArguments<N extends ToolName>(
  name: N,
  call: ToolCall,
): { args: z.infer<(typeof argumentSchemas)[N]> } | { error: string } {
  let raw: unknown;
  try {
    raw = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return { error: `Error: the arguments are not valid JSON (${(error as Error).message}).` };
  }
  const parsed = argumentSchemas[name].safeParse(raw);
  if (parsed.success) return { args: parsed.data as z.infer<(typeof argumentSchemas)[N]> };
  const issues = parsed.error.issues.map(
    (issue) => `${issue.path.length > 0 ? issue.path.join(".") : "arguments"}: ${issue.message}`,
  );
  return { error: `Error: invalid arguments for ${name}: ${issues.join("; ")}.` };
}

/** The in-memory folder the coding agent edits, and its tools. */
class Workspace {
  readonly files: Map<string, string>;

  constructor(
    files: AgentFiles,
    private readonly checks: AgentChecks,
  ) {
    this.files = new Map(files);
  }

  /** Runs one tool call; returns what the model reads back. */
  async run(call: ToolCall, signal: AbortSignal): Promise<string> {
    if (!(call.name in argumentSchemas) || call.name === "finish") {
      return `Error: unknown tool ${JSON.stringify(call.name)}.`;
    }
    const name = call.name as Exclude<ToolName, "finish">;
    switch (name) {
      case "list_files":
        return listing(sortedFiles(this.files));
      case "read_file": {
        const read = readArguments(name, call);
        return "error" in read ? read.error : this.read(read.args.path);
      }
      case "write_file": {
        const read = readArguments(name, call);
        return "error" in read ? read.error : this.write(read.args.path, read.args.content);
      }
      case "replace_in_file": {
        const read = readArguments(name, call);
        return "error" in read ? read.error : this.replace(read.args);
      }
      case "typecheck":
      case "run_tests": {
        const run = name === "typecheck" ? this.checks.typecheck : this.checks.tests;
        const result = await run.call(this.checks, sortedFiles(this.files), signal);
        const what = name === "typecheck" ? "Typecheck" : "Tests";
        const output = clipMiddle(result.output.trim(), CHECK_OUTPUT_CHARS);
        return `${what} ${result.ok ? "passed" : "failed"}.${output ? `\n${output}` : ""}`;
      }
    }
  }

  private read(path: string): string {
    const text = this.files.get(path);
    if (text === undefined) return `Error: no file ${JSON.stringify(path)} (see list_files).`;
    return clipMiddle(text, READ_CHARS);
  }

  /** Why a file may not be written, or null. */
  private refusal(path: string): string | null {
    if (path === AGENT_API_FILE) {
      return `Refused: ${AGENT_API_FILE} is clade's agent API, the same for every agent; it cannot be changed.`;
    }
    if (!isAgentPath(path)) {
      return `Refused: ${JSON.stringify(path)} is not an acceptable path (relative, no "..", letters, digits, . _ @ + - / and spaces).`;
    }
    return null;
  }

  private write(path: string, content: string): string {
    const refused = this.refusal(path);
    if (refused) return refused;
    const next = new Map(this.files).set(path, content);
    try {
      checkAgentFiles(next);
    } catch (error) {
      return `Refused: ${(error as Error).message}.`;
    }
    const existed = this.files.has(path);
    this.files.set(path, content);
    return `${existed ? "Replaced" : "Created"} ${path}.${this.manifestWarning(path)}`;
  }

  private replace(args: { path: string; old: string; new: string }): string {
    const refused = this.refusal(args.path);
    if (refused) return refused;
    const text = this.files.get(args.path);
    if (text === undefined) return `Error: no file ${JSON.stringify(args.path)} (see list_files).`;
    const at = text.indexOf(args.old);
    if (at < 0) return `Error: the old text does not occur in ${args.path}; read the file again.`;
    if (text.indexOf(args.old, at + 1) >= 0) {
      const count = text.split(args.old).length - 1;
      return `Error: the old text occurs ${count} times in ${args.path}; include more lines to make it unique.`;
    }
    const replaced = text.slice(0, at) + args.new + text.slice(at + args.old.length);
    return this.write(args.path, replaced).replace(/^Replaced /, "Edited ");
  }

  /** A manifest that no longer validates is allowed (the checks will say so), but named now. */
  private manifestWarning(path: string): string {
    if (path !== AGENT_MANIFEST) return "";
    try {
      agentManifest(this.files);
      return "";
    } catch (error) {
      return ` Warning: the manifest is not valid: ${(error as Error).message}`;
    }
  }
}

export async function implement(options: ImplementOptions): Promise<Implementation> {
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const maxMs = options.maxMs ?? DEFAULT_MAX_MS;
  const now = options.now ?? (() => performance.now());
  const started = now();
  const workspace = new Workspace(options.files, options.checks);
  const messages: ChatMessage[] = [
    { role: "system", content: IMPLEMENTER_SYSTEM_PROMPT },
    { role: "user", content: implementPrompt(options.plan, options.target, options.files) },
  ];
  // Calls in flight are cut off when the time is up, as well as when the caller aborts.
  const controller = new AbortController();
  const signal = controller.signal;
  const timeout = setTimeout(() => controller.abort(new Error("time is up")), maxMs);
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let usage = { ...NO_USAGE };
  let steps = 0;
  let reminded = false;
  const done = (stopReason: ImplementStopReason, summary: string): Implementation => ({
    files: sortedFiles(workspace.files),
    summary,
    steps,
    stopReason,
    usage,
  });
  const outOfTime = () => done("max_time", `stopped after ${Math.round(maxMs / 1000)} s`);
  /** Whether an error came of the time bound rather than of the caller or the work. */
  const timedOut = () => signal.aborted && !options.signal?.aborted;

  try {
    while (true) {
      options.signal?.throwIfAborted();
      if (steps >= maxSteps) return done("max_steps", `stopped after ${maxSteps} steps`);
      const tokens = usage.inputTokens + usage.outputTokens;
      if (tokens >= maxTokens) return done("max_tokens", `stopped after ${tokens} tokens`);
      if (now() - started >= maxMs || timedOut()) return outOfTime();

      let call: Awaited<ReturnType<typeof completeCounted>>;
      try {
        call = await completeCounted(
          options.model,
          { messages, tools: [...IMPLEMENTER_TOOLS] },
          signal,
        );
      } catch (error) {
        if (timedOut()) return outOfTime();
        throw error;
      }
      steps++;
      usage = addUsage(usage, call.usage);
      const { content, toolCalls } = call.response;

      if (toolCalls.length === 0) {
        if (reminded) return done("no_tool_call", content.trim() || "no tool call");
        reminded = true;
        messages.push(
          { role: "assistant", content: content || EMPTY_REPLY_PLACEHOLDER },
          { role: "user", content: NO_TOOL_CALL_REMINDER },
        );
        continue;
      }

      messages.push({ role: "assistant", content, toolCalls });
      let summary: string | null = null;
      for (const toolCall of toolCalls) {
        let result: string;
        if (summary !== null) {
          result = "Not run: finish was called before it.";
        } else if (toolCall.name === "finish") {
          const read = readArguments("finish", toolCall);
          if ("error" in read) result = read.error;
          else {
            summary = read.args.summary.trim() || "(no summary)";
            result = "Finished.";
          }
        } else {
          try {
            result = await workspace.run(toolCall, signal);
          } catch (error) {
            if (timedOut()) return outOfTime();
            throw error;
          }
        }
        messages.push({ role: "tool", toolCallId: toolCall.id, content: result });
      }
      if (summary !== null) return done("finished", summary);
    }
  } finally {
    clearTimeout(timeout);
    options.signal?.removeEventListener("abort", onAbort);
  }
}
