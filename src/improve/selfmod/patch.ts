/**
 * Agents as chains of patches: a node of the search is stored as the unified diffs that lead from
 * the root agent to it, and rebuilt by applying them in order (hgm.md, "How a self-modification
 * is made", step 4).
 *
 * `diffFiles` writes one git-style multi-file diff (`diff --git`, `new file mode` / `deleted file
 * mode`, `--- a/path` / `+++ b/path`, `/dev/null` for a side that does not exist), so a patch can
 * also be read by people and by `git apply`. `applyPatch` parses it with the `diff` package and
 * applies every hunk itself, exactly: each hunk must match at the line its header names, with no
 * fuzz and no search for another place. A chain that does not apply exactly means the stored tree
 * is corrupt, and that must fail loudly rather than build a slightly different agent.
 */
import { formatPatch, OMIT_HEADERS, parsePatch, type StructuredPatch, structuredPatch } from "diff";
import {
  AGENT_API_FILE,
  type AgentFiles,
  isAgentPath,
  sortedFiles,
} from "../../agent/folder/files.js";

/** Lines of context around each change, as git writes by default. */
const CONTEXT_LINES = 3;
const DEV_NULL = "/dev/null";
const FILE_MODE = "100644";
const NO_NEWLINE_MARKER = "\\";

/** A patch that is malformed or does not apply: one line naming the file and the hunk. */
export class PatchError extends Error {
  override name = "PatchError";
}

/**
 * A file name as a diff header writes it. Git quotes names with special characters; agent paths
 * have none (isAgentPath), but a name that ends in a space would lose it to the parser's trim.
 */
function headerName(prefix: "a/" | "b/", path: string): string {
  const name = prefix + path;
  return /\s$/.test(name) ? `"${name}"` : name;
}

/** The hunks of one file's change, without headers. */
function hunksText(path: string, before: string, after: string): string {
  const patch = structuredPatch(path, path, before, after, undefined, undefined, {
    context: CONTEXT_LINES,
  });
  if (patch.hunks.length === 0) return "";
  return formatPatch(patch, OMIT_HEADERS);
}

function fileDiff(path: string, before: string | undefined, after: string | undefined): string {
  const lines = [`diff --git ${headerName("a/", path)} ${headerName("b/", path)}`];
  if (before === undefined) lines.push(`new file mode ${FILE_MODE}`);
  if (after === undefined) lines.push(`deleted file mode ${FILE_MODE}`);
  const hunks = hunksText(path, before ?? "", after ?? "");
  // Like git: an empty file added or removed has headers and no hunks.
  if (hunks !== "") {
    lines.push(`--- ${before === undefined ? DEV_NULL : headerName("a/", path)}`);
    lines.push(`+++ ${after === undefined ? DEV_NULL : headerName("b/", path)}`);
  }
  return `${lines.join("\n")}\n${hunks}`;
}

/**
 * One unified diff from `before` to `after`, files in sorted order; "" when they are equal.
 * The agent API file is clade's, never the agent's: it is never part of a patch.
 */
export function diffFiles(before: AgentFiles, after: AgentFiles): string {
  const paths = [...new Set([...before.keys(), ...after.keys()])]
    .filter((path) => path !== AGENT_API_FILE)
    .sort();
  let patch = "";
  for (const path of paths) {
    const a = before.get(path);
    const b = after.get(path);
    if (a !== b) patch += fileDiff(path, a, b);
  }
  return patch;
}

/** A file's text as lines, and whether its last line ends with a newline. */
interface Lines {
  lines: string[];
  finalNewline: boolean;
}

function toLines(text: string): Lines {
  if (text === "") return { lines: [], finalNewline: true };
  const lines = text.split("\n");
  const finalNewline = lines.at(-1) === "";
  if (finalNewline) lines.pop();
  return { lines, finalNewline };
}

function fromLines({ lines, finalNewline }: Lines): string {
  if (lines.length === 0) return "";
  return lines.join("\n") + (finalNewline ? "\n" : "");
}

type Hunk = StructuredPatch["hunks"][number];

function hunkHeader(hunk: Hunk): string {
  // parsePatch adds one to a start whose count is 0; show the header as it was written.
  const oldStart = hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart;
  const newStart = hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart;
  return `@@ -${oldStart},${hunk.oldLines} +${newStart},${hunk.newLines} @@`;
}

const clip = (line: string) => JSON.stringify(line.length > 60 ? `${line.slice(0, 60)}…` : line);

