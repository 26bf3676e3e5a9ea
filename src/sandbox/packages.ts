/**
 * Read-only binds for the node_modules packages sandboxed code needs (tsx to run TypeScript,
 * for instance): each package and, transitively, the packages it depends on, resolved the way
 * Node resolves them from `fromDir`, bound at /node_modules/<name>. Code in /work finds them there
 * (Node looks in /work/node_modules, then /node_modules), and so do the packages themselves.
 * Nothing else of the host's node_modules is visible.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { SandboxError } from "./errors.js";
import type { SandboxBind } from "./run.js";

/** Where packages are bound inside the sandbox. */
export const SANDBOX_NODE_MODULES = "/node_modules";

/** The folder of package `name` as Node would find it from `fromDir`, or undefined. */
function findPackage(name: string, fromDir: string): string | undefined {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/**
 * Binds for `names` and everything they depend on (optional and peer dependencies when they are
 * installed). Throws a SandboxError naming a package that is not installed.
 */
export function packageBinds(names: readonly string[], fromDir = process.cwd()): SandboxBind[] {
  const found = new Map<string, string>(); // folder -> name
  const visit = (name: string, from: string, required: boolean) => {
    const dir = findPackage(name, from);
    if (dir === undefined) {
      if (required) throw new SandboxError(`package ${name} is not installed (from ${fromDir})`);
      return;
    }
    if (found.has(dir)) return;
    found.set(dir, name);
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
    } catch {
      return;
    }
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, dir, true);
    for (const dep of Object.keys(manifest.optionalDependencies ?? {})) visit(dep, dir, false);
    for (const dep of Object.keys(manifest.peerDependencies ?? {})) visit(dep, dir, false);
  };
  for (const name of names) visit(name, fromDir, true);
  // A package nested inside another one's folder comes with that folder.
  const dirs = [...found.keys()];
  const binds: SandboxBind[] = [];
  const targets = new Set<string>();
  for (const dir of dirs) {
    if (dirs.some((other) => other !== dir && dir.startsWith(`${other}${sep}`))) continue;
    const name = found.get(dir) as string;
    const target = `${SANDBOX_NODE_MODULES}/${name}`;
    if (targets.has(target)) {
      throw new SandboxError(
        `two versions of ${name} would both sit at ${target}; bind them by hand instead`,
      );
    }
    targets.add(target);
    binds.push({ source: dir, target });
  }
  return binds;
}
