/** The tool-call syntax: `Action: <tool> with Action Input: <JSON object>`. */

export interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
}

export type ParsedAction = { ok: true; call: ToolCall } | { ok: false; error: string };

// Text before "Action:" (e.g. a thought) is tolerated; the JSON runs to the end of the text.
const ACTION = /Action:\s*([A-Za-z_][\w-]*)\s+with\s+Action Input:\s*([\s\S]*)$/;

export const ACTION_FORMAT = 'Action: <tool> with Action Input: {"arg": "value", ...}';

export function formatAction(call: ToolCall): string {
  return `Action: ${call.tool} with Action Input: ${JSON.stringify(call.args)}`;
}

export function parseAction(text: string): ParsedAction {
  const match = ACTION.exec(text);
  if (!match) {
    return { ok: false, error: `could not parse the action; write it as: ${ACTION_FORMAT}` };
  }
  const [, tool = "", input = ""] = match;
  let args: unknown;
  try {
    args = JSON.parse(input.trim());
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `Action Input is not valid JSON (${reason})` };
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { ok: false, error: "Action Input must be a JSON object, e.g. {} for no arguments" };
  }
  return { ok: true, call: { tool, args: args as Record<string, unknown> } };
}
