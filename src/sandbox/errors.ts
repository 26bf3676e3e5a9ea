/** Errors of the sandbox module. Each message is one line a user can act on. */

/** A sandboxed run could not be set up (bad request, setup failure). */
export class SandboxError extends Error {
  override name = "SandboxError";
}

/**
 * The sandbox cannot run on this machine: bubblewrap is missing, too old, or cannot create
 * namespaces here. Never answered by running the code unsandboxed; only an explicit
 * `sandbox: "none"` does that.
 */
export class SandboxUnavailableError extends SandboxError {
  override name = "SandboxUnavailableError";
}
