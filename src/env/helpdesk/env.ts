/**
 * The helpdesk environment: it plays the simulated employee and the company's backend; the
 * agent is the assistant. Each reply closes a user turn, which is labelled at once (quality
 * and root cause, see grading.ts); the episode ends when the employee has no goal left, and
 * its final info carries the ground truth of the whole session.
 */
import { parseAction } from "../todo/action.js";
import { weekdayOf } from "../todo/dates.js";
import {
  activeEpisode,
  checkTaskIndex,
  type Env,
  type Observation,
  type ResetOptions,
  type StepResult,
} from "../types.js";
import { type BackendState, type BackendTurn, runTool } from "./backend.js";
import { helpdeskData } from "./data.js";
import { plannedFault } from "./faults.js";
import { generateSession, type Session } from "./generate.js";
import { type Expectation, gradeTurn, type TurnGrade, type TurnLog } from "./grading.js";
import {
  errorLine,
  HELPDESK_INFO,
  MAX_CALLS_PER_TURN,
  NO_REPLY,
  SESSION_OVER,
  toolLine,
  userLine,
} from "./text.js";
import type { GoalLabel, HelpdeskGroundTruth, TurnRecord } from "./types.js";
import { formSlots, UserSimulator } from "./user.js";

interface Episode {
  session: Session;
  user: UserSimulator;
  backend: BackendState;
  turn: TurnLog & BackendTurn;
  expectation: Expectation;
  records: TurnRecord[];
  steps: number;
  callsThisTurn: number;
  done: boolean;
}

/** The desk reference the first observation opens with: what the tools accept. */
export function sessionHeader(session: Session): string {
  const data = helpdeskData();
  const types = data.leaveTypes
    .map((t) => (data.requestableTypes.includes(t) ? t : `${t} (balance only)`))
    .join(", ");
  const categories = data.categories.map((c) => `${c.id} (${c.description})`).join("; ");
  return [
    `${data.company} internal helpdesk. Today is ${session.today} (${weekdayOf(session.today)}).`,
    `Leave types: ${types}. IT categories: ${categories}.`,
    `Urgency: ${data.urgencies.join(", ")}. Locations: ${data.offices.join(", ")}.`,
  ].join("\n");
}

export function sessionId(taskIndex: number, seed: number): string {
  return `helpdesk-${taskIndex}-s${seed}`;
}

