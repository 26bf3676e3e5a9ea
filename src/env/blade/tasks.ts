/**
 * Where the blade environment's tasks come from: clade's own datasets (data/blade/datasets, run
 * on the embedded SQL engine by default) or a checkout of BLADE's data (`--blade-dir`, run on
 * Python, since BLADE's expert transforms are pandas code). Task i is the i-th dataset in name
 * order, asked its first research question.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { readBladeDataset } from "./dataset.js";
import { listBladeDatasets, OWN_DATASETS_DIR } from "./folders.js";
import type { RuntimeName } from "./runtime/types.js";
import type { BladeDataset } from "./specs.js";

export interface BladeTaskSource {
  /** The folder holding one folder per dataset. */
  root: string;
  runtime: RuntimeName;
  /** Dataset names in task order. */
  datasets: readonly string[];
  /** A digest of every dataset's description and ground truth ("" for clade's own). */
  digest: string;
}

export { OWN_DATASETS_DIR };

export class BladeTaskError extends Error {
  override name = "BladeTaskError";
}

function contentDigest(root: string, datasets: readonly string[]): string {
  const hash = createHash("sha256");
  for (const name of datasets) {
    hash.update(name);
    for (const file of ["info.json", "annotations.csv"]) {
      hash.update(readFileSync(join(root, name, file)));
    }
  }
  return hash.digest("hex").slice(0, 12);
}

/** The runtime of a folder of datasets: `runtime` if given, else sql for clade's own, else python. */
export function defaultRuntime(root: string, runtime?: RuntimeName): RuntimeName {
  return runtime ?? (resolve(root) === OWN_DATASETS_DIR ? "sql" : "python");
}

/** The task source of a folder of datasets; `runtime` defaults to sql for clade's own. */
export function bladeTaskSource(root: string, runtime?: RuntimeName): BladeTaskSource {
  root = resolve(root);
  const datasets = listBladeDatasets(root);
  if (datasets.length === 0) {
    throw new BladeTaskError(
      `${root}: no BLADE datasets here (a dataset is a folder holding data.csv, info.json and annotations.csv)`,
    );
  }
  const own = root === OWN_DATASETS_DIR;
  return {
    root,
    runtime: defaultRuntime(root, runtime),
    datasets,
    // clade's own data are versioned with the environment; anyone else's by their content.
    digest: own ? "" : contentDigest(root, datasets),
  };
}

const loaded = new Map<string, BladeDataset>();

/** The dataset of task `index`, read once per process. */
export function taskDataset(source: BladeTaskSource, index: number): BladeDataset {
  const name = source.datasets[index];
  if (name === undefined) {
    throw new BladeTaskError(`blade: no task ${index} (${source.datasets.length} datasets)`);
  }
  const dir = join(source.root, name);
  let dataset = loaded.get(dir);
  if (!dataset) {
    dataset = readBladeDataset(dir);
    loaded.set(dir, dataset);
  }
  return dataset;
}

/** Finds a task by dataset name, for `clade blade score --dataset NAME`. */
export function taskIndexOf(source: BladeTaskSource, name: string): number {
  const index = source.datasets.indexOf(name);
  if (index < 0) {
    throw new BladeTaskError(
      `unknown dataset "${name}" in ${source.root} (known: ${source.datasets.join(", ")})`,
    );
  }
  return index;
}
