/**
 * The blade environment's registration. The built-in definition serves clade's own datasets on
 * the embedded SQL engine; `bladeEnvDefinition` makes one for any folder of BLADE datasets
 * (`--blade-dir`) or runtime. Agents that need the task's data (the reference solver, the
 * naive baseline) find the source of a run's environment through `bladeSourceOf`.
 */
import { defaultSandboxMode } from "../../sandbox/mode.js";
import type { ActionSampler, EnvInfo, SamplingEnvDefinition } from "../types.js";
import { sandboxedVersion, unsandboxedInfo } from "../unsandboxed.js";
import { BladeEnv, bladeEnvInfo } from "./env.js";
import { requirePythonRuntime } from "./runtime/availability.js";
import type { RuntimeLimits, RuntimeName } from "./runtime/types.js";
import type { ScoringOptions } from "./score.js";
import { type BladeTaskSource, bladeTaskSource, OWN_DATASETS_DIR } from "./tasks.js";

const sources = new Map<string, BladeTaskSource>();
/** A source's key: the version without the unsandboxed mark (the same data either way). */
const key = (info: Pick<EnvInfo, "name" | "version">) =>
  `${info.name}@${sandboxedVersion(info.version)}`;

/** The metadata under the current sandbox mode: unsandboxed runs are marked in the version. */
function withSandboxMode(info: EnvInfo): EnvInfo {
  return defaultSandboxMode() === "none" ? unsandboxedInfo(info, "analysis code") : info;
}

/** The task source behind a blade environment's metadata (undefined for another env). */
export function bladeSourceOf(
  info: Pick<EnvInfo, "name" | "version">,
): BladeTaskSource | undefined {
  if (info.name !== "blade") return undefined;
  return sources.get(key(info));
}

const sampleBladeAction: ActionSampler = (random) => {
  const looks = ["SELECT * FROM df LIMIT 5", "SELECT count(*) FROM df", "DESCRIBE df"];
  return `run: ${looks[Math.floor(random() * looks.length)]}`;
};

export interface BladeEnvDefinitionOptions {
  /** A folder of BLADE datasets; clade's own when absent. */
  dir?: string;
  /** Default: sql for clade's own datasets, python for BLADE's. */
  runtime?: RuntimeName;
  limits?: Partial<RuntimeLimits>;
  scoring?: ScoringOptions;
}

/** A blade environment over a folder of datasets (read and checked now, once). */
export function bladeEnvDefinition(options: BladeEnvDefinitionOptions = {}): SamplingEnvDefinition {
  const source = bladeTaskSource(options.dir ?? OWN_DATASETS_DIR, options.runtime);
  const info = bladeEnvInfo(source, source.root === OWN_DATASETS_DIR);
  sources.set(key(info), source);
  return {
    get info() {
      return withSandboxMode(info);
    },
    create: () =>
      new BladeEnv({
        source,
        info: withSandboxMode(info),
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.scoring ? { scoring: options.scoring } : {}),
      }),
    sampleAction: sampleBladeAction,
  };
}

/** Throws RuntimeUnavailableError (one line) when the environment's runtime is not installed. */
export async function requireRuntime(info: Pick<EnvInfo, "name" | "version">): Promise<void> {
  if (bladeSourceOf(info)?.runtime === "python") await requirePythonRuntime();
}

let builtin: SamplingEnvDefinition | undefined;

/** The built-in blade environment: clade's own datasets on the embedded SQL engine. */
export function builtinBladeEnv(): SamplingEnvDefinition {
  builtin ??= bladeEnvDefinition();
  return builtin;
}

export { BladeEnv, bladeEnvInfo, parseBladeAction, taskText } from "./env.js";
export { type BladeTaskSource, bladeTaskSource, OWN_DATASETS_DIR, taskDataset } from "./tasks.js";
export { BLADE_INFO } from "./text.js";
