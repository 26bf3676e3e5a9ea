/**
 * How an environment whose untrusted code ran without the sandbox says so: its version ends in
 * `+sandbox-none` (stored with every run, shown on every report) and its description opens with
 * a warning. One marking for every environment that runs untrusted code (coding, blade).
 */
import { SANDBOX_MODE_VARIABLE, UNSANDBOXED_VERSION_SUFFIX } from "../sandbox/mode.js";
import type { EnvInfo } from "./types.js";

/** The metadata of `info` run unsandboxed; `what` names the code, e.g. "agent code". */
export function unsandboxedInfo(info: EnvInfo, what: string): EnvInfo {
  return {
    ...info,
    version: `${info.version}${UNSANDBOXED_VERSION_SUFFIX}`,
    description: `UNSANDBOXED (${SANDBOX_MODE_VARIABLE}=none): ${what} runs as a plain child process. ${info.description}`,
  };
}

/** The version `version` has under the sandbox: without the unsandboxed mark (the same data). */
export function sandboxedVersion(version: string): string {
  return version.replace(UNSANDBOXED_VERSION_SUFFIX, "");
}
