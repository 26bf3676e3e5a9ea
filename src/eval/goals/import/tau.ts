/**
 * τ-bench result files (sierra-research/tau-bench, `tau_bench/run.py`): one JSON array of
 * `EnvRunResult.model_dump()`, `{task_id, reward, info, traj, trial}`, one item per (task, trial).
 *
 * `traj` is the agent's message list. The tool-calling agent's: the system message (the domain's
 * policy, the "wiki"), the user simulator's first message, then assistant messages (litellm's
 * dump: `content`, null beside `tool_calls`, of which τ-bench keeps the first) each followed by
 * a `tool` message (`tool_call_id`, `name`, `content`) or by the user's next message; it ends
 * with the user's last message (`... ###STOP###`, kept as the conversation's `closing`) or a tool
 * result (a transfer to a human ends the episode). The ReAct and Act agents' (`--agent-strategy
 * react|act`; their system message holds `#Available tools`) are plain text: the assistant writes
 * `Action: {"name", "arguments"}` (`respond` with `arguments.content` is the reply to the user),
 * and tool outputs come back as user messages starting `API output: `; both are read as the
 * tool-calling agent's would be.
 *
 * Ground truth: one goal per conversation, succeeded iff τ-bench counts the reward as a success
 * (tauSuccess). A run that raised is stored by τ-bench with `traj: []` and `info.error`; like
 * clade's errored episodes it says nothing about the agent and is left out (ImportOptions.onSkip).
 */
import { z } from "zod";
import { type Conversation, type ConversationToolCall, tauSuccess } from "../conversation.js";
import {
  type ChatRole,
  ConversationImportError,
  chatMessageSchema,
  checkUnique,
  groupTurns,
  type ImportOptions,
  parseJsonFile,
  parseWith,
  readText,
  Skips,
  type TurnMessage,
  toTurnMessage,
} from "./common.js";

const TAU_ROLES: readonly ChatRole[] = ["system", "user", "assistant", "tool"];

const tauRecordSchema = z.object({
  // τ-bench's task ids are ints; strings are let through for τ-bench-style files of other tools.
  task_id: z.union([z.number().int(), z.string().min(1)], {
    error: "expected an integer or a string",
  }),
  reward: z.number(),
  info: z.record(z.string(), z.unknown()),
  traj: z.array(chatMessageSchema(TAU_ROLES)),
  trial: z.number().int().min(0),
});

/** The ReAct/Act agents' prompt: wiki + "\n#Available tools\n" + tools JSON + instruction. */
const REACT_MARKER = "\n#Available tools\n";
const RESPOND = "respond";
const API_OUTPUT = "API output: ";

/** A ReAct/Act reply: its action, parsed as τ-bench's ChatReActAgent parses it. */
function reactAssistant(text: string): TurnMessage & { role: "assistant" } {
  const action = (text.split("Action:").at(-1) ?? "").trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(action);
  } catch {
    // τ-bench's own fallback: the text after "Action:" is the reply.
    return { role: "assistant", text: action, toolCalls: [] };
  }
  const call = parsed as { name?: unknown; arguments?: unknown } | null;
  if (typeof call?.name !== "string" || call.arguments === undefined) {
    return { role: "assistant", text: action, toolCalls: [] };
  }
  if (call.name === RESPOND) {
    const content = (call.arguments as { content?: unknown } | null)?.content;
    return { role: "assistant", text: typeof content === "string" ? content : "", toolCalls: [] };
  }
  const toolCall: ConversationToolCall = {
    name: call.name,
    arguments: JSON.stringify(call.arguments),
  };
  return { role: "assistant", text: "", toolCalls: [toolCall] };
}

/** A ReAct/Act traj as the tool-calling agent's messages would have been. */
function fromReact(messages: readonly TurnMessage[]): TurnMessage[] {
  let pendingTool: string | undefined;
  return messages.map((message) => {
    if (message.role === "assistant") {
      const reply = reactAssistant(message.text);
      pendingTool = reply.toolCalls[0]?.name;
      return reply;
    }
    if (
      message.role === "user" &&
      pendingTool !== undefined &&
      message.text.startsWith(API_OUTPUT)
    ) {
      const name = pendingTool;
      pendingTool = undefined;
      return { role: "tool", result: { name, content: message.text.slice(API_OUTPUT.length) } };
    }
    pendingTool = undefined;
    return message;
  });
}

function recordName(index: number, value: unknown): string {
  const id = (value as { task_id?: unknown } | null)?.task_id;
  return typeof id === "number" || typeof id === "string"
    ? `record ${index} (task_id ${String(id)})`
    : `record ${index}`;
}

/** Every result of a τ-bench results file, or the first problem as one line. */
export function parseTauResults(
  text: string,
  file: string,
  options: ImportOptions = {},
): Conversation[] {
  const value = parseJsonFile(text, file);
  if (!Array.isArray(value)) {
    throw new ConversationImportError(
      `${file}: a τ-bench results file is one JSON array of {task_id, reward, info, traj, trial}`,
    );
  }
  if (value.length === 0) throw new ConversationImportError(`${file}: no records`);
  const seen = new Map<string, string>();
  const conversations: Conversation[] = [];
  const skips = new Skips();
  value.forEach((item: unknown, i) => {
    const record = recordName(i, item);
    const where = `${file}: ${record}`;
    const result = parseWith(tauRecordSchema, item, where);
    const error = result.info.error;
    if (result.traj.length === 0 && typeof error === "string") {
      skips.note(record, `τ-bench recorded an error: ${error}`);
      return;
    }
    const id = `${result.task_id}#${result.trial}`;
    checkUnique(seen, id, file, record, "task_id, trial");
    let messages = result.traj.map(toTurnMessage);
    const react = messages.some((m) => m.role === "system" && m.text.includes(REACT_MARKER));
    if (react) messages = fromReact(messages);
    conversations.push({
      id,
      source: { format: "tau", file, record },
      ...groupTurns(messages, where, "traj"),
      groundTruth: { kind: "outcome", reward: result.reward, success: tauSuccess(result.reward) },
      metadata: { task_id: result.task_id, trial: result.trial, info: result.info },
    });
  });
  if (conversations.length === 0) {
    throw new ConversationImportError(`${file}: every record is an errored run (empty traj)`);
  }
  skips.report(options);
  return conversations;
}

export function readTauFile(path: string, options: ImportOptions = {}): Conversation[] {
  return parseTauResults(readText(path), path, options);
}
