/**
 * Agent folders as data: an agent is a folder of TypeScript (an entry module exporting a clade
 * agent factory, its prompts and tools, its own tests) described by `clade-agent.json`. clade
 * reads a folder into an `AgentFiles` map (relative path → text) once, and from then on works on
 * the map: it hashes it (the agent's identity), copies it into sandbox workspaces, diffs it
 * (self-modifications are unified diffs, src/improve/selfmod) and writes it out (`clade best
 * --out`). Folders are untrusted input: only regular UTF-8 text files are read, no links, within
 * bounds of count and size.
 */
import { createHash } from "node:crypto";
import {
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";

/** An agent folder's files: relative POSIX path → UTF-8 text, sorted by path. */
export type AgentFiles = ReadonlyMap<string, string>;

/** The manifest's name in every agent folder. */
export const AGENT_MANIFEST = "clade-agent.json";
/** The manifest's format tag. */
export const AGENT_FORMAT = "clade.agent/1";
/**
 * The agent API's type declarations (`declare module "clade-agent"`), written by clade into every
 * folder it checks or runs, over whatever the folder holds: the contract is clade's, not the
 * agent's to change.
 */
export const AGENT_API_FILE = "clade-agent.d.ts";

/** Bounds on what a folder may hold (it may have been written by a model). */
export const MAX_AGENT_FILES = 200;
export const MAX_AGENT_FILE_BYTES = 256 * 1024;
export const MAX_AGENT_BYTES = 2 * 1024 * 1024;

/** Folders never read into an agent: installed packages, VCS data, build output. */
const SKIPPED_DIRS = new Set(["node_modules", ".git", "dist", "coverage"]);

/**
 * A relative path an agent file may have: POSIX, no "." or ".." parts, no leading "/" and no
 * empty part ("a//b" would name the same file as "a/b"), sane chars.
 */
const PATH_PATTERN = /^(?!\/)(?!.*\/\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[A-Za-z0-9._@+\- /]+$/;

export const agentManifestSchema = z.strictObject({
  format: z.literal(AGENT_FORMAT, { error: `must be "${AGENT_FORMAT}"` }),
  name: z
    .string({ error: "must be a string" })
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,59}$/, "use 1-60 letters, digits, . _ - (not first)"),
  /** The entry module, relative to the folder; its default export is the agent factory. */
  entry: z.string().regex(/\.(ts|mts|js|mjs)$/, "must be a .ts, .mts, .js or .mjs file"),
  /** The agent's own tests (node:test files), relative to the folder. */
  tests: z.array(z.string()).default([]),
  description: z.string().optional(),
});
export type AgentManifest = z.infer<typeof agentManifestSchema>;

/** A folder that is not a usable agent: one line naming the file and what is wrong. */
export class AgentFolderError extends Error {
  override name = "AgentFolderError";
}

/** Whether a relative path is one an agent file may have. */
export function isAgentPath(path: string): boolean {
  return path.length > 0 && path.length <= 200 && PATH_PATTERN.test(path) && !path.endsWith("/");
}

/** Throws an AgentFolderError unless `files` fits the bounds and every path is acceptable. */
export function checkAgentFiles(files: AgentFiles): void {
  if (files.size > MAX_AGENT_FILES) {
    throw new AgentFolderError(`an agent folder holds at most ${MAX_AGENT_FILES} files`);
  }
  let total = 0;
  for (const [path, text] of files) {
    if (!isAgentPath(path)) throw new AgentFolderError(`not an acceptable file path: ${path}`);
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_AGENT_FILE_BYTES) {
      throw new AgentFolderError(`${path} is larger than ${MAX_AGENT_FILE_BYTES} bytes`);
    }
    total += bytes;
  }
  if (total > MAX_AGENT_BYTES) {
    throw new AgentFolderError(`the agent's files add up to more than ${MAX_AGENT_BYTES} bytes`);
  }
}

