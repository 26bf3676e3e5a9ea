/**
 * Where BLADE datasets are: a folder per dataset holding annotations.csv (BLADE's
 * list_datasets: every such folder but `toy`). Kept to node:fs so that the environment's
 * metadata (`clade envs`) can count clade's own datasets without loading a reader.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const DATA_FILE = "data.csv";
export const INFO_FILE = "info.json";
export const ANNOTATIONS_FILE = "annotations.csv";
/** BLADE's example dataset, which its own listing leaves out. */
export const TOY_DATASET = "toy";

/** clade's own datasets, shipped with the package. */
export const OWN_DATASETS_DIR = resolve(
  fileURLToPath(new URL("../../../data/blade/datasets/", import.meta.url)),
);

export class BladeFolderError extends Error {
  override name = "BladeFolderError";
}

/** The dataset folders under `root`, by name. */
export function listBladeDatasets(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch (error) {
    throw new BladeFolderError(`${root}: cannot list the folder (${(error as Error).message})`);
  }
  return names
    .filter((name) => name !== TOY_DATASET)
    .filter((name) => {
      const path = join(root, name);
      return statSync(path).isDirectory() && existsSync(join(path, ANNOTATIONS_FILE));
    })
    .sort();
}
