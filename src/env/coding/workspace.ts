/**
 * A per-episode temporary directory holding the exercise's files, under the sandbox module's
 * clade-owned folder (removed at exit; left behind by a killed process, it is removed by the next
 * one). File names are flat (no directories); symbolic links and other non-regular files are
 * never read or written through. Tests run on a copy in the sandbox's sized tmpfs, copied back
 * afterwards, so what code under test writes here never exceeds the sandbox's workspace size.
 */
import {
  closeSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { createWorkspace } from "../../sandbox/index.js";

export const MAX_FILE_CHARS = 100_000;
export const MAX_FILES = 20;
const MAX_LISTED = 50;
export const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

export type FileResult = { ok: true; text: string } | { ok: false; error: string };
/** A file read, possibly only its beginning: `size` is the whole file's size in bytes. */
export type ReadResult = { ok: true; text: string; size: number } | { ok: false; error: string };

/** Workspaces not yet removed, so that a process exiting without close() leaves none behind. */
const liveRoots = new Set<string>();
let exitHookInstalled = false;

function removeLiveRoots(): void {
  for (const root of liveRoots) rmSync(root, { recursive: true, force: true });
  liveRoots.clear();
}

export class Workspace {
  private constructor(
    readonly root: string,
    private readonly readOnly: ReadonlySet<string>,
  ) {}

  /** A fresh directory holding `files`; `readOnly` names refuse writes. */
  static create(files: Readonly<Record<string, string>>, readOnly: readonly string[]): Workspace {
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once("exit", removeLiveRoots);
    }
    // A real path: in mode "none" the permission flags compare resolved paths.
    const root = createWorkspace("coding-");
    liveRoots.add(root);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
    return new Workspace(root, new Set(readOnly));
  }

  isReadOnly(name: string): boolean {
    return this.readOnly.has(name);
  }

  /** Regular files in the workspace, sorted by name. */
  list(): string[] {
    try {
      return readdirSync(this.root, { withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name)
        .sort()
        .slice(0, MAX_LISTED);
    } catch {
      return [];
    }
  }

  private regularFile(name: string): boolean {
    try {
      return lstatSync(join(this.root, name)).isFile();
    } catch {
      return false;
    }
  }

  private exists(name: string): boolean {
    try {
      lstatSync(join(this.root, name));
      return true;
    } catch {
      return false;
    }
  }

  /** At most `maxBytes` from the start of a file (code under test may have written huge ones). */
  read(name: string, maxBytes: number): ReadResult {
    if (!FILE_NAME.test(name) || !this.regularFile(name)) {
      return { ok: false, error: `there is no file named ${JSON.stringify(name)}` };
    }
    let fd: number | undefined;
    try {
      fd = openSync(join(this.root, name), "r");
      const size = fstatSync(fd).size;
      const buffer = Buffer.alloc(Math.min(size, maxBytes));
      const read = readSync(fd, buffer, 0, buffer.length, 0);
      return { ok: true, text: buffer.subarray(0, read).toString("utf8"), size };
    } catch {
      return { ok: false, error: `${name} could not be read` };
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  write(name: string, text: string): FileResult {
    if (!FILE_NAME.test(name)) {
      return {
        ok: false,
        error:
          "file names may use letters, digits, '_', '-' and '.', must not start with '.' and " +
          "cannot contain directories",
      };
    }
    if (this.readOnly.has(name)) return { ok: false, error: `${name} is read-only` };
    if (text.length > MAX_FILE_CHARS) {
      return { ok: false, error: `the content is too long (at most ${MAX_FILE_CHARS} characters)` };
    }
    if (this.exists(name) && !this.regularFile(name)) {
      return { ok: false, error: `${name} is not a regular file` };
    }
    if (!this.exists(name) && this.list().length >= MAX_FILES) {
      return { ok: false, error: `the workspace already holds ${MAX_FILES} files` };
    }
    try {
      writeFileSync(join(this.root, name), text);
      return { ok: true, text };
    } catch {
      return { ok: false, error: `${name} could not be written` };
    }
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
    liveRoots.delete(this.root);
  }
}
