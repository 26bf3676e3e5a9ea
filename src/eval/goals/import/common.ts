/**
 * What every import shares: the one-line error, zod issues as `path: problem`, JSON text with
 * positions as line and column, chat messages (OpenAI's shape, as τ-bench and chat JSONL use it)
 * and their grouping into turns.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import {
  type ConversationToolCall,
  type ConversationToolResult,
  type ConversationTurn,
  type GroundTruthLabel,
  turnQualitySchema,
} from "../conversation.js";

/**
 * A file or run that cannot be imported. The message is one line naming the file, the record
 * and the field: `tau.json: record 3 (task_id 12): traj.4.role: expected one of ...`.
 */
export class ConversationImportError extends Error {
  override name = "ConversationImportError";
}

/**
 * Told about each record an import left out on purpose (errored runs and episodes), once the
 * whole import has succeeded: a failed import reports nothing but its error.
 */
export interface ImportOptions {
  onSkip?: (record: string, reason: string) => void;
}

/** Skips noted while parsing, reported after (ImportOptions.onSkip). */
export class Skips {
  private readonly noted: { record: string; reason: string }[] = [];
  note(record: string, reason: string): void {
    this.noted.push({ record, reason: reason.replace(/\s+/g, " ").trim() });
  }
  report(options: ImportOptions): void {
    for (const { record, reason } of this.noted) options.onSkip?.(record, reason);
  }
}

/** The file's text, without a byte-order mark; a read failure is one line naming the file. */
export function readText(path: string): string {
  try {
    // Editors on Windows save UTF-8 with a BOM, which JSON.parse rejects.
    return readFileSync(path, "utf8").replace(/^\uFEFF/, "");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConversationImportError(`cannot read ${path}: ${code ?? (error as Error).message}`);
  }
}

/** Whitespace collapsed: V8 quotes the offending text, newlines included, in JSON errors. */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** JSON.parse's message, with the position also given as line and column of `text`. */
export function jsonErrorMessage(error: unknown, text: string): string {
  const message = oneLine((error as Error).message);
  const position = /at position (\d+)/.exec(message)?.[1];
  if (position === undefined) return `not JSON: ${message}`;
  const before = text.slice(0, Number(position));
  const column = Number(position) - before.lastIndexOf("\n");
  // A JSONL line is named by the caller; a whole file's position needs its line.
  if (!text.includes("\n")) return `not JSON: ${message} (column ${column})`;
  return `not JSON: ${message} (line ${before.split("\n").length}, column ${column})`;
}

/** Parses a whole file's JSON or throws the one line `file: not JSON: ...`. */
export function parseJsonFile(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConversationImportError(`${file}: ${jsonErrorMessage(error, text)}`);
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** The first zod issue as `path.to.field: problem`, under `prefix` (a path the caller knows). */
export function firstIssue(error: z.ZodError, prefix: readonly (string | number)[] = []): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const path = [...prefix, ...issue.path.map(String)].join(".");
  let problem = issue.message;
  if (issue.code === "invalid_value") {
    problem = `expected one of ${issue.values.map(String).join(", ")}`;
  } else if (issue.code === "too_small" && issue.origin === "string" && issue.minimum === 1) {
    problem = "must not be empty";
  } else if (issue.code === "invalid_type") {
    problem =
      issue.input === undefined
        ? "missing"
        : // zod names a string-keyed record "record"; to a file's author it is an object.
          `expected ${issue.expected === "record" ? "object" : issue.expected}, got ${describe(issue.input)}`;
  }
  return path === "" ? problem : `${path}: ${problem}`;
}

/** Validates `value`, or throws `where: path: problem`. */
export function parseWith<T>(
  schema: z.ZodType<T>,
  value: unknown,
  where: string,
  prefix: readonly (string | number)[] = [],
): T {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new ConversationImportError(`${where}: ${firstIssue(result.error, prefix)}`);
}

