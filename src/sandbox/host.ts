/**
 * What the sandbox needs from the host, found once per process: the bubblewrap binary and its
 * version, `/bin/sh` and `prlimit` (which run inside, before the command), and the shared
 * libraries of every binary bound into the sandbox (from `ldd`), so that only those files are
 * visible inside, never whole system folders.
 */
import { execFileSync } from "node:child_process";
import {
  accessSync,
  constants,
  existsSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
} from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { SandboxError } from "./errors.js";

/** Folders searched for libraries when `ldd` is missing: bound whole, read-only, instead. */
const LIBRARY_DIRS = ["/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64", "/usr/lib32"];

/** The absolute path of an executable on PATH (or the given absolute path), if any. */
export function findExecutable(
  name: string,
  extraDirs: readonly string[] = [],
): string | undefined {
  const candidates = isAbsolute(name)
    ? [name]
    : [...(process.env.PATH ?? "").split(delimiter), ...extraDirs]
        .filter((dir) => dir !== "")
        .map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there, or not executable: the next one.
    }
  }
  return undefined;
}

/** Version of bubblewrap as [major, minor, patch] from `bwrap --version`. */
export function bwrapVersion(bwrap: string): [number, number, number] | undefined {
  try {
    const text = execFileSync(bwrap, ["--version"], {
      encoding: "utf8",
      timeout: 5000,
      stdio: ["ignore", "pipe", "ignore"],
    });
    const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
    if (!match) return undefined;
    return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
  } catch {
    return undefined;
  }
}

const librariesCache = new Map<string, string[]>();
let lddPath: string | null | undefined;

/**
 * The shared libraries a host binary loads (its dynamic loader included), as absolute paths, from
 * `ldd`; [] for a static binary or a script. Only ever run on trusted host binaries (ldd may
 * execute what it inspects). Without ldd, the standard library folders instead.
 */
export function librariesOf(binary: string): string[] {
  const cached = librariesCache.get(binary);
  if (cached) return cached;
  if (lddPath === undefined) lddPath = findExecutable("ldd", ["/usr/bin", "/bin"]) ?? null;
  let libraries: string[];
  if (lddPath === null) {
    libraries = LIBRARY_DIRS.filter((dir) => existsSync(dir));
  } else {
    let text: string;
    try {
      text = execFileSync(lddPath, [binary], {
        encoding: "utf8",
        timeout: 10_000,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      // "not a dynamic executable" (static binaries, scripts): nothing to bind.
      const output = String((error as { stdout?: unknown }).stdout ?? "");
      const stderr = String((error as { stderr?: unknown }).stderr ?? "");
      if (/not a dynamic executable|statically linked/i.test(output + stderr)) {
        librariesCache.set(binary, []);
        return [];
      }
      throw new SandboxError(
        `could not list the libraries of ${binary} with ldd: ${firstLine(stderr) || String(error)}`,
      );
    }
    libraries = [];
    for (const line of text.split("\n")) {
      if (/=>\s*not found/.test(line)) {
        throw new SandboxError(`${binary} needs a library that is missing: ${line.trim()}`);
      }
      const match = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(0x/.exec(line);
      if (match?.[1]) libraries.push(match[1]);
    }
  }
  librariesCache.set(binary, libraries);
  return libraries;
}

/** The real path of a host file, or the path itself when it cannot be resolved. */
export function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((line) => line.trim())
      .find((line) => line !== "") ?? ""
  );
}

/** O_CLOEXEC as /proc/<pid>/fdinfo prints it (octal flags). */
const O_CLOEXEC = 0o2000000;

/**
 * This process's descriptors (3 and up) without close-on-exec: inherited from whoever started
 * clade, they would pass into every child, sandbox included (neither Node nor bwrap closes them).
 * The sandbox covers each with /dev/null in the child.
 */
export function inheritableFds(): number[] {
  let names: string[];
  try {
    names = readdirSync("/proc/self/fd");
  } catch {
    return [];
  }
  const fds: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3) continue;
    try {
      const flags = /flags:\s*([0-7]+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"));
      if (flags?.[1] !== undefined && (Number.parseInt(flags[1], 8) & O_CLOEXEC) === 0) {
        fds.push(fd);
      }
    } catch {
      // Closed meanwhile (the listing's own descriptor, for one).
    }
  }
  return fds.sort((a, b) => a - b);
}
