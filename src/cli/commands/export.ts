/** `clade export RUN`: trajectories as AgentTraj JSON or OpenAI chat JSONL. */
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { z } from "zod";
import { BUILTIN_ENVS } from "../../env/registry.js";
import { toAgentTraj, toChatMessages } from "../../store/export.js";
import { type CliIo, UsageError } from "../io.js";
import { parseOptions } from "../options.js";
import { openRun } from "./runs.js";

const exportOptionsSchema = z.object({
  db: z.string().min(1),
  format: z.enum(["agenttraj", "chat"], { error: 'must be "agenttraj" or "chat"' }),
  out: z.string().min(1).optional(),
  successOnly: z.boolean().optional(),
});

export function exportCommand(
  runId: string,
  raw: z.input<typeof exportOptionsSchema>,
  io: CliIo,
): number {
  const options = parseOptions(exportOptionsSchema, raw);
  const { store, run } = openRun(options.db, runId);
  let text: string;
  try {
    const env = BUILTIN_ENVS.find((d) => d.info.name === run.env);
    if (!env)
      throw new UsageError(
        `run "${runId}" used environment "${run.env}", which this clade does not have`,
      );
    const sources = store
      .episodes(runId)
      // Errored episodes are incomplete trajectories, never exported as data.
      .filter((e) => e.outcome !== "error" && (!options.successOnly || e.outcome === "success"))
      .map((episode) => ({
        env: run.env,
        instruction: env.info.instruction,
        episode,
        steps: store.steps(episode.id),
      }));
    text =
      options.format === "agenttraj"
        ? `${JSON.stringify(sources.map(toAgentTraj), null, 1)}\n`
        : sources.map((s) => `${JSON.stringify(toChatMessages(s))}\n`).join("");
  } finally {
    store.close();
  }
  if (!options.out) {
    io.stdout(text);
    return 0;
  }
  // Write beside the target, then rename: a reader never sees a half-written file.
  const partial = `${options.out}.partial-${process.pid}`;
  try {
    writeFileSync(partial, text);
    renameSync(partial, options.out);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new UsageError(`cannot write ${options.out}: ${(error as Error).message}`);
  }
  io.stderr(`wrote ${options.out}\n`);
  return 0;
}
