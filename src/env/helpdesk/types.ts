/** The helpdesk's shared types: goals, sub-agents and the ground-truth labels. */
import type { LeaveType } from "./data.js";

/**
 * Root causes of failure (after "Mind the Goal"): E1 language understanding failure, E2
 * refusal to answer, E3 incorrect retrieval, E4 retrieval failure, E5 system error (timeout,
 * truncation), E6 incorrect routing, E7 out-of-domain query.
 */
export type Rcof = "E1" | "E2" | "E3" | "E4" | "E5" | "E6" | "E7";
export const RCOF_CODES: readonly Rcof[] = ["E1", "E2", "E3", "E4", "E5", "E6", "E7"];

/**
 * policy: a handbook question (and maybe a follow-up on the same passage); balance: a leave
 * balance lookup; leave: a leave request filled slot by slot; ticket: an IT ticket, likewise;
 * ood: an out-of-domain question the assistant should decline.
 */
export type GoalKind = "policy" | "balance" | "leave" | "ticket" | "ood";
export const GOAL_KINDS: readonly GoalKind[] = ["policy", "balance", "leave", "ticket", "ood"];

/** The sub-agents the router can hand a request to. */
export type SubAgent = "policy" | "leave" | "it";
export const SUB_AGENTS: readonly SubAgent[] = ["policy", "leave", "it"];

/** The sub-agent that serves each in-domain goal kind. */
export const AGENT_FOR: Readonly<Record<Exclude<GoalKind, "ood">, SubAgent>> = {
  policy: "policy",
  balance: "leave",
  leave: "leave",
  ticket: "it",
};

export type LeaveSlot = "type" | "start" | "end";
export const LEAVE_SLOTS: readonly LeaveSlot[] = ["type", "start", "end"];
export type TicketSlot = "category" | "urgency" | "location";
export const TICKET_SLOTS: readonly TicketSlot[] = ["category", "urgency", "location"];

export interface PolicyGoal {
  kind: "policy";
  id: string;
  passageId: string;
  /** The facts asked, in order: the question, then maybe a follow-up on the same passage. */
  asks: { answer: string; question: string; rephrase: string }[];
}

export interface BalanceGoal {
  kind: "balance";
  id: string;
  leaveType: LeaveType;
  question: string;
}

export interface LeaveGoal {
  kind: "leave";
  id: string;
  values: Record<LeaveSlot, string>;
  /** Slots the user states in the opening message. */
  given: LeaveSlot[];
  template: number;
}

export interface TicketGoal {
  kind: "ticket";
  id: string;
  values: Record<TicketSlot, string>;
  problem: string;
  /** Slots stated in the opening; the category always is, through the problem. */
  given: TicketSlot[];
  template: number;
}

export interface OodGoal {
  kind: "ood";
  id: string;
  question: string;
}

export type Goal = PolicyGoal | BalanceGoal | LeaveGoal | TicketGoal | OodGoal;

/** One turn's ground-truth label, in the shape goal-oriented evaluation uses. */
export interface TurnLabel {
  /** 1-based user turn. */
  turn_number: number;
  is_new_goal: boolean;
  quality: "success" | "failure";
  rcof: Rcof | null;
}

export interface GoalLabel {
  id: string;
  kind: GoalKind;
  /** The goal's turns (turn numbers), in order. */
  turns: number[];
  success: boolean;
  /** The cause of the goal's earliest failed turn, null when it succeeded. */
  rcof: Rcof | null;
}

/** What a finished episode's info carries under `groundTruth`. */
export interface HelpdeskGroundTruth {
  session_id: string;
  goals: GoalLabel[];
  turns: TurnLabel[];
}

/** A labelled turn as the reply step's info carries it: the label plus its goal and reason. */
export interface TurnRecord extends TurnLabel {
  goal_id: string;
  goal_kind: GoalKind;
  reason: string;
}
