/**
 * The format of a conversation file, for `--format` left out: `.jsonl` is chat JSONL; otherwise
 * the content decides: a JSON array of τ-bench results (`task_id`, `traj`), an object with
 * `dialogues`, or chat JSONL (a first line that is an object with `messages`). A clade store is
 * not a file format here: runs are imported by run id (`--format run`).
 */
import type { ConversationFormat } from "../conversation.js";
import { ConversationImportError } from "./common.js";

export type FileFormat = Exclude<ConversationFormat, "run">;

const SQLITE_HEADER = "SQLite format 3\u0000";

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export function detectFormat(path: string, text: string): FileFormat {
  const cannot = (why: string): never => {
    throw new ConversationImportError(
      `${path}: cannot tell its format (${why}); give --format chat, tau or dialogues`,
    );
  };
  if (text.startsWith(SQLITE_HEADER)) {
    cannot("a SQLite file: to read a clade run, give its run id with --format run");
  }
  if (path.toLowerCase().endsWith(".jsonl")) return "chat";
  const trimmed = text.trimStart();
  if (trimmed === "") cannot("it is empty");
  const whole = tryJson(trimmed);
  if (whole.ok) {
    const { value } = whole;
    if (Array.isArray(value)) {
      const first: unknown = value[0];
      if (isObject(first) && "task_id" in first && "traj" in first) return "tau";
      cannot("a JSON array whose first item is not a τ-bench result with task_id and traj");
    }
    if (isObject(value) && "dialogues" in value) return "dialogues";
    // One chat object on one line is a one-line JSONL file.
    if (isObject(value) && "messages" in value && !trimmed.trimEnd().includes("\n")) return "chat";
  }
  const newline = trimmed.indexOf("\n");
  const firstLine = (newline === -1 ? trimmed : trimmed.slice(0, newline)).trim();
  const line = tryJson(firstLine);
  if (line.ok && isObject(line.value) && "messages" in line.value) return "chat";
  return cannot(
    whole.ok
      ? "JSON, but neither a τ-bench array, an object with dialogues, nor chat lines"
      : "neither JSON nor JSON lines with messages",
  );
}
