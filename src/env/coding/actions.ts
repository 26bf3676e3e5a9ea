/**
 * Parsing the coding environment's actions:
 *   view <file> | write <file> + content on the following lines | run tests | submit
 * Parsing looks at the first line only, except for write's content, so any input is cheap.
 */

export type CodingAction =
  | { kind: "view"; file: string }
  | { kind: "write"; file: string; content: string }
  | { kind: "run" }
  | { kind: "submit" }
  | { kind: "invalid"; error: string };

/** No valid command line other than write's is longer than this. */
const MAX_COMMAND_CHARS = 200;
const FENCE = /^\s*```/;
const RUN = /^run(?:\s+(?:the\s+)?(?:visible\s+)?tests?)?$/;
const SUBMIT = /^submit(?:\s+(?:the\s+)?solution)?$/;

const isQuote = (char: string | undefined) => char === '"' || char === "'" || char === "`";

/**
 * Strips surrounding quotes or backticks and trailing periods or colons from a word or line.
 * Index loops, not regex or repeated slicing, so long runs of these characters stay linear.
 */
function unquote(text: string): string {
  const trimmed = text.trim();
  let start = 0;
  let end = trimmed.length;
  while (start < end && isQuote(trimmed[start])) start++;
  while (
    end > start &&
    (isQuote(trimmed[end - 1]) || trimmed[end - 1] === "." || trimmed[end - 1] === ":")
  ) {
    end--;
  }
  return trimmed.slice(start, end).trim();
}

/** At most ~60 characters of the agent's input, for quoting it back. */
export function echo(text: string): string {
  const line = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return JSON.stringify(line);
}

/**
 * A file's content as written after `write <file>`: when its first non-blank line opens a ```
 * fence, the text inside the fence (up to the closing fence, or the end).
 */
export function unfence(content: string): string {
  const lines = content.split("\n");
  const open = lines.findIndex((line) => line.trim() !== "");
  if (open < 0 || !FENCE.test(lines[open] ?? "")) return content;
  const body = lines.slice(open + 1);
  const close = body.findIndex((line) => FENCE.test(line));
  const inside = close < 0 ? body : body.slice(0, close);
  return `${inside.join("\n")}\n`;
}

function parseWrite(args: string, rest: string | undefined): CodingAction {
  const match = /^(\S+)\s*(.*)$/.exec(args);
  if (!match) return { kind: "invalid", error: "write needs a file name: write <file>" };
  const file = unquote(match[1] as string);
  const sameLine = match[2] ?? "";
  if (rest === undefined && sameLine === "") {
    return {
      kind: "invalid",
      error: `write needs the new content on the lines after "write <file>" (file ${echo(file)})`,
    };
  }
  const content = sameLine === "" ? (rest ?? "") : `${sameLine}\n${rest ?? ""}`;
  return { kind: "write", file, content: unfence(content) };
}

export function parseAction(action: string): CodingAction {
  const text = action.includes("\r") ? action.replace(/\r\n?/g, "\n") : action;
  const start = text.search(/\S/);
  if (start < 0) return { kind: "invalid", error: "the action is empty" };
  const newline = text.indexOf("\n", start);
  const firstLine = newline < 0 ? text.slice(start) : text.slice(start, newline);
  const rest = newline < 0 ? undefined : text.slice(newline + 1);
  const head = firstLine.trim().replace(/^`+/, "");
  const space = head.search(/\s/);
  const verb = (space < 0 ? head : head.slice(0, space)).toLowerCase();
  const args = space < 0 ? "" : head.slice(space + 1).trim();

  if (verb === "write") return parseWrite(args, rest);
  if (head.length > MAX_COMMAND_CHARS) {
    return { kind: "invalid", error: `unknown action ${echo(firstLine.trim())}` };
  }
  if (verb === "view") {
    const file = unquote(args);
    if (file === "") return { kind: "invalid", error: "view needs a file name: view <file>" };
    return { kind: "view", file };
  }
  const command = unquote(head).toLowerCase().replace(/\s+/g, " ");
  if (RUN.test(command)) return { kind: "run" };
  if (SUBMIT.test(command)) return { kind: "submit" };
  return { kind: "invalid", error: `unknown action ${echo(firstLine.trim())}` };
}