/** Throws the one line for a problem zod does not see (grouping, duplicates). */
export function fail(where: string, field: string, problem: string): never {
  throw new ConversationImportError(`${where}: ${field}: ${problem}`);
}

// ---- Chat messages ---------------------------------------------------------------------------

/**
 * Content as OpenAI takes it: text, null (an assistant message that only calls tools), or parts,
 * of which the text ones are read and the others (images, audio) named in brackets.
 */
const contentPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });
const contentSchema = z
  .union([z.string(), z.null(), z.array(contentPartSchema)], {
    error: "expected a string, null or an array of content parts",
  })
  .optional();

const toolCallInSchema = z.object({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.object({
    name: z.string(),
    // OpenAI sends a JSON string; some logs keep the parsed object.
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())], {
      error: "expected a JSON string or an object",
    }),
  }),
});

/** Legacy function calling (`function_call` on the assistant, role `function` for results). */
const functionCallInSchema = z.object({
  name: z.string(),
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())], {
    error: "expected a JSON string or an object",
  }),
});

export type ChatRole = "system" | "developer" | "user" | "assistant" | "tool" | "function";

/** A schema for one chat message whose role is one of `roles`. */
export function chatMessageSchema(roles: readonly ChatRole[]) {
  return z
    .object({
      role: z.enum(roles as [ChatRole, ...ChatRole[]]),
      content: contentSchema,
      name: z.string().optional(),
      tool_calls: z.array(toolCallInSchema).nullable().optional(),
      function_call: functionCallInSchema.nullable().optional(),
      tool_call_id: z.string().optional(),
    })
    .superRefine((message, ctx) => {
      if (message.role === "assistant") return;
      for (const field of ["tool_calls", "function_call"] as const) {
        const value = message[field];
        if (value !== undefined && value !== null && !(Array.isArray(value) && !value.length)) {
          ctx.addIssue({
            code: "custom",
            path: [field],
            message: `only assistant messages carry ${field}`,
          });
        }
      }
    });
}
export type ChatMessageIn = z.infer<ReturnType<typeof chatMessageSchema>>;

/** A message reduced to what turns are made of. */
export type TurnMessage =
  | { role: "system"; text: string }
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; toolCalls: ConversationToolCall[] }
  | { role: "tool"; result: ConversationToolResult };

export function contentText(content: ChatMessageIn["content"]): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  return content
    .map((part) => (part.type === "text" ? (part.text ?? "") : `[${part.type}]`))
    .join("\n");
}

const argumentsText = (value: string | Record<string, unknown>) =>
  typeof value === "string" ? value : JSON.stringify(value);

/** One validated chat message as a TurnMessage. */
export function toTurnMessage(message: ChatMessageIn): TurnMessage {
  const text = contentText(message.content);
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", text };
    case "user":
      return { role: "user", text };
    case "assistant": {
      const toolCalls: ConversationToolCall[] = (message.tool_calls ?? []).map((call) => ({
        ...(call.id !== undefined ? { id: call.id } : {}),
        name: call.function.name,
        arguments: argumentsText(call.function.arguments),
      }));
      if (message.function_call) {
        toolCalls.push({
          name: message.function_call.name,
          arguments: argumentsText(message.function_call.arguments),
        });
      }
      return { role: "assistant", text, toolCalls };
    }
    case "tool":
    case "function":
      return {
        role: "tool",
        result: {
          ...(message.tool_call_id !== undefined ? { tool_call_id: message.tool_call_id } : {}),
          ...(message.name !== undefined ? { name: message.name } : {}),
          content: text,
        },
      };
  }
}

export interface GroupedTurns {
  system?: string;
  opening?: string;
  turns: ConversationTurn[];
  closing?: string;
}

interface OpenTurn {
  user: string[];
  assistant: string[];
  toolCalls: ConversationToolCall[];
  toolResults: ConversationToolResult[];
}

const joined = (parts: readonly string[]) => parts.filter((p) => p !== "").join("\n\n");
const answered = (turn: OpenTurn) =>
  turn.assistant.length > 0 || turn.toolCalls.length > 0 || turn.toolResults.length > 0;

