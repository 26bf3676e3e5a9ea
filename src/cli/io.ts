import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/** Where the CLI writes, injectable so commands can be tested in-process. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is an interactive terminal (progress bars only then). */
  interactive: boolean;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  interactive: Boolean(process.stderr.isTTY),
};

/**
 * Exit codes beyond 0 (everything finished) and 2 (bad input), shared by the commands that run
 * stored work (`clade eval`, `clade goals`) and documented in the README, so that scripts and CI
 * can tell outcomes apart.
 */
export const EXIT = {
  badInput: 2,
  budget: 3,
  someErrored: 4,
  allErrored: 5,
  failFast: 6,
} as const;

/** Bad input from the user: one line on stderr and exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * A server that failed to start (a port in use, an address this machine does not have): the
 * user's to fix, in one line.
 */
export function startupUsageError(error: unknown): UsageError {
  return new UsageError((error as Error).message.split("\n")[0] ?? String(error));
}

/** Resolves on the first SIGINT or SIGTERM: how the serving commands wait to stop. */
export function untilStopped(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}

/** The store every command uses unless --db (or CLADE_DB) says otherwise. */
export const DEFAULT_DB = ".clade/clade.db";

/** Whether the command line asks for JSON: `--json` anywhere before a `--` terminator. */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/**
 * An error as `--json` reports it on stderr: one clade.error/1 line (docs/cli-json.md). `kind`
 * is "usage" for bad input (exit code 2) and "internal" for a bug in clade (exit code 1).
 */
export function errorJson(
  kind: "usage" | "run" | "internal",
  name: string,
  message: string,
  stack?: string,
): string {
  const error = { kind, name, message, ...(stack === undefined ? {} : { stack }) };
  return `${JSON.stringify({ schema: "clade.error/1", error })}\n`;
}

/** sha256 of a file's bytes, hex: how stored configurations identify the files a run used. */
export function sha256OfFile(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}
