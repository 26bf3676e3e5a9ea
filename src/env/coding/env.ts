/**
 * The coding environment: write a solution file in a temporary workspace, run the visible tests
 * in clade's sandbox (src/sandbox), and submit to be graded on the hidden tests.
 *
 * Sandbox mode: "bwrap" unless CLADE_SANDBOX=none (or the `sandbox` option) says otherwise. A
 * run in mode "none" has the environment version `1.0.0+sandbox-none`: stored with the run (so
 * such a run never resumes under the sandbox, nor the other way round) and printed wherever the
 * run is shown.
 */
import {
  checkSandbox,
  defaultSandboxMode,
  isSandboxMode,
  type SandboxMode,
  UNSANDBOXED_VERSION_SUFFIX,
} from "../../sandbox/index.js";
import {
  activeEpisode,
  checkTaskIndex,
  type Env,
  EnvError,
  type EnvInfo,
  type Observation,
  type ResetOptions,
  type StepResult,
} from "../types.js";
import { unsandboxedInfo } from "../unsandboxed.js";
import { parseAction } from "./actions.js";
import { EXERCISES, TEST_ONLY_IDS } from "./catalog.js";
import type { TestCase } from "./exercise.js";
import { type CaseVerdict, judgeCases } from "./grading.js";
import { DEFAULT_TIMEOUT_MS, runInSandbox, type SandboxRun } from "./runner.js";
import { type CodingTask, generateTask, TEST_SPLIT, TRAIN_SPLIT } from "./task.js";
import {
  INSTRUCTION,
  introText,
  invalidText,
  loadProblem,
  MAX_STEPS,
  OUT_OF_STEPS_TEXT,
  type RunSummary,
  runTestsText,
  stopProblem,
  submitText,
  unknownFileText,
  VIEW_CHARS,
  viewText,
  writeText,
} from "./text.js";
import { Workspace } from "./workspace.js";

export const CODING_INFO: EnvInfo = {
  name: "coding",
  version: "1.0.0",
  description:
    `${EXERCISES.length} JavaScript programming exercises (katas from reverse words to a Forth ` +
    "interpreter, difficulty 1-5): write the solution file, run the visible tests in a sandbox, " +
    "submit to be graded on hidden tests. Tasks repeat exercises: test tasks 0-99 cycle through " +
    `all exercises (${TEST_ONLY_IDS.size} of them held out of train), train tasks through the ` +
    "rest; variants rename the main export and reorder the hidden tests.",
  instruction: INSTRUCTION,
  splits: { train: { ...TRAIN_SPLIT }, test: { ...TEST_SPLIT } },
  successThreshold: 1,
  maxSteps: MAX_STEPS,
};

export { UNSANDBOXED_VERSION_SUFFIX };

const UNSANDBOXED_INFO: EnvInfo = unsandboxedInfo(CODING_INFO, "agent code");

/** The environment's metadata for a sandbox mode. */
export function codingInfo(mode: SandboxMode): EnvInfo {
  return mode === "none" ? UNSANDBOXED_INFO : CODING_INFO;
}

/**
 * The mode the process default names, for metadata; an invalid CLADE_SANDBOX reads as "bwrap"
 * here and fails the first reset with its one-line error.
 */
export function currentCodingInfo(): EnvInfo {
  try {
    return codingInfo(defaultSandboxMode());
  } catch {
    return CODING_INFO;
  }
}

/** Makes Node load the workspace's .js files as ES modules, whatever its version's defaults. */
const PACKAGE_FILE = "package.json";
const PACKAGE_JSON = '{ "type": "module" }\n';

/** Bytes read for `view`: enough for VIEW_CHARS characters of any UTF-8 text. */
const VIEW_READ_BYTES = VIEW_CHARS * 4;

export interface CodingEnvOptions {
  /** Wall-clock limit of one test run in the sandbox; 5 seconds unless set. */
  timeoutMs?: number;
  /** Longest wait for a free sandbox slot before the step fails (default 2 minutes). */
  queueTimeoutMs?: number;
  /**
   * "bwrap" (the sandbox) or "none" (no sandbox: agent code runs as a plain child process).
   * Defaults to CLADE_SANDBOX, else "bwrap"; never "none" unless asked for.
   */
  sandbox?: SandboxMode;
}

interface Episode {
  task: CodingTask;
  workspace: Workspace;
  steps: number;
  done: boolean;
}

interface TestRun {
  verdicts: CaseVerdict[];
  summary: RunSummary;
  run: SandboxRun;
}

export class CodingEnv implements Env {
  private episode: Episode | undefined;
  private readonly sandbox: SandboxMode | undefined;
  private readonly timeoutMs: number;
  private readonly queueTimeoutMs: number | undefined;
  /** Aborted by close(): a run still waiting for a sandbox slot gives it up, a running one dies. */
  private runs = new AbortController();

  constructor(options: CodingEnvOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.queueTimeoutMs = options.queueTimeoutMs;
    if (options.sandbox !== undefined && !isSandboxMode(options.sandbox)) {
      throw new RangeError(`the coding env's sandbox must be "bwrap" or "none"`);
    }
    this.sandbox = options.sandbox;
  }

