/**
 * The diagnosis (hgm.md, "How a self-modification is made", step 2): a strong model reads the
 * agent's source and the failed episode's log (or a theme the parent's logs show) and answers with
 * a JSON plan: `log_summarization`, `potential_improvements`, `improvement_proposal`,
 * `implementation_suggestion`, `problem_description`. The proposal must be general, not specific
 * to the task. The model may reason first; the plan is taken from its reply (the last ```json
 * block, else the first balanced {...} that parses) and checked against the schema. A reply that
 * does not give one is answered with what was wrong, and the model tries again, a few times.
 */
import { z } from "zod";
import type { AgentFiles } from "../../agent/folder/files.js";
import { EMPTY_REPLY_PLACEHOLDER } from "../../agent/prompting.js";
import type { ChatMessage, Model } from "../../model/types.js";
import { type Target, THEME_DESCRIPTIONS } from "./target.js";
import { addUsage, completeCounted, NO_USAGE, type WorkUsage } from "./usage.js";

export const DEFAULT_DIAGNOSE_ATTEMPTS = 3;
/** How much of the episode's log the diagnosis sees (the reference: e.g. 100k characters). */
export const DEFAULT_LOG_CHARS = 100_000;
/** How much of each source file, and of all of them, the diagnosis sees. */
export const SOURCE_FILE_CHARS = 30_000;
export const SOURCE_TOTAL_CHARS = 200_000;

const nonEmpty = z.string().trim().min(1, "must not be empty");

export const planSchema = z.object({
  log_summarization: nonEmpty,
  potential_improvements: z.array(nonEmpty).min(1, "must list at least one improvement"),
  improvement_proposal: nonEmpty,
  implementation_suggestion: nonEmpty,
  problem_description: nonEmpty,
});
export type Plan = z.infer<typeof planSchema>;

export const DIAGNOSE_SYSTEM_PROMPT = `You improve LLM agents. An agent is a folder of \
TypeScript: its entry module creates an agent that, each turn of an episode in a text \
environment, reads the observation, asks a model, and answers with an action. Agents are scored \
on many tasks of their environment.

You will see the agent's source and what went wrong. Identify ONE detailed plan that would \
improve the agent in general. The improvement must not be specific to the one task you are \
shown: it should help on the environment's other tasks too.`;

export const PLAN_FORMAT_PROMPT = `Think it through first. Then give your answer as one JSON \
object in a \`\`\`json fenced block, with these fields:
- "log_summarization": Summarize how the agent went about the task in the log: what it did, \
what its model replied, where it went wrong.
- "potential_improvements": A list of strings: improvements to the agent that could make it \
better in general (better prompts, parsing, memory of the episode, strategies), not fixes for \
this one task.
- "improvement_proposal": Choose ONE high-impact improvement from the list and describe it in \
detail: a focused plan that improves the agent overall.
- "implementation_suggestion": Referring to the agent's source, say what to change to implement \
the proposal: which files and functions, and how. Prefer changing what exists to adding much.
- "problem_description": Phrase the proposal and the suggestion as an issue for a software \
engineer who sees only the issue and the agent's source, clear enough to implement it.

Your reply is parsed automatically: the last \`\`\`json block must hold exactly this object.`;

/** Keeps the head and the tail of a long text, saying how much was left out between. */
export function clipMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const omitted = text.length - maxChars;
  const head = Math.ceil(maxChars / 2);
  return `${text.slice(0, head)}\n[... ${omitted} characters omitted ...]\n${text.slice(text.length - (maxChars - head))}`;
}

/** The agent's files as the prompt shows them: each clipped, the whole bounded. */
export function sourceSection(files: AgentFiles): string {
  const parts: string[] = [];
  const omitted: string[] = [];
  let total = 0;
  for (const [path, text] of files) {
    const shown = clipMiddle(text, SOURCE_FILE_CHARS);
    if (total + shown.length > SOURCE_TOTAL_CHARS) {
      omitted.push(path);
      continue;
    }
    total += shown.length;
    parts.push(`----- ${path} -----\n${shown}${shown.endsWith("\n") ? "" : "\n"}`);
  }
  if (omitted.length > 0) parts.push(`(not shown, for length: ${omitted.join(", ")})\n`);
  return parts.join("\n");
}

function episodeSection(target: Target, logChars: number): string {
  const evaluation = target.evaluation;
  if (!evaluation) return "(no episode log shows it)";
  const lines = [
    `Task ${evaluation.task}: ${evaluation.outcome}` +
      (evaluation.parseErrors > 0 ? `, ${evaluation.parseErrors} unusable model replies` : "") +
      (evaluation.error ? `, error: ${evaluation.error}` : ""),
    "----- Episode log start -----",
    clipMiddle(evaluation.log, logChars),
    "----- Episode log end -----",
  ];
  return lines.join("\n");
}

