/**
 * The blade environment (after BLADE): the agent reads a research question and a dataset's
 * description, explores the data by running code in a sandboxed session (state kept across
 * steps), and ends by submitting one analysis, which is matched to the expert analyses.
 */
import {
  activeEpisode,
  checkTaskIndex,
  type Env,
  type EnvInfo,
  type Observation,
  type ResetOptions,
  type StepResult,
} from "../types.js";
import { openSession } from "./runtime/index.js";
import type { AnalysisSession, RuntimeLimits } from "./runtime/types.js";
import { type BladeScore, type ScoringOptions, scoreAnalysis } from "./score.js";
import type { BladeDataset } from "./specs.js";
import { parseAnalysisText, SubmissionError } from "./submission.js";
import type { BladeTaskSource } from "./tasks.js";
import { taskDataset } from "./tasks.js";
import {
  BLADE_INFO,
  invalidActionText,
  MAX_STEPS,
  OUT_OF_STEPS_TEXT,
  RUNTIME_LABEL,
  SAMPLE_VALUES,
  stepsLeftText,
} from "./text.js";

/** The environment's metadata for a task source: its splits and a version that names the data. */
export function bladeEnvInfo(source: BladeTaskSource, ownData: boolean): EnvInfo {
  const all = { start: 0, end: source.datasets.length };
  // The built-in (own data on SQL) is the plain version; any other data or runtime is marked.
  const runtime = ownData && source.runtime === "sql" ? "" : `+${source.runtime}`;
  const data = ownData ? "" : `+data.${source.digest}`;
  return {
    ...BLADE_INFO,
    version: `${BLADE_INFO.version}${runtime}${data}`,
    splits: { train: { start: all.end, end: all.end }, test: all },
  };
}

export interface BladeEnvOptions {
  source: BladeTaskSource;
  info: EnvInfo;
  limits?: Partial<RuntimeLimits>;
  scoring?: ScoringOptions;
}

/** The task text: question, dataset, columns, runtime. */
export function taskText(dataset: BladeDataset, runtime: BladeTaskSource["runtime"]): string {
  const columns = dataset.fields.map((field) => {
    const samples = Array.isArray(field.properties.samples)
      ? ` e.g. ${(field.properties.samples as unknown[])
          .slice(0, SAMPLE_VALUES)
          .map((v) => JSON.stringify(v))
          .join(", ")}`
      : "";
    return `- ${field.column} (${field.dtype}): ${field.description}${samples}`;
  });
  return [
    `Research question: ${dataset.questions[0] ?? ""}`,
    "",
    `Dataset "${dataset.name}" (${dataset.rowCount} rows): ${dataset.description}`,
    "Columns:",
    ...columns,
    "",
    `Language: ${RUNTIME_LABEL[runtime]}.`,
  ].join("\n");
}

/** The action's kind and its payload, with an optional "Action:" prefix and code fences removed. */
export function parseBladeAction(
  text: string,
): { kind: "run" | "submit"; payload: string } | undefined {
  const match = /^\s*(?:action\s*:\s*)?(run|submit)\s*:\s*/i.exec(text);
  if (!match) return undefined;
  let payload = text.slice(match[0].length).trim();
  const fenced = /^```[\w-]*\s*\n([\s\S]*?)\n?```\s*$/.exec(payload);
  if (fenced) payload = (fenced[1] as string).trim();
  return { kind: (match[1] as string).toLowerCase() as "run" | "submit", payload };
}

interface Episode {
  dataset: BladeDataset;
  session: AnalysisSession | undefined;
  steps: number;
  done: boolean;
}

export class BladeEnv implements Env {
  readonly info: EnvInfo;
  private episode: Episode | undefined;

  constructor(private readonly options: BladeEnvOptions) {
    this.info = options.info;
  }

  async reset(taskIndex: number, _options?: ResetOptions): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    await this.endSession();
    const dataset = taskDataset(this.options.source, taskIndex);
    this.episode = { dataset, session: undefined, steps: 0, done: false };
    return { text: taskText(dataset, this.options.source.runtime) };
  }

  async step(action: string): Promise<StepResult> {
    const episode = activeEpisode(this.info.name, this.episode);
    episode.steps++;
    const parsed = parseBladeAction(action);
    let result: StepResult;
    if (!parsed) {
      result = this.reply(episode, invalidActionText("no run: or submit: found"));
    } else if (parsed.kind === "run") {
      result = await this.run(episode, parsed.payload);
    } else {
      result = await this.submit(episode, parsed.payload);
    }
    if (!result.done && episode.steps >= MAX_STEPS) {
      episode.done = true;
      await this.endSession();
      return { ...result, observation: { text: OUT_OF_STEPS_TEXT }, done: true, reward: 0 };
    }
    return result;
  }

  async close(): Promise<void> {
    await this.endSession();
  }

  private reply(episode: Episode, text: string, info: Record<string, unknown> = {}): StepResult {
    const left = stepsLeftText(MAX_STEPS - episode.steps);
    return {
      observation: { text: left ? `${text}\n\n${left}` : text },
      reward: 0,
      done: false,
      info,
    };
  }

  private async run(episode: Episode, code: string): Promise<StepResult> {
    if (code === "") return this.reply(episode, invalidActionText("run: needs code"));
    if (!episode.session) {
      episode.session = await openSession({
        runtime: this.options.source.runtime,
        dataset: episode.dataset,
        ...(this.options.limits ? { limits: this.options.limits } : {}),
      });
    }
    const outcome = await episode.session.execute(code);
    const text = outcome.ok
      ? outcome.output || "(no output)"
      : `${outcome.output ? `${outcome.output}\n` : ""}Error: ${outcome.error ?? "failed"}${
          outcome.timedOut ? " (time limit; the session was restarted and its state is lost)" : ""
        }`;
    return this.reply(episode, text, { ok: outcome.ok });
  }

  private async submit(episode: Episode, payload: string): Promise<StepResult> {
    let analysis: ReturnType<typeof parseAnalysisText>;
    try {
      analysis = parseAnalysisText(payload, "submission");
    } catch (error) {
      if (!(error instanceof SubmissionError)) throw error;
      return this.reply(episode, `Invalid submission: ${error.message}. Fix it and submit again.`, {
        submissionError: error.message,
      });
    }
    episode.done = true;
    await this.endSession();
    const score: BladeScore = await scoreAnalysis(
      episode.dataset,
      analysis,
      this.options.source.runtime,
      this.options.scoring,
    );
    return {
      observation: { text: `Analysis submitted. Score ${score.score.toFixed(3)}.` },
      reward: score.score,
      done: true,
      info: { blade: score.record },
    };
  }

  private async endSession(): Promise<void> {
    const session = this.episode?.session;
    if (this.episode) this.episode.session = undefined;
    await session?.close();
  }
}
