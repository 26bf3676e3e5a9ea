/**
 * Host-side workspaces. Each process keeps its workspaces under one clade-owned folder,
 * `$TMPDIR/clade-sandbox-<uid>/<pid>-<start time>/`, removed when the process exits; a process
 * that was killed (kill -9) leaves its folder behind, and the next process to create a workspace
 * removes every folder whose process is gone. A workspace never grows past the sandbox's
 * workspace size: code writes only to the sandbox's sized tmpfs, and only what fits there is
 * copied back.
 *
 * Copying in and out: before a run the workspace's regular files are opened and their
 * descriptors handed to bwrap, which copies them into the sandbox's /work; after the run the
 * sandbox's /work, reached through a directory descriptor the parent opened while the sandbox
 * was alive, is mirrored back.
 * Symbolic links, devices, sockets and FIFOs are never copied either way.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxError } from "./errors.js";

/** Folders and files a workspace may hold, and how deep (a bound on copying either way). */
export const MAX_WORKSPACE_ENTRIES = 10_000;
export const MAX_WORKSPACE_DEPTH = 32;

let processDir: string | undefined;
let exitHookInstalled = false;

/** The clade-owned folder holding every process's workspaces (for this user). */
export function workspacesBase(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return join(realpathSync(tmpdir()), `clade-sandbox-${uid}`);
}

/** A process's start time in clock ticks since boot (from /proc), or undefined if it is gone. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19];
  } catch {
    return undefined;
  }
}

/** Creates the base folder (0700, ours, not a link) or checks the one that is there. */
function ensureBase(base: string): void {
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const info = lstatSync(base);
  const uid = typeof process.getuid === "function" ? process.getuid() : info.uid;
  if (!info.isDirectory() || info.uid !== uid || (info.mode & 0o077) !== 0) {
    throw new SandboxError(
      `${base} is not a private folder of this user (a link, another user's, or open to others); ` +
        "remove it and try again",
    );
  }
}

/**
 * Removes the workspace folders of processes that are gone (killed before they could clean up);
 * returns the folders removed. Runs by itself the first time a process creates a workspace.
 */
export function cleanupStaleWorkspaces(base = workspacesBase()): string[] {
  let entries: string[];
  try {
    entries = readdirSync(base);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of entries) {
    const match = /^(\d+)-(\d+)$/.exec(name);
    if (!match) continue;
    const [, pid, start] = match;
    if (processStartTime(Number(pid)) === start) continue; // still running
    const path = join(base, name);
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

function removeProcessDir(): void {
  if (processDir !== undefined) rmSync(processDir, { recursive: true, force: true });
}

/** This process's folder under the base, created (after a sweep of stale ones) on first use. */
function ownProcessDir(): string {
  if (processDir !== undefined) return processDir;
  const base = workspacesBase();
  ensureBase(base);
  cleanupStaleWorkspaces(base);
  const start = processStartTime(process.pid) ?? "0";
  const dir = join(base, `${process.pid}-${start}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  processDir = dir;
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", removeProcessDir);
  }
  return dir;
}

/** A new, empty workspace folder (real path) under this process's clade-owned folder. */
export function createWorkspace(prefix = "ws-"): string {
  if (!/^[A-Za-z0-9_.-]{0,32}$/.test(prefix)) {
    throw new SandboxError(`a workspace prefix may use letters, digits, '_', '.' and '-' only`);
  }
  return realpathSync(mkdtempSync(join(ownProcessDir(), prefix)));
}

/** Removes a workspace folder (and everything in it). */
export function removeWorkspace(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

export interface WorkspaceFile {
  /** Path relative to the workspace, with "/" between folders. */
  path: string;
  /** An open, read-only descriptor of the file, handed to bwrap, which reads it (`--file`). */
  fd: number;
  /** Permission bits (0o644 or 0o755). */
  mode: number;
}

export interface WorkspaceListing {
  /** Folders relative to the workspace, parents before children. */
  dirs: string[];
  files: WorkspaceFile[];
  bytes: number;
}

/** Closes the descriptors of a listing (once bwrap has its copies, or on failure). */
export function closeListing(listing: WorkspaceListing): void {
  for (const file of listing.files) {
    try {
      closeSync(file.fd);
    } catch {
      // Already closed.
    }
  }
  listing.files = [];
}

/**
 * The regular files and folders of a host workspace, each file opened (never through a link,
 * never a FIFO) for bwrap to copy into the sandbox. Throws a SandboxError, with every descriptor
 * closed, when they hold more than `maxBytes` (they could not fit) or too many entries.
 */
export function listWorkspace(root: string, maxBytes: number): WorkspaceListing {
  const listing: WorkspaceListing = { dirs: [], files: [], bytes: 0 };
  let entries = 0;
  const walk = (dir: string, relative: string, depth: number) => {
    if (depth > MAX_WORKSPACE_DEPTH) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (++entries > MAX_WORKSPACE_ENTRIES) {
        throw new SandboxError(`${root} holds more than ${MAX_WORKSPACE_ENTRIES} entries`);
      }
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        listing.dirs.push(path);
        walk(full, path, depth + 1);
      } else if (entry.isFile()) {
        const fd = openRegularFile(full);
        if (fd === undefined) continue;
        const info = fstatSync(fd);
        listing.files.push({ path, fd, mode: info.mode & 0o111 ? 0o755 : 0o644 });
        listing.bytes += info.size;
        if (listing.bytes > maxBytes) {
          throw new SandboxError(
            `${root} holds more than the sandbox's workspace size (${maxBytes} bytes)`,
          );
        }
      }
    }
  };
  try {
    walk(root, "", 0);
  } catch (error) {
    closeListing(listing);
    throw error;
  }
  return listing;
}

