/**
 * How untrusted code runs: "bwrap" (the sandbox, the default) or "none" (a plain child process
 * with an empty environment and rlimits, no namespaces). "none" is never chosen for the user:
 * it takes `setDefaultSandboxMode("none")`, `CLADE_SANDBOX=none` or an explicit option, and
 * callers report it wherever the run is shown.
 */
export const SANDBOX_MODES = ["bwrap", "none"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** The environment variable that chooses the default mode. */
export const SANDBOX_MODE_VARIABLE = "CLADE_SANDBOX";

/** The build metadata an environment's version carries when its untrusted code ran unsandboxed. */
export const UNSANDBOXED_VERSION_SUFFIX = "+sandbox-none";

let override: SandboxMode | undefined;

export function isSandboxMode(value: unknown): value is SandboxMode {
  return typeof value === "string" && (SANDBOX_MODES as readonly string[]).includes(value);
}

/** The mode a string names; throws one line naming `source` for anything else. */
export function parseSandboxMode(value: string, source = SANDBOX_MODE_VARIABLE): SandboxMode {
  const trimmed = value.trim();
  if (isSandboxMode(trimmed)) return trimmed;
  throw new RangeError(
    `${source} must be "bwrap" (the sandbox) or "none" (no sandbox), got ${JSON.stringify(value)}`,
  );
}

/**
 * The mode untrusted code runs in unless a caller says otherwise: the last
 * `setDefaultSandboxMode`, else `CLADE_SANDBOX` (empty counts as unset), else "bwrap".
 */
export function defaultSandboxMode(): SandboxMode {
  if (override !== undefined) return override;
  const fromEnv = process.env[SANDBOX_MODE_VARIABLE];
  return fromEnv === undefined || fromEnv.trim() === "" ? "bwrap" : parseSandboxMode(fromEnv);
}

/** Sets the process-wide default (a CLI's `--sandbox` option); undefined restores the rule. */
export function setDefaultSandboxMode(mode?: SandboxMode): void {
  if (mode !== undefined && !isSandboxMode(mode)) parseSandboxMode(String(mode), "the mode");
  override = mode;
}
