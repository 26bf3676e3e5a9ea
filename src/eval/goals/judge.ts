/**
 * A teacher judge: one model that labels every turn of a conversation, guided by the rubric and
 * the taxonomy. It reasons first, then answers one JSON object `{turns: [{turn_number,
 * is_new_goal, quality, rcof, rationale}]}`, which must pass the labels' checks (labels.ts: one
 * label per turn, numbered 1..n, rcof a code of the taxonomy on a failure and null on a success).
 * An answer that does not is sent back once or twice with the reason ("bad JSON" retries); a
 * provider error (after the model layer's own retries of 429s, 5xx and timeouts) or answers
 * that stay unusable make the judgement an error, never a label.
 */
import type { GenerationParams } from "../../model/types.js";
import { askForAnswer, type Judge, type JudgeUsage } from "../judge-loop.js";
import type { Conversation, ConversationTurn } from "./conversation.js";
import { type LabelNormalisation, parseJudgeAnswer, type TurnLabel } from "./labels.js";
import { type Rubric, renderRubric } from "./rubric.js";
import type { Taxonomy } from "./taxonomy.js";

// The judge loop's pieces live in ../judge-loop.ts (BLADE's judges share them); importable from
// here too, as before.
export {
  DEFAULT_ANSWER_ATTEMPTS,
  extractAnswer,
  type Judge,
  JudgeError,
  type JudgeUsage,
} from "../judge-loop.js";

/** A tool result longer than this is cut in the prompt (the judge needs its gist, not its bulk). */
export const TOOL_RESULT_CHARS = 2000;
/** The assistant's system prompt, as context, is cut beyond this. */
export const SYSTEM_PROMPT_CHARS = 4000;

export interface JudgeSettings {
  rubric: Rubric;
  taxonomy: Taxonomy;
  /** Answers asked for before the judgement errors (default 3). */
  answerAttempts?: number;
  /** Per-request parameters over the model's configured ones. */
  params?: GenerationParams;
}

export interface Judgement {
  labels: TurnLabel[];
  /** Changes the checks made instead of rejecting (a first turn said not to start a goal). */
  normalised: LabelNormalisation[];
  /** The accepted reply's text before its JSON: the judge's reasoning. */
  reasoning: string;
  /** Answers asked for (1 = the first was usable). */
  answers: number;
  /** Why each rejected answer was rejected, in order. */
  rejected: readonly string[];
  spend: JudgeUsage;
}

function cut(text: string, limit: number): string {
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)} [... ${text.length - limit} more characters]`;
}

function renderTurn(turn: ConversationTurn): string {
  const lines = [`### Turn ${turn.turn_number}`, `User: ${turn.user}`];
  const results = [...(turn.tool_results ?? [])];
  for (const call of turn.tool_calls ?? []) {
    lines.push(`Assistant called ${call.name}(${call.arguments})`);
    const index = results.findIndex((r) =>
      call.id !== undefined && r.tool_call_id !== undefined
        ? r.tool_call_id === call.id
        : r.name === undefined || r.name === call.name,
    );
    if (index !== -1) {
      const [result] = results.splice(index, 1);
      lines.push(`Result: ${cut((result as { content: string }).content, TOOL_RESULT_CHARS)}`);
    }
  }
  for (const result of results) {
    lines.push(
      `Result${result.name ? ` of ${result.name}` : ""}: ${cut(result.content, TOOL_RESULT_CHARS)}`,
    );
  }
  lines.push(
    turn.assistant.trim() === "" ? "Assistant: (no reply)" : `Assistant: ${turn.assistant}`,
  );
  return lines.join("\n");
}

