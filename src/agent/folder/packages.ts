/**
 * The clade packages agent-folder code runs with (tsx to load TypeScript, typescript to check
 * it), found in clade's own node_modules: bound read-only at /node_modules/<name> inside the
 * sandbox, used from their host paths in mode "none" (where the workspace has no node_modules).
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  packageBinds,
  SANDBOX_NODE_MODULES,
  type SandboxBind,
  type SandboxMode,
} from "../../sandbox/index.js";
import { cladePackageRoot } from "./template.js";

/** A package's binds (it and its dependencies) and where it is, inside and on the host. */
export function packageBindsOf(name: string): {
  binds: SandboxBind[];
  main: Required<SandboxBind>;
} {
  const binds = packageBinds([name], cladePackageRoot());
  const target = `${SANDBOX_NODE_MODULES}/${name}`;
  const main = binds.find((bind) => bind.target === target);
  if (main === undefined) throw new Error(`no bind of ${name} at ${target}`);
  return { binds, main: { source: main.source, target } };
}

let tsx: ReturnType<typeof packageBindsOf> | undefined;

/** What `node --import <specifier>` needs to load TypeScript with tsx in this mode, and its binds. */
export function tsxImport(mode: SandboxMode): { specifier: string; binds: SandboxBind[] } {
  tsx ??= packageBindsOf("tsx");
  const specifier =
    mode === "none"
      ? pathToFileURL(createRequire(join(tsx.main.source, "package.json")).resolve("tsx")).href
      : "tsx";
  return { specifier, binds: tsx.binds };
}
