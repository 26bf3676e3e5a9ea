/**
 * The helpdesk environment: it plays the simulated employee and the company's backend; the
 * agent is the assistant. Each reply closes a user turn, which is labelled at once (quality
 * and root cause, see grading.ts); the episode ends when the employee has no goal left, and
 * its final info carries the ground truth of the whole session. An optional voice (voice.ts)
 * phrases the employee's messages; what they mean, and so every label, stays the state
 * machine's.
 */
import { parseAction } from "../todo/action.js";
import { weekdayOf } from "../todo/dates.js";
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
import { formSlots, type UserMessage, UserSimulator } from "./user.js";
import {
  type ConversationMessage,
  describeGoal,
  mustKeepFacts,
  type UserSituation,
  type UserVoice,
  userModelInfo,
} from "./voice.js";

interface Episode {
  session: Session;
  user: UserSimulator;
  backend: BackendState;
  turn: TurnLog & BackendTurn;
  expectation: Expectation;
  records: TurnRecord[];
  /** The messages sent so far and the assistant's replies: what a voice is shown. */
  conversation: ConversationMessage[];
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

export interface HelpdeskEnvOptions {
  /**
   * Phrases each message the assistant reads (an LLM user, see voice.ts); the version then
   * reads `1.0.0+user-model`. Without one, the state machine's messages are sent as they are.
   */
  voice?: UserVoice;
}

export class HelpdeskEnv implements Env {
  readonly info: EnvInfo;
  private episode: Episode | undefined;
  private readonly voice: UserVoice | undefined;
  /** Aborted by the next reset and by close: a voice call the runner abandoned stops there. */
  private calls = new AbortController();

  constructor(options: HelpdeskEnvOptions = {}) {
    this.voice = options.voice;
    this.info = this.voice ? userModelInfo(HELPDESK_INFO) : HELPDESK_INFO;
  }

  async reset(taskIndex: number, options: ResetOptions = {}): Promise<Observation> {
    checkTaskIndex(this.info, taskIndex);
    this.calls.abort(new EnvError("helpdesk: the episode was reset"));
    const calls = new AbortController();
    this.calls = calls;
    this.episode = undefined;
    const seed = options.seed ?? 0;
    const session = generateSession(taskIndex, seed);
    const user = new UserSimulator(session);
    const intent = user.open();
    const conversation: ConversationMessage[] = [];
    const message = await this.phrase(session, user, conversation, intent, {
      opensSession: true,
      newGoal: true,
      retry: false,
      unanswered: false,
    });
    // A reset abandoned while its voice call ran must not replace the episode after it.
    if (calls.signal.aborted) throw calls.signal.reason;
    conversation.push({ role: "user", text: message });
    const backend: BackendState = { session, route: null, filed: 0 };
    const [turn, expectation] = openTurn(session, user, message);
    this.episode = {
      session,
      user,
      backend,
      turn,
      expectation,
      records: [],
      conversation,
      steps: 0,
      callsThisTurn: 0,
      done: false,
    };
    return { text: `${sessionHeader(session)}\n${userLine(message)}` };
  }

  async close(): Promise<void> {
    this.calls.abort(new EnvError("helpdesk: the environment was closed"));
  }

  /** The message as the voice phrases it, or the intent itself without a voice. */
  private async phrase(
    session: Session,
    user: UserSimulator,
    conversation: readonly ConversationMessage[],
    intent: string,
    situation: UserSituation,
  ): Promise<string> {
    if (!this.voice) return intent;
    const goal = user.goal;
    if (goal === undefined) throw new Error("helpdesk: no goal left to phrase a message for");
    const data = helpdeskData();
    const said = await this.voice.say(
      {
        employee: { name: session.employee.name, id: session.employee.id },
        company: data.company,
        assistant: data.assistant,
        goal: describeGoal(goal, user.askIndex),
        intent,
        facts: mustKeepFacts(intent),
        situation,
        history: [...conversation],
        turn: user.turn,
      },
      this.calls.signal,
    );
    // One line: the observation's "User: ..." line holds the whole message.
    const text = said.replace(/\s+/g, " ").trim();
    if (text === "") throw new EnvError("helpdesk: the user's voice gave an empty message");
    return text;
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
        return await this.reply(episode, message);
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
      const { record, next } = await this.closeTurn(episode, null);
      info.turn = record;
      return this.result(episode, `${text}\n${NO_REPLY}\n${next}`, info);
    }
    // The observation is the tool's answer (or an error line), not the employee speaking: the
    // turn goes on (how `clade goals --format run` groups steps into turns).
    info.tool_result = true;
    return this.result(episode, text, info);
  }

  private async reply(episode: Episode, message: string): Promise<StepResult> {
    const { record, next } = await this.closeTurn(episode, message);
    return this.result(episode, next, { tool: "reply", turn: record });
  }

  /** Labels the open turn, lets the user react, and opens the next turn (or ends the session). */
  private async closeTurn(
    episode: Episode,
    reply: string | null,
  ): Promise<{ record: TurnRecord; next: string }> {
    const { record, grade } = this.label(episode, reply);
    if (reply !== null) episode.conversation.push({ role: "assistant", text: reply });
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
    // At the step limit the session ends with this message unanswered: it is not phrased.
    const text =
      episode.steps >= this.info.maxSteps
        ? said.text
        : await this.phrase(
            episode.session,
            episode.user,
            episode.conversation,
            said.text,
            situationOf(episode.user, said, reply === null),
          );
    episode.conversation.push({ role: "user", text });
    const [turn, expectation] = openTurn(episode.session, episode.user, text);
    episode.turn = turn;
    episode.expectation = expectation;
    episode.callsThisTurn = 0;
    return { record, next: userLine(text) };
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

function situationOf(user: UserSimulator, said: UserMessage, unanswered: boolean): UserSituation {
  return {
    opensSession: false,
    newGoal: user.isNewGoal,
    retry: said.kind === "retry",
    kind: said.kind,
    ...(said.previous ? { previousGoal: said.previous } : {}),
    unanswered,
  };
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
