/**
 * Reading the action out of a model reply. Deliberately plain: the action is the first line
 * after the last "Action:" in the reply.
 */

export type ParsedAction = { ok: true; action: string } | { ok: false; error: string };

const MARKER = "Action:";

/**
 * The action of a reply: the text after the LAST "Action:" (case-sensitive), trimmed, first
 * line only. When `available` lists actions, the action must be one of them exactly.
 */
export function parseAction(reply: string, available?: readonly string[]): ParsedAction {
  const at = reply.lastIndexOf(MARKER);
  if (at < 0) return { ok: false, error: `the reply has no "${MARKER}" line` };
  const rest = reply.slice(at + MARKER.length).trim();
  const action = (rest.split("\n")[0] ?? "").trim();
  if (action === "") return { ok: false, error: `nothing follows "${MARKER}"` };
  if (available && available.length > 0 && !available.includes(action)) {
    return { ok: false, error: `"${action}" is not one of the available actions` };
  }
  return { ok: true, action };
}
