/** The todo environment: one episode holds a working copy of the task's database. */
import {
  activeEpisode,
  checkTaskIndex,
  type Env,
  type Observation,
  type ResetOptions,
  type StepResult,
} from "../types.js";
import { parseAction } from "./action.js";
import { generateScenario, type TodoScenario } from "./generate.js";
import { checkAnswer } from "./grading.js";
import { formatTaskStatement, formatToolError, TODO_INFO } from "./text.js";
import { finishArgs, runTool } from "./tools.js";
import { canonicalState, cloneState, type TodoState } from "./world.js";

interface Episode {
  scenario: TodoScenario;
  state: TodoState;
  initialIds: ReadonlySet<string>;
  /** The gold state's fingerprint, computed once per reset. */
  goldFingerprint: string;
  steps: number;
  done: boolean;
}

export class TodoEnv implements Env {
  readonly info = TODO_INFO;
  private episode: Episode | undefined;

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    const scenario = generateScenario(taskIndex, options.seed ?? 0);
    const initialIds = new Set(scenario.initial.tasks.keys());
    this.episode = {
      scenario,
      state: cloneState(scenario.initial),
      initialIds,
      goldFingerprint: canonicalState(scenario.gold, initialIds),
      steps: 0,
      done: false,
    };
    return { text: formatTaskStatement(scenario.today, scenario.request) };
  }

  async step(action: string): Promise<StepResult> {
    const episode = activeEpisode(this.info.name, this.episode);
    episode.steps += 1;
    const parsed = parseAction(action);
    if (!parsed.ok) return this.invalid(episode, parsed.error, {});
    const { tool, args } = parsed.call;
    if (tool === "finish") {
      const finish = finishArgs.safeParse(args);
      if (!finish.success) {
        return this.invalid(episode, 'finish takes {"answer": "<your reply to the user>"}', {
          tool,
        });
      }
      return this.finish(episode, finish.data.answer);
    }
    const outcome = runTool({ state: episode.state, today: episode.scenario.today }, tool, args);
    if (!outcome.ok) return this.invalid(episode, outcome.error, { tool });
    return this.result(episode, { text: JSON.stringify(outcome.output) }, { tool });
  }

  private invalid(episode: Episode, error: string, info: Record<string, unknown>): StepResult {
    return this.result(
      episode,
      { text: formatToolError(error) },
      { ...info, invalid: true, error },
    );
  }

  /** A non-final step's result; the step limit ends the episode as a failure. */
  private result(
    episode: Episode,
    observation: Observation,
    info: Record<string, unknown>,
  ): StepResult {
    if (episode.steps < this.info.maxSteps) return { observation, reward: 0, done: false, info };
    episode.done = true;
    const text = `${observation.text}\nStep limit of ${this.info.maxSteps} reached without finish.`;
    return {
      observation: { text },
      reward: 0,
      done: true,
      info: { ...info, success: false, truncated: true },
    };
  }

  private finish(episode: Episode, answer: string): StepResult {
    episode.done = true;
    const stateMatches =
      canonicalState(episode.state, episode.initialIds) === episode.goldFingerprint;
    const { answers, candidates } = episode.scenario;
    const { missing, hedged } = checkAnswer(answer, answers, candidates);
    const success = stateMatches && missing.length === 0 && hedged.length === 0;
    const verdict = success
      ? "The request was fulfilled."
      : "The request was not fulfilled correctly.";
    return {
      observation: { text: `Episode finished. ${verdict}` },
      reward: success ? 1 : 0,
      done: true,
      info: {
        tool: "finish",
        success,
        stateMatches,
        missingAnswers: missing,
        hedgedAnswers: hedged,
      },
    };
  }
}
