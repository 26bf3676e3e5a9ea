/**
 * Conversation imports (issue 13): chat JSONL, τ-bench results, dialogue JSON and clade runs,
 * each all or nothing: the first problem throws one ConversationImportError line naming the
 * file (or run), the record and the field.
 */
import type { Conversation } from "../conversation.js";
import { parseChatJsonl } from "./chat.js";
import { type ImportOptions, readText } from "./common.js";
import { detectFormat, type FileFormat } from "./detect.js";
import { parseDialogues } from "./dialogues.js";
import { parseTauResults } from "./tau.js";

export { parseChatJsonl, readChatFile } from "./chat.js";
export { ConversationImportError, type ImportOptions } from "./common.js";
export { detectFormat, type FileFormat } from "./detect.js";
export { parseDialogues, readDialoguesFile } from "./dialogues.js";
export { importRun, RUN_STEP_INFO } from "./run.js";
export { parseTauResults, readTauFile } from "./tau.js";

/** A file's conversations in `format`, or in the format detectFormat finds. */
export function readConversations(
  path: string,
  format?: FileFormat,
  options: ImportOptions = {},
): Conversation[] {
  const text = readText(path);
  switch (format ?? detectFormat(path, text)) {
    case "chat":
      return parseChatJsonl(text, path);
    case "tau":
      return parseTauResults(text, path, options);
    case "dialogues":
      return parseDialogues(text, path);
  }
}
