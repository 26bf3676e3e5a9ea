/**
 * The raw conversation the goal judges read (issue 13): turns of one user message and everything
 * the assistant did until its next reply to the user, with the labels that came with the data.
 *
 * A turn starts at a user message and runs until the next user message: the assistant's text
 * (its messages joined), then its tool calls and the tools' results, in order. Consecutive user
 * messages with nothing from the assistant between them are one turn's user text. What has no
 * turn to belong to is kept beside the turns: the system prompt (`system`), assistant text before
 * the first user message (`opening`, a greeting) and user text after the last assistant action
 * (`closing`: τ-bench's final `###STOP###` message, a goodbye nobody answered, the observation
 * after an episode's last action).
 *
 * Field names are snake_case where they meet the judges' JSON (`turn_number`, `is_new_goal`,
 * `rcof`, ...), as in the reference's judge output.
 */

import { z } from "zod";
import type { TurnLabelFields } from "./labels.js";

/** Where conversations come from: `clade goals SOURCE --format ...`. */
export type ConversationFormat = "chat" | "tau" | "dialogues" | "run";
export const CONVERSATION_FORMATS: readonly ConversationFormat[] = [
  "chat",
  "tau",
  "dialogues",
  "run",
];

export const conversationToolCallSchema = z.object({
  /** The call's id where the data gave one (OpenAI's `call_...`); τ-bench reuses ids. */
  id: z.string().optional(),
  name: z.string(),
  /** The arguments as text: OpenAI's JSON string as given, anything else as JSON. */
  arguments: z.string(),
});
export type ConversationToolCall = z.infer<typeof conversationToolCallSchema>;

export const conversationToolResultSchema = z.object({
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
  content: z.string(),
});
export type ConversationToolResult = z.infer<typeof conversationToolResultSchema>;

export const conversationTurnSchema = z.object({
  /** 1-based position in the conversation. */
  turn_number: z.number().int().min(1),
  user: z.string(),
  /** The assistant's text to the user in this turn; empty when it only called tools. */
  assistant: z.string(),
  tool_calls: z.array(conversationToolCallSchema).optional(),
  tool_results: z.array(conversationToolResultSchema).optional(),
});
export type ConversationTurn = z.infer<typeof conversationTurnSchema>;

export const turnQualitySchema = z.enum(["success", "failure"]);
export type TurnQuality = z.infer<typeof turnQualitySchema>;

/**
 * One turn's label as it came with the data: the judges' label fields without the rationale.
 * `rcof` is null on a successful turn, and on a failed one whose cause the data does not give.
 */
export const groundTruthLabelSchema = z.object({
  turn_number: z.number().int().min(1),
  is_new_goal: z.boolean(),
  quality: turnQualitySchema,
  rcof: z.string().min(1).nullable(),
});
/** The judge's label without its rationale (labels.ts): ground truth and judges compare field by field. */
export type GroundTruthLabel = TurnLabelFields;

/**
 * Labels that came with the data. `outcome`: one goal spanning the whole conversation, succeeded
 * or not (τ-bench's reward, a clade episode's outcome); `turns`: a label per turn (labelled
 * dialogues, an environment's injected faults), goals starting where `is_new_goal` is true.
 */
export const groundTruthSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("outcome"), reward: z.number(), success: z.boolean() }),
  z.object({ kind: z.literal("turns"), labels: z.array(groundTruthLabelSchema) }),
]);
export type GroundTruth = z.infer<typeof groundTruthSchema>;

export const conversationSourceSchema = z.object({
  format: z.enum(CONVERSATION_FORMATS as [ConversationFormat, ...ConversationFormat[]]),
  /** The file it was read from, as the user named it. */
  file: z.string().optional(),
  /** The clade run it was read from (format "run"). */
  runId: z.string().optional(),
  /**
   * The record within the source, as error messages name it: `line 3`, `record 3 (task_id 12)`,
   * `dialogue 2 (dialogue_id d7)`, `episode 12 (task 3, sample 0)`.
   */
  record: z.string(),
});
export type ConversationSource = z.infer<typeof conversationSourceSchema>;

export const conversationSchema = z
  .object({
    /** Unique within one import: the line's id, `${task_id}#${trial}`, the dialogue_id, `task/sample`. */
    id: z.string().min(1),
    source: conversationSourceSchema,
    system: z.string().optional(),
    opening: z.string().optional(),
    turns: z.array(conversationTurnSchema).min(1),
    closing: z.string().optional(),
    groundTruth: groundTruthSchema.optional(),
    /** What else the record carried (a chat line's metadata, τ-bench's info), as given. */
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((conversation, ctx) => {
    conversation.turns.forEach((turn, i) => {
      if (turn.turn_number !== i + 1) {
        ctx.addIssue({
          code: "custom",
          path: ["turns", i, "turn_number"],
          message: `expected ${i + 1}`,
        });
      }
    });
    const truth = conversation.groundTruth;
    if (truth?.kind !== "turns") return;
    if (truth.labels.length !== conversation.turns.length) {
      ctx.addIssue({
        code: "custom",
        path: ["groundTruth", "labels"],
        message: `${truth.labels.length} labels for ${conversation.turns.length} turns`,
      });
    }
    truth.labels.forEach((label, i) => {
      const issue = (field: string, message: string) =>
        ctx.addIssue({ code: "custom", path: ["groundTruth", "labels", i, field], message });
      if (label.turn_number !== i + 1) issue("turn_number", `expected ${i + 1}`);
      if (i === 0 && !label.is_new_goal)
        issue("is_new_goal", "the first turn always starts a goal");
      if (label.quality === "success" && label.rcof !== null) {
        issue("rcof", "a successful turn has no root cause");
      }
    });
  });
export type Conversation = z.infer<typeof conversationSchema>;

/**
 * τ-bench's success rule, as its `display_metrics` computes pass^k (tau_bench/run.py,
 * `is_successful`): the reward is 1 within 1e-6. Its rewards are 0 or 1 (a product of 0/1
 * checks), so this is "reward ≥ 1" up to floating-point error.
 */
export const TAU_SUCCESS_TOLERANCE = 1e-6;
export function tauSuccess(reward: number): boolean {
  return Math.abs(reward - 1) <= TAU_SUCCESS_TOLERANCE;
}
