/** The sql environment: answer a question about a database with a SQL query (after BIRD). */
import {
  activeEpisode,
  checkTaskIndex,
  type Env,
  type Observation,
  type ResetOptions,
  type StepResult,
} from "../types.js";
import { parseAction } from "./action.js";
import { type ComparableResult, sameResult } from "./compare.js";
import { databaseInfo } from "./databases.js";
import type { QueryResult } from "./execute.js";
import { SQL_INFO } from "./info.js";
import { QUERY_TIME_LIMIT_MS, queryPool } from "./query-pool.js";
import { generateTask, type SqlTask } from "./task.js";
import {
  answerErrorText,
  correctText,
  emptySqlText,
  invalidActionText,
  MAX_STEPS,
  OUT_OF_STEPS_TEXT,
  queryErrorText,
  resultTable,
  stepsLeftText,
  taskText,
  wrongText,
} from "./text.js";

export { SQL_INFO };

/**
 * Gold queries are trusted and take milliseconds, but a busy machine must not turn a reset into
 * an error (or, through the read time limit, a cut gold result): they get a longer deadline.
 */
const GOLD_TIME_LIMIT_MS = 10 * QUERY_TIME_LIMIT_MS;

/** Gold results per gold query, computed on first use; the databases never change. */
const goldResults = new Map<string, Promise<ComparableResult>>();

async function computeGold(task: SqlTask): Promise<ComparableResult> {
  const outcome = await queryPool().run(task.database, task.gold, {
    timeLimitMs: GOLD_TIME_LIMIT_MS,
  });
  if (!outcome.ok) throw new Error(`sql: gold query of task ${task.index} fails: ${outcome.error}`);
  if (outcome.result.truncated) {
    throw new Error(`sql: gold query of task ${task.index} was cut off`);
  }
  return outcome.result;
}

/** The gold query's result on its database; rejects if the shipped gold query fails. */
export function goldResult(task: SqlTask): Promise<ComparableResult> {
  const key = `${task.database}\n${task.gold}`;
  let result = goldResults.get(key);
  if (!result) {
    result = computeGold(task);
    goldResults.set(key, result);
    // A failure (a child killed under load, say) is not remembered: the next reset tries again.
    result.catch(() => goldResults.delete(key));
  }
  return result;
}

interface Episode {
  task: SqlTask;
  gold: ComparableResult;
  steps: number;
  done: boolean;
}

export class SqlEnv implements Env {
  readonly info = SQL_INFO;
  private episode: Episode | undefined;

  constructor() {
    // A query child takes 0.1 to 0.3 s to start: begin before the first reset needs it.
    queryPool().prestart();
  }

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    const task = generateTask(taskIndex, options.seed ?? 0);
    const database = databaseInfo(task.database);
    const gold = await goldResult(task);
    this.episode = { task, gold, steps: 0, done: false };
    return {
      text: taskText(task.database, database.spec.description, database.schema, task.question),
    };
  }

  async step(action: string): Promise<StepResult> {
    const episode = activeEpisode(this.info.name, this.episode);
    episode.steps++;
    const parsed = parseAction(action);
    if (!parsed) return this.goOn(episode, invalidActionText(action), { invalid: true });
    if (parsed.sql === "") {
      return this.goOn(episode, emptySqlText(parsed.kind), { invalid: true, kind: parsed.kind });
    }
    // In a child process under a deadline: a hostile query cannot hold this process.
    const outcome = await queryPool().run(episode.task.database, parsed.sql);
    if (parsed.kind === "query") {
      if (!outcome.ok) {
        return this.goOn(episode, queryErrorText(outcome.error), {
          kind: "query",
          error: outcome.error,
        });
      }
      const { columns, rows, truncated } = outcome.result;
      return this.goOn(episode, resultTable(columns, rows, truncated), {
        kind: "query",
        rows: rows.length,
        truncated,
      });
    }
    if (!outcome.ok) {
      return this.goOn(episode, answerErrorText(outcome.error), {
        kind: "answer",
        invalid: true,
        error: outcome.error,
      });
    }
    return this.finish(episode, outcome.result);
  }

  /** A step that does not end the episode, unless it was the last one allowed. */
  private goOn(episode: Episode, text: string, info: Record<string, unknown>): StepResult {
    if (episode.steps < MAX_STEPS) {
      return {
        observation: { text: text + stepsLeftText(MAX_STEPS - episode.steps) },
        reward: 0,
        done: false,
        info,
      };
    }
    episode.done = true;
    return {
      observation: { text: text + OUT_OF_STEPS_TEXT },
      reward: 0,
      done: true,
      info: { ...info, success: false, steps: episode.steps },
    };
  }

  private finish(episode: Episode, result: QueryResult): StepResult {
    episode.done = true;
    const success = !result.truncated && sameResult(episode.gold, result, episode.task.ordered);
    const text = success
      ? correctText()
      : wrongText(
          {
            columns: result.columns.length,
            rows: result.rows.length,
            truncated: result.truncated,
          },
          { columns: episode.gold.columns.length, rows: episode.gold.rows.length },
        );
    return {
      observation: { text },
      reward: success ? 1 : 0,
      done: true,
      info: { kind: "answer", success, steps: episode.steps, rows: result.rows.length },
    };
  }

  async close(): Promise<void> {
    this.episode = undefined;
  }
}