export class HelpdeskEnv implements Env {
  readonly info = HELPDESK_INFO;
  private episode: Episode | undefined;

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    const seed = options.seed ?? 0;
    const session = generateSession(taskIndex, seed);
    const user = new UserSimulator(session);
    const message = user.open();
    const backend: BackendState = { session, route: null, filed: 0 };
    const [turn, expectation] = openTurn(session, user, message);
    this.episode = {
      session,
      user,
      backend,
      turn,
      expectation,
      records: [],
      steps: 0,
      callsThisTurn: 0,
      done: false,
    };
    return { text: `${sessionHeader(session)}\n${userLine(message)}` };
  }

  async step(action: string): Promise<StepResult> {
    const episode = activeEpisode(this.info.name, this.episode);
    episode.steps += 1;
    const parsed = parseAction(action);
    let text: string;
    const info: Record<string, unknown> = {};
    if (!parsed.ok) {
      text = errorLine(
        `${parsed.error}. To answer the employee: Action: reply with Action Input: {"message": "..."}`,
      );
      Object.assign(info, { invalid: true, error: parsed.error });
      episode.turn.calls.push({ tool: "(unparsed)", ok: false });
    } else if (parsed.call.tool === "reply") {
      const message = parsed.call.args.message;
      if (typeof message === "string" && message.trim() !== "") {
        return this.reply(episode, message);
      }
      const error = 'reply takes {"message": "<your reply to the employee>"}';
      text = errorLine(error);
      Object.assign(info, { tool: "reply", invalid: true, error });
      episode.turn.calls.push({ tool: "reply", ok: false });
    } else {
      const { tool, args } = parsed.call;
      const outcome = runTool(tool, args, episode.turn, episode.backend);
      episode.turn.calls.push(outcome.call);
      info.tool = tool;
      if (outcome.fired) info.fault = outcome.fired;
      if (outcome.output.ok) {
        text = toolLine(tool, outcome.output.value);
      } else {
        text = errorLine(outcome.output.error);
        if (!outcome.call.systemError)
          Object.assign(info, { invalid: true, error: outcome.output.error });
      }
    }
    episode.callsThisTurn += 1;
    if (episode.callsThisTurn >= MAX_CALLS_PER_TURN) {
      // The employee stops waiting: the turn closes unanswered and they speak again.
      const { record, next } = this.closeTurn(episode, null);
      info.turn = record;
      return this.result(episode, `${text}\n${NO_REPLY}\n${next}`, info);
    }
    return this.result(episode, text, info);
  }

  private reply(episode: Episode, message: string): StepResult {
    const { record, next } = this.closeTurn(episode, message);
    return this.result(episode, next, { tool: "reply", turn: record });
  }

  /** Labels the open turn, lets the user react, and opens the next turn (or ends the session). */
  private closeTurn(episode: Episode, reply: string | null): { record: TurnRecord; next: string } {
    const { record, grade } = this.label(episode, reply);
    const said = episode.user.react({
      success: grade.quality === "success",
      filed: grade.filed,
      wrongFiling: grade.wrongFiling,
      asked: grade.asked,
      unanswered: reply === null,
    });
    if (said.done) {
      episode.done = true;
      return { record, next: `${userLine(said.text)}\n${SESSION_OVER}` };
    }
    const [turn, expectation] = openTurn(episode.session, episode.user, said.text);
    episode.turn = turn;
    episode.expectation = expectation;
    episode.callsThisTurn = 0;
    return { record, next: userLine(said.text) };
  }

  private label(episode: Episode, reply: string | null): { record: TurnRecord; grade: TurnGrade } {
    const turn = episode.turn;
    turn.route = episode.backend.route;
    turn.reply = reply;
    const grade = gradeTurn(turn, episode.expectation);
    const record: TurnRecord = {
      turn_number: turn.number,
      is_new_goal: turn.isNewGoal,
      quality: grade.quality,
      rcof: grade.rcof,
      goal_id: turn.goal.id,
      goal_kind: turn.goal.kind,
      reason: grade.reason,
    };
    episode.records.push(record);
    return { record, grade };
  }

  /** A step's result; the end of the session or the step limit makes it the final one. */
  private result(episode: Episode, text: string, info: Record<string, unknown>): StepResult {
    if (!episode.done && episode.steps >= this.info.maxSteps) {
      // The step limit leaves the open turn unanswered: a failed turn, and the session ends.
      const { record } = this.label(episode, null);
      episode.done = true;
      const limit = `Step limit of ${this.info.maxSteps} reached; the session is over.`;
      return this.final(episode, `${text}\n${limit}`, {
        ...info,
        lastTurn: record,
        truncated: true,
      });
    }
    if (episode.done) return this.final(episode, text, info);
    return { observation: { text }, reward: 0, done: false, info };
  }

  private final(episode: Episode, text: string, info: Record<string, unknown>): StepResult {
    const goals = episode.session.goals.length;
    const groundTruth = groundTruthOf(episode);
    const achieved = groundTruth.goals.filter((g) => g.success).length;
    const reward = achieved / goals;
    return {
      observation: { text },
      reward,
      done: true,
      info: {
        ...info,
        success: reward >= this.info.successThreshold,
        goalsAchieved: achieved,
        goalCount: goals,
        groundTruth,
      },
    };
  }
}

function openTurn(
  session: Session,
  user: UserSimulator,
  message: string,
): [TurnLog & BackendTurn, Expectation] {
  const goal = user.goal;
  if (goal === undefined) throw new Error("helpdesk: no goal left to open a turn for");
  const ask = goal.kind === "policy" ? goal.asks[user.askIndex] : undefined;
  const turn: TurnLog & BackendTurn = {
    number: user.turn,
    goal,
    isNewGoal: user.isNewGoal,
    message,
    fault: plannedFault(session.taskIndex, session.seed, user.turn, goal.kind),
    faultFired: false,
    answer: ask?.answer,
    calls: [],
    route: null,
    reply: null,
  };
  let expectation: Expectation;
  switch (goal.kind) {
    case "policy":
      expectation = { kind: "policy", passageId: goal.passageId, answer: ask?.answer ?? "" };
      break;
    case "balance":
      expectation = { kind: "balance", days: session.employee.balances[goal.leaveType] };
      break;
    case "ood":
      expectation = { kind: "ood" };
      break;
    default:
      expectation = { kind: "form", slots: formSlots(goal), given: new Set(user.given) };
  }
  return [turn, expectation];
}

function groundTruthOf(episode: Episode): HelpdeskGroundTruth {
  const goals = new Map<string, GoalLabel>();
  for (const record of episode.records) {
    let goal = goals.get(record.goal_id);
    if (!goal) {
      goal = { id: record.goal_id, kind: record.goal_kind, turns: [], success: true, rcof: null };
      goals.set(record.goal_id, goal);
    }
    goal.turns.push(record.turn_number);
    if (record.quality === "failure" && goal.success) {
      goal.success = false;
      goal.rcof = record.rcof;
    }
  }
  return {
    session_id: sessionId(episode.session.taskIndex, episode.session.seed),
    goals: [...goals.values()],
    turns: episode.records.map(({ turn_number, is_new_goal, quality, rcof }) => ({
      turn_number,
      is_new_goal,
      quality,
      rcof,
    })),
  };
}
