/**
 * The tool-call syntax: `Action: <tool> with Action Input: <JSON object>`. Parsing forgives
 * common LLM formatting: a leading thought, a missing "Action:", a newline instead of " with ",
 * a ```json fence around the input and text after the JSON object.
 */
import { clipText as clip } from "../echo.js";

export interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
}

export type ParsedAction = { ok: true; call: ToolCall } | { ok: false; error: string };

export const ACTION_FORMAT = 'Action: <tool> with Action Input: {"arg": "value", ...}';

const INPUT_MARKER = /Action Input:/i;
const TOOL_NAME = /^[A-Za-z_][\w-]*$/;
const isNameChar = (char: string | undefined) => char !== undefined && /[\w-]/.test(char);

export function formatAction(call: ToolCall): string {
  return `Action: ${call.tool} with Action Input: ${JSON.stringify(call.args)}`;
}

/**
 * The tool named just before "Action Input:", after an optional "Action:" and before an
 * optional "with". Scanned by hand: an unanchored regex over the whole text backtracks
 * quadratically on long words.
 */
function toolBefore(prefix: string): string | undefined {
  let end = prefix.trimEnd().length;
  const lastWord = prefix.slice(Math.max(0, end - 5), end);
  if (/^\swith$/i.test(lastWord)) end = prefix.slice(0, end - 4).trimEnd().length;
  let start = end;
  while (start > 0 && isNameChar(prefix[start - 1])) start--;
  const tool = prefix.slice(start, end);
  return TOOL_NAME.test(tool) ? tool : undefined;
}

/** Index just past the JSON object starting at `start` (a "{"), or -1 when it never closes. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if (char === "{") {
      depth++;
    } else if (char === "}") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/**
 * The JSON text of the Action Input: the first complete object, with any ```json fence and
 * trailing text dropped. Anything else is returned (up to a closing fence) for JSON.parse to
 * reject with its own message.
 */
export function extractJson(input: string): string {
  const body = input
    .trimStart()
    .replace(/^```[A-Za-z]*/, "")
    .trimStart();
  if (body.startsWith("{")) {
    const end = objectEnd(body, 0);
    if (end > 0) return body.slice(0, end);
  }
  const fence = body.indexOf("```");
  return (fence < 0 ? body : body.slice(0, fence)).trim();
}

export function parseAction(text: string): ParsedAction {
  const marker = INPUT_MARKER.exec(text);
  const tool = marker ? toolBefore(text.slice(0, marker.index)) : undefined;
  if (!marker || tool === undefined) {
    return { ok: false, error: `could not parse the action; write it as: ${ACTION_FORMAT}` };
  }
  let args: unknown;
  try {
    args = JSON.parse(extractJson(text.slice(marker.index + marker[0].length)));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `Action Input is not valid JSON (${clip(reason, 120)})` };
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { ok: false, error: "Action Input must be a JSON object, e.g. {} for no arguments" };
  }
  return { ok: true, call: { tool, args: args as Record<string, unknown> } };
}