/** The manifest of an agent, validated; throws an AgentFolderError naming the field. */
export function agentManifest(files: AgentFiles): AgentManifest {
  const text = files.get(AGENT_MANIFEST);
  if (text === undefined) throw new AgentFolderError(`no ${AGENT_MANIFEST} in the agent folder`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AgentFolderError(`${AGENT_MANIFEST} is not JSON: ${(error as Error).message}`);
  }
  const parsed = agentManifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "(top level)";
    throw new AgentFolderError(`${AGENT_MANIFEST}: ${where}: ${issue?.message ?? "invalid"}`);
  }
  const manifest = parsed.data;
  for (const path of [manifest.entry, ...manifest.tests]) {
    if (!files.has(path))
      throw new AgentFolderError(`${AGENT_MANIFEST} names ${path}: no such file`);
  }
  return manifest;
}

/** Sorted by path, so that equal folders give equal maps, hashes and diffs. */
export function sortedFiles(entries: Iterable<[string, string]>): Map<string, string> {
  return new Map([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Reads an agent folder: every regular file outside node_modules, .git, dist and coverage, as
 * UTF-8 text. Links, non-text files and anything past the bounds are refused with one line.
 */
export function readAgentFolder(dir: string): Map<string, string> {
  const entries: [string, string][] = [];
  let total = 0;
  const walk = (relative: string) => {
    let listing: Dirent[];
    try {
      listing = readdirSync(join(dir, relative), { withFileTypes: true });
    } catch (error) {
      throw new AgentFolderError(
        `cannot read the agent folder ${join(dir, relative)}: ${(error as Error).message}`,
      );
    }
    for (const entry of listing) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(path);
        continue;
      }
      if (!entry.isFile()) {
        throw new AgentFolderError(`${path} in the agent folder is not a regular file or folder`);
      }
      if (!isAgentPath(path)) throw new AgentFolderError(`not an acceptable file path: ${path}`);
      if (entries.length >= MAX_AGENT_FILES) {
        throw new AgentFolderError(`an agent folder holds at most ${MAX_AGENT_FILES} files`);
      }
      const size = lstatSync(join(dir, path)).size;
      if (size > MAX_AGENT_FILE_BYTES) {
        throw new AgentFolderError(`${path} is larger than ${MAX_AGENT_FILE_BYTES} bytes`);
      }
      total += size;
      if (total > MAX_AGENT_BYTES) {
        throw new AgentFolderError(
          `the agent's files add up to more than ${MAX_AGENT_BYTES} bytes`,
        );
      }
      const bytes = readFileSync(join(dir, path));
      const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
      if (text.includes("\u0000") || text.includes("\uFFFD")) {
        throw new AgentFolderError(`${path} is not UTF-8 text`);
      }
      entries.push([path, text]);
    }
  };
  try {
    if (!lstatSync(dir).isDirectory()) throw new Error("not a folder");
  } catch {
    throw new AgentFolderError(`the agent folder ${dir} does not exist or is not a folder`);
  }
  walk("");
  return sortedFiles(entries);
}

/**
 * Writes an agent's files into `dir`, which must not exist or be empty. Written into a sibling
 * folder first and renamed into place, so that a failure leaves nothing half-written.
 */
export function writeAgentFolder(dir: string, files: AgentFiles): void {
  checkAgentFiles(files);
  let existing: string[] = [];
  try {
    existing = readdirSync(dir);
  } catch (error) {
    // It does not exist: good. Anything else there (a file, a link) is not ours to replace.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new AgentFolderError(
        `${dir} exists and is not a readable folder; choose a new folder for the agent`,
      );
    }
  }
  if (existing.length > 0) {
    throw new AgentFolderError(`${dir} is not empty; choose a new folder for the agent`);
  }
  const staging = `${dir.replace(/\/+$/, "")}.writing-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  try {
    for (const [path, text] of files) {
      const target = join(staging, path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

/** Writes the files into an existing (empty, clade-owned) folder, e.g. a sandbox workspace. */
export function writeFilesInto(dir: string, files: AgentFiles): void {
  for (const [path, text] of files) {
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
}

/** sha256 over paths and contents: the agent's identity (a run of another agent is refused). */
export function agentFilesHash(files: AgentFiles): string {
  const hash = createHash("sha256");
  for (const [path, text] of sortedFiles(files)) {
    hash.update(`${path}\u0000${Buffer.byteLength(text)}\u0000`);
    hash.update(text);
  }
  return hash.digest("hex");
}