/** Applies one file's hunks exactly; throws a PatchError naming the file and the hunk. */
function applyHunks(path: string, text: string, hunks: readonly Hunk[]): string {
  const source = toLines(text);
  const old = source.lines;
  const out: string[] = [];
  let position = 0; // the next line of `old` not yet copied
  let finalNewline = source.finalNewline;
  hunks.forEach((hunk, h) => {
    const fail = (what: string): never => {
      throw new PatchError(`${path}: hunk ${h + 1} (${hunkHeader(hunk)}): ${what}`);
    };
    const start = hunk.oldStart - 1;
    if (start < position) fail("overlaps the hunk before it or is out of order");
    if (start > old.length) fail(`starts past the end of the file (${old.length} lines)`);
    out.push(...old.slice(position, start));
    if (hunk.newStart - 1 !== out.length)
      fail("its new start does not follow from the hunks before it");
    let at = start;
    // A "\ No newline at end of file" marker speaks of the line before it: of the old file's
    // last line after "-", the new file's after "+", both after " ".
    let previous = "";
    let oldMarked = false;
    let newMarked = false;
    for (const line of hunk.lines) {
      const kind = line[0] ?? " ";
      const content = line.slice(1);
      if (kind === NO_NEWLINE_MARKER) {
        if (previous === "") fail("a no-newline marker before any line");
        if (previous !== "+") oldMarked = true;
        if (previous !== "-") newMarked = true;
        if (previous !== "+" && (at !== old.length || source.finalNewline)) {
          fail(`says line ${at} is the file's last, without a newline; it is not`);
        }
        continue;
      }
      previous = kind;
      if (kind === "+") {
        out.push(content);
        continue;
      }
      if (kind !== " " && kind !== "-") fail(`unexpected line ${clip(line)}`);
      if (at >= old.length) fail(`expects ${clip(content)} past the end of the file`);
      if (old[at] !== content) {
        fail(`line ${at + 1} is ${clip(old[at] as string)}, the patch expects ${clip(content)}`);
      }
      if (kind === " ") out.push(content);
      at++;
    }
    const reachesEnd = at === old.length;
    if (reachesEnd && at > start && !source.finalNewline && !oldMarked) {
      fail("the file's last line has no newline, and the hunk does not say so");
    }
    if (newMarked && !reachesEnd) fail("a no-newline marker in the middle of the file");
    finalNewline = reachesEnd ? !newMarked : source.finalNewline;
    position = at;
  });
  out.push(...old.slice(position));
  return fromLines({ lines: out, finalNewline });
}

/** The path a header names: without its a/ or b/ prefix; null for /dev/null. */
function headerPath(name: string | undefined, prefix: "a/" | "b/"): string | null {
  if (name === undefined || name === DEV_NULL) return null;
  if (!name.startsWith(prefix)) {
    throw new PatchError(`malformed patch: file name ${JSON.stringify(name)} lacks "${prefix}"`);
  }
  return name.slice(prefix.length);
}

function parse(patch: string): StructuredPatch[] {
  try {
    return parsePatch(patch);
  } catch (error) {
    throw new PatchError(`malformed patch: ${(error as Error).message}`);
  }
}

/**
 * Applies a multi-file patch (as diffFiles writes it) to `files`: every hunk exactly, files added
 * and removed. Throws a PatchError on a malformed patch or one that does not apply.
 */
export function applyPatch(files: AgentFiles, patch: string): Map<string, string> {
  const result = new Map(files);
  if (patch.trim() === "") return sortedFiles(result);
  const touched = new Set<string>();
  for (const entry of parse(patch)) {
    if (entry.oldFileName === undefined && entry.newFileName === undefined) {
      throw new PatchError("malformed patch: a part without file names");
    }
    if (entry.isBinary) throw new PatchError("malformed patch: binary changes are not supported");
    const from = entry.isCreate ? null : headerPath(entry.oldFileName, "a/");
    const to = entry.isDelete ? null : headerPath(entry.newFileName, "b/");
    const path = (to ?? from) as string;
    if (from === null && to === null)
      throw new PatchError("malformed patch: /dev/null to /dev/null");
    if (from !== null && to !== null && from !== to) {
      throw new PatchError(`${from}: renames are not supported (to ${to})`);
    }
    if (!isAgentPath(path)) throw new PatchError(`${path}: not an acceptable file path`);
    if (path === AGENT_API_FILE) {
      throw new PatchError(`${path}: the agent API file is clade's and cannot be patched`);
    }
    if (touched.has(path)) throw new PatchError(`${path}: changed twice in one patch`);
    touched.add(path);
    const current = result.get(path);
    if (from === null && current !== undefined) throw new PatchError(`${path}: added, but exists`);
    if (from !== null && current === undefined) throw new PatchError(`${path}: no such file`);
    const text = applyHunks(path, current ?? "", entry.hunks);
    if (to === null) {
      if (text !== "") throw new PatchError(`${path}: removed, but the patch leaves text in it`);
      result.delete(path);
    } else {
      result.set(path, text);
    }
  }
  return sortedFiles(result);
}

/** Rebuilds a node's files: the root's with its chain of patches applied in order. */
export function materialise(root: AgentFiles, chain: readonly string[]): Map<string, string> {
  let files = sortedFiles(root);
  chain.forEach((patch, i) => {
    try {
      files = applyPatch(files, patch);
    } catch (error) {
      if (!(error instanceof PatchError)) throw error;
      throw new PatchError(`patch ${i + 1} of ${chain.length}: ${error.message}`);
    }
  });
  return files;
}
