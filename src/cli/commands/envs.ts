/** `clade envs`: the built-in environments. */
// The metadata alone: listing environments loads none of what running them takes.
import { BUILTIN_ENV_INFOS } from "../../env/infos.js";
import type { CliIo } from "../io.js";
import { renderTable } from "../table.js";

export function envsCommand(options: { json?: boolean }, io: CliIo): number {
  const envs = BUILTIN_ENV_INFOS.map((info) => ({
    name: info.name,
    version: info.version,
    description: info.description,
    testTasks: info.splits.test.end - info.splits.test.start,
    trainTasks: info.splits.train.end - info.splits.train.start,
    maxSteps: info.maxSteps,
    successThreshold: info.successThreshold,
  }));
  if (options.json) {
    io.stdout(`${JSON.stringify({ schema: "clade.envs/1", envs })}\n`);
    return 0;
  }
  io.stdout(
    renderTable(
      ["env", "version", "test", "train", "max steps", "description"],
      // The full description is in --json; the table keeps to a terminal's width.
      envs.map((e) => [
        e.name,
        e.version,
        e.testTasks,
        e.trainTasks,
        e.maxSteps,
        e.description.length > 72 ? `${e.description.slice(0, 71)}…` : e.description,
      ]),
    ),
  );
  return 0;
}
