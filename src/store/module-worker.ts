/**
 * Starts a worker thread on a module beside the caller: the compiled .js under dist, or, under
 * the TypeScript test runner and bench (the caller itself a .ts file), the .ts file that tsx loads.
 */
import { Worker } from "node:worker_threads";

/** `base`: the caller's import.meta.url; `name`: the module beside it, without extension. */
export function startModuleWorker(base: string, name: string, workerData: unknown): Worker {
  if (base.endsWith(".ts")) {
    return new Worker(
      `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(
        new URL(`./${name}.ts`, base).href,
      )}); });`,
      { eval: true, workerData },
    );
  }
  return new Worker(new URL(`./${name}.js`, base), { workerData });
}