  get info(): EnvInfo {
    return this.sandbox === undefined ? currentCodingInfo() : codingInfo(this.sandbox);
  }

  /** How agent code runs: the option, else the process default (which may throw one line). */
  get sandboxMode(): SandboxMode {
    return this.sandbox ?? defaultSandboxMode();
  }

  /** The current episode's workspace directory (for inspection), if any. */
  get workspaceRoot(): string | undefined {
    return this.episode?.workspace.root;
  }

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    const task = generateTask(taskIndex, options.seed ?? 0);
    // No sandbox, no episode: one line saying how to install it (or an explicit "none").
    if (this.sandboxMode === "bwrap") await checkSandbox();
    this.discardWorkspace();
    const workspace = Workspace.create(
      {
        [task.solutionFile]: task.stub,
        [task.testFile]: task.testFileText,
        [PACKAGE_FILE]: PACKAGE_JSON,
      },
      [task.testFile, PACKAGE_FILE],
    );
    this.episode = { task, workspace, steps: 0, done: false };
    return { text: introText(task) };
  }

  async step(action: string): Promise<StepResult> {
    const episode = activeEpisode(this.info.name, this.episode);
    episode.steps++;
    const parsed = parseAction(typeof action === "string" ? action : String(action));
    const { workspace, task } = episode;
    switch (parsed.kind) {
      case "invalid":
        return this.result(episode, invalidText(parsed.error), { invalid: true });
      case "view": {
        const file = workspace.read(parsed.file, VIEW_READ_BYTES);
        if (!file.ok) {
          return this.result(episode, unknownFileText(parsed.file, workspace.list()), {
            invalid: true,
          });
        }
        return this.result(episode, viewText(parsed.file, file.text, file.size), {
          file: parsed.file,
        });
      }
      case "write": {
        const written = workspace.write(parsed.file, parsed.content);
        if (!written.ok) return this.result(episode, invalidText(written.error), { invalid: true });
        return this.result(episode, writeText(parsed.file, parsed.content), {
          file: parsed.file,
          chars: parsed.content.length,
        });
      }
      case "run": {
        const { verdicts, summary, run } = await this.uncountedOnFailure(episode, () =>
          this.runTests(episode, task.visible),
        );
        const text = runTestsText(task, summary, verdicts, run, run.workdir);
        return this.result(episode, text, {
          passed: summary.passed,
          total: summary.total,
          timedOut: run.timedOut,
        });
      }
      case "submit":
        return this.uncountedOnFailure(episode, () => this.submit(episode));
    }
  }

  async close(): Promise<void> {
    this.runs.abort(new EnvError(`${this.info.name}: the environment was closed`));
    this.runs = new AbortController();
    this.discardWorkspace();
    this.episode = undefined;
  }

  /**
   * A run that never happened (no sandbox slot in time, or closed while waiting) does not use
   * up one of the episode's steps: the agent may simply try again.
   */
  private async uncountedOnFailure<T>(episode: Episode, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      episode.steps--;
      throw error;
    }
  }

  private discardWorkspace(): void {
    this.episode?.workspace.remove();
  }

  private async runTests(episode: Episode, tests: readonly TestCase[]): Promise<TestRun> {
    const { task, workspace } = episode;
    const run = await runInSandbox(
      [{ file: task.solutionFile, names: task.exports, calls: tests.map((test) => test.call) }],
      {
        root: workspace.root,
        timeoutMs: this.timeoutMs,
        signal: this.runs.signal,
        mode: this.sandboxMode,
        ...(this.queueTimeoutMs === undefined ? {} : { queueTimeoutMs: this.queueTimeoutMs }),
      },
    );
    const suite = run.suites[0] ?? { load: undefined, cases: [] };
    const verdicts = judgeCases(tests, suite.cases);
    const summary: RunSummary = {
      passed: verdicts.filter((verdict) => verdict.passed).length,
      total: tests.length,
      loadProblem: loadProblem(suite, task, run, run.workdir),
      stopProblem: stopProblem(run, this.timeoutMs),
      syntaxError: suite.load?.ok === false && suite.load.error.name === "SyntaxError",
    };
    return { verdicts, summary, run };
  }

  private async submit(episode: Episode): Promise<StepResult> {
    const graded = [...episode.task.visible, ...episode.task.hidden];
    const { verdicts, summary, run } = await this.runTests(episode, graded);
    episode.done = true;
    const success = summary.passed === summary.total;
    return {
      observation: { text: submitText(summary, verdicts) },
      reward: success ? 1 : 0,
      done: true,
      info: {
        success,
        passed: summary.passed,
        total: summary.total,
        fraction: summary.total === 0 ? 0 : summary.passed / summary.total,
        timedOut: run.timedOut,
        steps: episode.steps,
      },
    };
  }

  /** A non-final step's result; reaching the step limit ends the episode as a failure. */
  private result(episode: Episode, text: string, info: Record<string, unknown>): StepResult {
    if (episode.steps < MAX_STEPS) {
      return { observation: { text }, reward: 0, done: false, info };
    }
    episode.done = true;
    return {
      observation: { text: text + OUT_OF_STEPS_TEXT },
      reward: 0,
      done: true,
      info: { ...info, success: false, truncated: true, steps: episode.steps },
    };
  }
}