/** A read-only descriptor of a regular file (not through a link, not a FIFO), or undefined. */
function openRegularFile(path: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (fstatSync(fd).isFile()) return fd;
  } catch {
    // Fall through: not usable.
  }
  closeSync(fd);
  return undefined;
}

/**
 * A regular file's bytes (never through a link, never blocking on a FIFO), at most `limit`;
 * undefined when it is not a regular file or cannot be read.
 */
function readRegularFile(
  path: string,
  limit: number,
): { data: Buffer; mode: number; tooLarge: boolean } | undefined {
  const fd = openRegularFile(path);
  if (fd === undefined) return undefined;
  try {
    const info = fstatSync(fd);
    if (info.size > limit) return { data: Buffer.alloc(0), mode: info.mode, tooLarge: true };
    const data = Buffer.alloc(info.size);
    let offset = 0;
    while (offset < data.length) {
      const read = readSync(fd, data, offset, data.length - offset, offset);
      if (read === 0) break;
      offset += read;
    }
    return { data: data.subarray(0, offset), mode: info.mode, tooLarge: false };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

export interface SyncReport {
  /** Files written or replaced on the host. */
  written: number;
  /** Host entries removed because the sandbox no longer had them. */
  removed: number;
  /** Entries left out: links, devices, unreadable files, too deep or too many. */
  skipped: number;
}

/**
 * Mirrors the sandbox's finished /work (`source`, a path through the parent's directory
 * descriptor) into the host workspace `target`: regular files and folders are written where they
 * differ, host entries the sandbox no longer has are removed. Runs after every process of the
 * sandbox is gone, so nothing changes underneath; names come from untrusted code but cannot hold
 * "/", and host entries are never followed through links.
 */
export function syncBack(source: string, target: string, maxBytes: number): SyncReport {
  const report: SyncReport = { written: 0, removed: 0, skipped: 0 };
  let entries = 0;
  let bytes = 0;
  const walk = (from: string, to: string, depth: number) => {
    const wanted = new Set<string>();
    let names: string[];
    try {
      names = readdirSync(from);
    } catch {
      report.skipped++;
      return;
    }
    for (const name of names) {
      if (++entries > MAX_WORKSPACE_ENTRIES) {
        report.skipped++;
        continue;
      }
      const inside = join(from, name);
      const host = join(to, name);
      let info: ReturnType<typeof lstatSync>;
      try {
        info = lstatSync(inside);
      } catch {
        report.skipped++;
        continue;
      }
      if (info.isDirectory()) {
        if (depth >= MAX_WORKSPACE_DEPTH) {
          report.skipped++;
          continue;
        }
        wanted.add(name);
        const existing = lstatOrUndefined(host);
        if (existing && !existing.isDirectory()) removeHostEntry(host);
        if (!existing?.isDirectory()) mkdirSync(host, { mode: 0o755 });
        walk(inside, host, depth + 1);
      } else if (info.isFile()) {
        const file = readRegularFile(inside, maxBytes - bytes);
        if (file === undefined || file.tooLarge) {
          report.skipped++;
          continue;
        }
        bytes += file.data.length;
        wanted.add(name);
        const existing = lstatOrUndefined(host);
        if (existing?.isFile() && sameBytes(host, file.data)) continue;
        if (existing) removeHostEntry(host);
        writeFileSync(host, file.data, { mode: file.mode & 0o111 ? 0o755 : 0o644 });
        report.written++;
      } else {
        report.skipped++;
      }
    }
    for (const name of readdirSync(to)) {
      if (wanted.has(name)) continue;
      removeHostEntry(join(to, name));
      report.removed++;
    }
  };
  walk(source, target, 0);
  return report;
}

function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function removeHostEntry(path: string): void {
  const info = lstatOrUndefined(path);
  if (info === undefined) return;
  if (info.isDirectory()) rmSync(path, { recursive: true, force: true });
  else unlinkSync(path);
}

function sameBytes(path: string, data: Buffer): boolean {
  try {
    const info = lstatSync(path);
    if (info.size !== data.length) return false;
    return readFileSync(path).equals(data);
  } catch {
    return false;
  }
}