/**
 * Messages into turns (see conversation.ts for the rule). `field` names the message list in
 * errors (`messages`, `traj`). An empty conversation is an error: no user message, or none
 * the assistant answered; so are tool calls or results before the first user message, which
 * no turn could hold.
 */
export function groupTurns(
  messages: readonly TurnMessage[],
  where: string,
  field: string,
): GroupedTurns {
  const system: string[] = [];
  const opening: string[] = [];
  const open: OpenTurn[] = [];
  messages.forEach((message, i) => {
    const current = open.at(-1);
    switch (message.role) {
      case "system":
        system.push(message.text);
        return;
      case "user":
        if (current && !answered(current)) current.user.push(message.text);
        else open.push({ user: [message.text], assistant: [], toolCalls: [], toolResults: [] });
        return;
      case "assistant":
        if (!current) {
          if (message.toolCalls.length > 0) {
            fail(where, `${field}.${i}`, "a tool call before the first user message");
          }
          opening.push(message.text);
          return;
        }
        current.assistant.push(message.text);
        current.toolCalls.push(...message.toolCalls);
        return;
      case "tool":
        if (!current) fail(where, `${field}.${i}`, "a tool result before the first user message");
        current.toolResults.push(message.result);
        return;
    }
  });
  if (open.length === 0) fail(where, field, "no user message");
  let closing: string | undefined;
  const last = open.at(-1);
  if (last && !answered(last)) {
    open.pop();
    closing = joined(last.user);
  }
  if (open.length === 0) fail(where, field, "no user message is answered by the assistant");
  const turns = open.map((turn, i) => ({
    turn_number: i + 1,
    user: joined(turn.user),
    assistant: joined(turn.assistant),
    ...(turn.toolCalls.length > 0 ? { tool_calls: turn.toolCalls } : {}),
    ...(turn.toolResults.length > 0 ? { tool_results: turn.toolResults } : {}),
  }));
  return {
    ...(system.length > 0 ? { system: joined(system) } : {}),
    ...(opening.some((text) => text !== "") ? { opening: joined(opening) } : {}),
    turns,
    ...(closing !== undefined ? { closing } : {}),
  };
}

/**
 * Ids must be unique within an import: judging resumes by conversation id, so two records under
 * one id would be judged once. `seen` maps each id to the record that took it.
 */
export function checkUnique(
  seen: Map<string, string>,
  id: string,
  file: string,
  record: string,
  field: string,
): void {
  const earlier = seen.get(id);
  if (earlier !== undefined)
    fail(`${file}: ${record}`, field, `${JSON.stringify(id)} repeats ${earlier}`);
  seen.set(id, record);
}

// ---- Labels that come with the data ----------------------------------------------------------

/** One turn's label fields as a source gives them; `rcof` absent means null. */
export const labelFieldsSchema = z.object({
  is_new_goal: z.boolean(),
  quality: turnQualitySchema,
  rcof: z.string().min(1).nullable().optional(),
});
export type LabelFields = z.infer<typeof labelFieldsSchema>;

/**
 * Labels in turn order as ground truth, after the rules every source's labels follow: the first
 * turn starts a goal, and a successful turn has no root cause (a failed one may lack it: the
 * data did not say). `field(i, name)` names turn i's field in errors.
 */
export function groundTruthLabels(
  labels: readonly LabelFields[],
  where: string,
  field: (i: number, name: string) => string,
): GroundTruthLabel[] {
  return labels.map((label, i) => {
    if (i === 0 && !label.is_new_goal) {
      fail(where, field(i, "is_new_goal"), "the first turn always starts a goal");
    }
    const rcof = label.rcof ?? null;
    if (label.quality === "success" && rcof !== null) {
      fail(where, field(i, "rcof"), "a successful turn has no root cause (null or absent)");
    }
    return { turn_number: i + 1, is_new_goal: label.is_new_goal, quality: label.quality, rcof };
  });
}
