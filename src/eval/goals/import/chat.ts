/**
 * OpenAI chat JSONL: one JSON object per line, `{"messages": [{role, content, tool_calls?,
 * tool_call_id?}], "id"?, "metadata"?}`, as `clade export --format chat` and `clade rollouts
 * --format chat` write it (their extra keys are passed by) and as chat logs and fine-tuning
 * files hold it. Roles: system and developer (the system prompt), user, assistant (with
 * `tool_calls`, or legacy `function_call`), tool and legacy function (results).
 */

import { z } from "zod";
import type { Conversation } from "../conversation.js";
import {
  type ChatRole,
  ConversationImportError,
  chatMessageSchema,
  checkUnique,
  groupTurns,
  jsonErrorMessage,
  parseWith,
  readText,
  toTurnMessage,
} from "./common.js";

const CHAT_ROLES: readonly ChatRole[] = [
  "system",
  "developer",
  "user",
  "assistant",
  "tool",
  "function",
];

const chatLineSchema = z.object({
  id: z
    .union([z.string().min(1), z.number()], { error: "expected a string or a number" })
    .optional(),
  messages: z.array(chatMessageSchema(CHAT_ROLES)),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** `line 3`, with the line's id when it has one, as errors and sources name a line. */
function lineRecord(n: number, value: unknown): string {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number"
    ? `line ${n} (id ${String(id)})`
    : `line ${n}`;
}

/**
 * Every line of a chat JSONL file, or the first problem as one line naming the file, the line
 * and the field. Blank lines are skipped; a line without an id gets `line-N`.
 */
export function parseChatJsonl(text: string, file: string): Conversation[] {
  const conversations: Conversation[] = [];
  const seen = new Map<string, string>();
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    const n = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new ConversationImportError(`${file}: line ${n}: ${jsonErrorMessage(error, raw)}`);
    }
    const record = lineRecord(n, value);
    const where = `${file}: ${record}`;
    const line = parseWith(chatLineSchema, value, where);
    const id = line.id === undefined ? `line-${n}` : String(line.id);
    checkUnique(seen, id, file, record, "id");
    const grouped = groupTurns(line.messages.map(toTurnMessage), where, "messages");
    conversations.push({
      id,
      source: { format: "chat", file, record },
      ...grouped,
      ...(line.metadata ? { metadata: line.metadata } : {}),
    });
  });
  if (conversations.length === 0) throw new ConversationImportError(`${file}: no lines`);
  return conversations;
}

export function readChatFile(path: string): Conversation[] {
  return parseChatJsonl(readText(path), path);
}
