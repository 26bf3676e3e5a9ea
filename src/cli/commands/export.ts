/** `clade export RUN`: trajectories as AgentTraj JSON or OpenAI chat JSONL. */
import { closeSync, existsSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { z } from "zod";
import { findEnvInfo } from "../../env/infos.js";
import {
  ITEM_ID_STYLES,
  type ItemIdStyle,
  toAgentTraj,
  toChatMessages,
} from "../../store/export.js";
import { DamagedEpisodeError, damagedWarning } from "../../store/run-store.js";
import { type CliIo, UsageError } from "../io.js";
import { parseOptions } from "../options.js";
import { openRun } from "./runs.js";

const exportOptionsSchema = z.object({
  db: z.string().min(1),
  format: z.enum(["agenttraj", "chat"], { error: 'must be "agenttraj" or "chat"' }),
  out: z.string().min(1).optional(),
  successOnly: z.boolean().optional(),
  itemIds: z
    .enum(ITEM_ID_STYLES as [ItemIdStyle, ...ItemIdStyle[]], {
      error: 'must be "agentgym" or "clade"',
    })
    .optional(),
});

export function exportCommand(
  runId: string,
  raw: z.input<typeof exportOptionsSchema>,
  io: CliIo,
): number {
  const options = parseOptions(exportOptionsSchema, raw);
  if (options.itemIds && options.format !== "agenttraj") {
    throw new UsageError("--item-ids applies to --format agenttraj (chat lines carry no item id)");
  }
  if (options.out && existsSync(options.out) && statSync(options.out).isDirectory()) {
    throw new UsageError(`--out ${options.out} is a directory; give a file path`);
  }
  const { store, run } = openRun(options.db, runId);
  const partial = options.out ? `${options.out}.partial-${process.pid}` : undefined;
  let fd: number | undefined;
  try {
    // Each episode records the instruction its agent saw; episodes stored before clade kept it
    // fall back to the instruction of the built-in env of the run's name.
    const fallback = findEnvInfo(run.env)?.instruction;
    if (fallback === undefined && store.finishedWithoutInstruction(runId) > 0) {
      throw new UsageError(
        `run "${runId}" used environment "${run.env}", which this clade does not have, and ` +
          "its episodes were stored without the instruction their agent saw",
      );
    }
    try {
      if (partial) fd = openSync(partial, "w");
    } catch (error) {
      throw new UsageError(`cannot write ${options.out}: ${(error as Error).message}`);
    }
    // One episode at a time: a run of millions of steps never sits in memory as one string.
    const write = (text: string) => (fd === undefined ? io.stdout(text) : writeSync(fd, text));
    const agentTraj = options.format === "agenttraj";
    let first = true;
    let damaged = 0;
    if (agentTraj) write("[");
    for (const episode of store.episodes(runId)) {
      if (episode.outcome === "damaged") damaged++;
      // Errored, unrun and damaged episodes are not trajectories of the task; never exported.
      if (episode.outcome !== "success" && episode.outcome !== "failure") continue;
      if (options.successOnly && episode.outcome !== "success") continue;
      let steps: ReturnType<typeof store.steps>;
      try {
        steps = store.steps(episode.id);
      } catch (error) {
        if (!(error instanceof DamagedEpisodeError)) throw error;
        damaged++;
        continue;
      }
      const instruction = store.instruction(episode.id) ?? fallback ?? "";
      const source = {
        env: run.env,
        instruction,
        episode,
        steps,
        itemIds: options.itemIds ?? "agentgym",
      };
      if (agentTraj) {
        write(`${first ? "\n" : ",\n"}${JSON.stringify(toAgentTraj(source))}`);
      } else {
        write(`${JSON.stringify(toChatMessages(source))}\n`);
      }
      first = false;
    }
    if (agentTraj) write(first ? "]\n" : "\n]\n");
    if (damaged > 0) io.stderr(damagedWarning(runId, damaged));
    if (fd !== undefined && partial && options.out) {
      closeSync(fd);
      fd = undefined;
      // Written beside the target, then renamed: a reader never sees a half-written file.
      try {
        renameSync(partial, options.out);
      } catch (error) {
        throw new UsageError(`cannot write ${options.out}: ${(error as Error).message}`);
      }
      io.stderr(`wrote ${options.out}\n`);
    }
    return 0;
  } finally {
    store.close();
    if (fd !== undefined) closeSync(fd);
    if (partial) rmSync(partial, { force: true });
  }
}