/** The conversation as the judge reads it: numbered turns, tool calls and results in order. */
export function renderConversation(conversation: Conversation): string {
  const parts: string[] = [];
  if (conversation.system?.trim()) {
    parts.push(
      `(The assistant's instructions: ${cut(conversation.system.trim(), SYSTEM_PROMPT_CHARS)})`,
    );
  }
  if (conversation.opening?.trim())
    parts.push(`(Before turn 1) Assistant: ${conversation.opening}`);
  for (const turn of conversation.turns) parts.push(renderTurn(turn));
  if (conversation.closing?.trim()) {
    parts.push(`(After the last turn, unanswered) User: ${conversation.closing}`);
  }
  return parts.join("\n\n");
}

function renderTaxonomy(taxonomy: Taxonomy): string {
  return taxonomy.codes
    .map((c) => `- ${c.code}${c.group ? ` [${c.group}]` : ""}: ${c.name}. ${c.definition}`)
    .join("\n");
}

const ANSWER_SHAPE =
  '{"turns": [{"turn_number": 1, "is_new_goal": true, "quality": "success", "rcof": null, "rationale": "..."}, ...]}';

/** The judge's instructions: the rubric, the taxonomy, the procedure and the answer's shape. */
export function judgeSystemPrompt(rubric: Rubric, taxonomy: Taxonomy): string {
  return [
    "You are a teacher judge. You evaluate a conversation between a user and an assistant, goal by goal: which turns pursue which user goal, and whether the assistant met the user's need at each turn. Domain experts wrote the rubric below; follow it.",
    "",
    renderRubric(rubric),
    "",
    `## Root causes of failure (taxonomy "${taxonomy.name}")`,
    renderTaxonomy(taxonomy),
    "",
    "## Procedure",
    "1. Think first, in prose: find the user's goals and where each starts; for every turn, weigh the assistant's reply (and its tool calls) against the standards; for a failed turn, find the root cause: the earliest thing that went wrong in that turn.",
    "2. Then give your answer as one JSON object, last in your reply, in a ```json block:",
    ANSWER_SHAPE,
    "- one entry per turn, turn_number 1..n in order, no turn left out;",
    "- is_new_goal: true when the turn starts a new user goal (always true for turn 1);",
    '- quality: "success" or "failure";',
    `- rcof: on a failure, exactly one code of the taxonomy (${taxonomy.codes.map((c) => c.code).join(", ")}); null on a success;`,
    "- rationale: one or two sentences on why.",
  ].join("\n");
}

/** The user message: the conversation and how many turns the answer must cover. */
export function judgeUserPrompt(conversation: Conversation): string {
  const n = conversation.turns.length;
  return [
    `Conversation ${conversation.id}, ${n} turn${n === 1 ? "" : "s"}:`,
    "",
    renderConversation(conversation),
    "",
    `Reason first, then answer with the JSON object covering turns 1..${n}.`,
  ].join("\n");
}

export interface JudgeCallOptions {
  signal?: AbortSignal;
  /**
   * The judge's position in its ensemble: sent as the request's sample index, so that the same
   * model serving as two judges makes two draws (and two cache entries), not one.
   */
  index?: number;
}

/** One judge's labels for one conversation, or a JudgeError. */
export async function judgeConversation(
  judge: Judge,
  conversation: Conversation,
  settings: JudgeSettings,
  options: JudgeCallOptions = {},
): Promise<Judgement> {
  const expectedTurns = conversation.turns.length;
  const answered = await askForAnswer(
    judge,
    {
      system: judgeSystemPrompt(settings.rubric, settings.taxonomy),
      user: judgeUserPrompt(conversation),
      check: (value) => parseJudgeAnswer(value, { taxonomy: settings.taxonomy, expectedTurns }),
      reminder: `one JSON object ${ANSWER_SHAPE.replace(", ...]}", "]}")} covering turns 1..${expectedTurns}, one entry per turn.`,
    },
    {
      answerAttempts: settings.answerAttempts,
      params: settings.params,
      signal: options.signal,
      index: options.index,
    },
  );
  return {
    labels: answered.value.turns,
    normalised: answered.value.normalised,
    reasoning: answered.reasoning,
    answers: answered.answers,
    rejected: answered.rejected,
    spend: answered.spend,
  };
}