/** The diagnosis request's user message. */
export function diagnosePrompt(files: AgentFiles, target: Target, logChars: number): string {
  const what =
    target.kind === "task" && target.evaluation.outcome === "pass"
      ? `# What could be better\nThe agent solved task ${target.task} of its environment, and has failed none so far. Find what would make it solve tasks like it more reliably or in fewer turns. The episode:\n\n${episodeSection(target, logChars)}`
      : target.kind === "task"
        ? `# What went wrong\nThe agent failed task ${target.task} of its environment. The episode:\n\n${episodeSection(target, logChars)}`
        : `# What went wrong\n${THEME_DESCRIPTIONS[target.theme]}\n\nAn episode that shows it:\n\n${episodeSection(target, logChars)}`;
  return `# The agent's source\n${sourceSection(files)}\n${what}\n\n# Your answer\n${PLAN_FORMAT_PROMPT}`;
}

/** Where a JSON object may start and end in a reply: balanced braces, strings respected. */
function balancedObjects(text: string): string[] {
  const found: string[] = [];
  let start = text.indexOf("{");
  while (start >= 0) {
    let depth = 0;
    let inString = false;
    let end = -1;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{") depth++;
      else if (c === "}" && --depth === 0) {
        end = i;
        break;
      }
    }
    if (end < 0) break;
    found.push(text.slice(start, end + 1));
    start = text.indexOf("{", end + 1);
  }
  return found;
}

const parseError = (error: unknown) => (error as Error).message.split("\n")[0];

/** The JSON a reply holds, or what is wrong with it. */
export function extractJson(reply: string): { json: unknown } | { problem: string } {
  if (reply.trim() === "") return { problem: "the reply was empty" };
  const fenced = [...reply.matchAll(/```json[^\n]*\n([\s\S]*?)```/gi)];
  const last = fenced.at(-1)?.[1];
  if (last !== undefined) {
    try {
      return { json: JSON.parse(last) };
    } catch (error) {
      return { problem: `the last \`\`\`json block is not valid JSON (${parseError(error)})` };
    }
  }
  const candidates = balancedObjects(reply);
  for (const candidate of candidates) {
    try {
      return { json: JSON.parse(candidate) };
    } catch {
      // Braces in the reasoning; try the next object.
    }
  }
  if (candidates.length > 0) {
    return { problem: "no JSON object in the reply parses (and there is no ```json block)" };
  }
  return { problem: "the reply holds no JSON object in a ```json block" };
}

/** The plan in a reply, or what is wrong with it (one line). */
export function readPlan(reply: string): { plan: Plan } | { problem: string } {
  const extracted = extractJson(reply);
  if ("problem" in extracted) return extracted;
  const parsed = planSchema.safeParse(extracted.json);
  if (parsed.success) return { plan: parsed.data };
  const issues = parsed.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "the JSON";
    return `${where}: ${issue.message}`;
  });
  return { problem: `the JSON does not fit the format: ${issues.join("; ")}` };
}

function correction(problem: string): string {
  return `Your reply could not be used: ${problem}. Answer again: give the JSON object with all \
five fields ("log_summarization", "potential_improvements" as a list of strings, \
"improvement_proposal", "implementation_suggestion", "problem_description") in a \`\`\`json block.`;
}

export interface DiagnoseOptions {
  model: Model;
  files: AgentFiles;
  target: Target;
  signal?: AbortSignal;
  maxAttempts?: number;
  logChars?: number;
}

export type Diagnosis =
  | { plan: Plan; usage: WorkUsage; attempts: number }
  | { plan: null; reason: string; usage: WorkUsage; attempts: number };

export async function diagnose(options: DiagnoseOptions): Promise<Diagnosis> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_DIAGNOSE_ATTEMPTS;
  const logChars = options.logChars ?? DEFAULT_LOG_CHARS;
  const messages: ChatMessage[] = [
    { role: "system", content: DIAGNOSE_SYSTEM_PROMPT },
    { role: "user", content: diagnosePrompt(options.files, options.target, logChars) },
  ];
  let usage = { ...NO_USAGE };
  let problem = "no attempt was made";
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const call = await completeCounted(options.model, { messages }, options.signal);
    usage = addUsage(usage, call.usage);
    const reading = readPlan(call.response.content);
    if ("plan" in reading) return { plan: reading.plan, usage, attempts: attempt };
    problem =
      call.response.finishReason === "length"
        ? `${reading.problem} (the reply was cut off at the length limit: be briefer)`
        : reading.problem;
    messages.push(
      { role: "assistant", content: call.response.content || EMPTY_REPLY_PLACEHOLDER },
      { role: "user", content: correction(problem) },
    );
  }
  return {
    plan: null,
    reason: `no usable plan after ${maxAttempts} attempts: ${problem}`,
    usage,
    attempts: maxAttempts,
  };
}
