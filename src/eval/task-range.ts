/** Parses task selections such as "0-99", "0-9,20,30-39", "test" or "train". */
import type { EnvInfo } from "../env/types.js";

export class TaskRangeError extends Error {
  override name = "TaskRangeError";
}

const MAX_TASKS = 1_000_000;
/** Largest task index accepted: far beyond any split, and exact in a double. */
export const MAX_TASK_INDEX = 999_999_999;

/** The sorted, de-duplicated task indices a selection names; every index must exist in the env. */
export function parseTaskRange(spec: string, info: EnvInfo): number[] {
  const trimmed = spec.trim();
  const split = trimmed === "test" || trimmed === "train" ? info.splits[trimmed] : undefined;
  if (split) return Array.from({ length: split.end - split.start }, (_, i) => split.start + i);
  const indices = new Set<number>();
  for (const part of trimmed.split(",")) {
    const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!match) {
      throw new TaskRangeError(
        `bad task range "${spec}": use "test", "train", or indices like 0-99 or 0-9,20`,
      );
    }
    const start = Number(match[1]);
    const end = match[2] === undefined ? start : Number(match[2]);
    // Past 2^53, i + 1 === i: a loop over such a range would never end.
    if (start > MAX_TASK_INDEX || end > MAX_TASK_INDEX) {
      throw new TaskRangeError(
        `bad task range "${part.trim()}": indices go up to ${MAX_TASK_INDEX}`,
      );
    }
    if (end < start) throw new TaskRangeError(`bad task range "${part.trim()}": end before start`);
    if (end - start + 1 + indices.size > MAX_TASKS) {
      throw new TaskRangeError(`task range "${spec}" names more than ${MAX_TASKS} tasks`);
    }
    for (let i = start; i <= end; i++) indices.add(i);
  }
  const valid = (i: number) =>
    (i >= info.splits.test.start && i < info.splits.test.end) ||
    (i >= info.splits.train.start && i < info.splits.train.end);
  const outside = [...indices].filter((i) => !valid(i));
  if (outside.length > 0) {
    const { test, train } = info.splits;
    throw new TaskRangeError(
      `task ${outside[0]} does not exist in ${info.name} (test ${test.start}-${test.end - 1}, train ${train.start}-${train.end - 1})`,
    );
  }
  return [...indices].sort((a, b) => a - b);
}

/** The compact form of a task list: [0..99, 120] → "0-99,120". */
export function formatTaskRange(tasks: readonly number[]): string {
  const sorted = [...new Set(tasks)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] as number) + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}
