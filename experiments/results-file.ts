/** The experiments' results files: one JSON record per line, appended as each arm finishes. */
import { existsSync, readFileSync } from "node:fs";

/** The records of a results file; none when it does not exist yet. */
export function readResults<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}
