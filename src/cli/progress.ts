/** A progress bar on an interactive terminal; silent otherwise (logs and pipes stay clean). */
import cliProgress from "cli-progress";
import type { EvalProgress } from "../eval/evaluation.js";
import type { CliIo } from "./io.js";

export interface ProgressReporter {
  update(progress: EvalProgress): void;
  stop(): void;
}

export function createProgress(io: CliIo, label: string, enabled: boolean): ProgressReporter {
  if (!enabled || !io.interactive) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {value}/{total} episodes | {successes} ok {errors} err | {eta_formatted}`,
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let successes = 0;
  let errors = 0;
  return {
    update(progress) {
      if (progress.last?.outcome === "success") successes++;
      if (progress.last?.outcome === "error") errors++;
      if (!started) {
        bar.start(progress.total, progress.done, { successes, errors });
        started = true;
      } else {
        bar.update(progress.done, { successes, errors });
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
