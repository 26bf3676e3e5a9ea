/**
 * Reading RL exports back (zod): the checks a trainer's loader relies on, so that a file that
 * parses here can be trained on as docs/formats.md describes it. Every failure is one line
 * naming the item or line and the field: `line 3: messages.4.advantage: ...`.
 */
import { z } from "zod";
import { ADVANTAGE_ESTIMATORS, type AdvantageEstimator } from "../estimators/index.js";
import type { RolloutAgentTrajItem } from "./agenttraj.js";
import type { RolloutChatLine } from "./chat.js";

export class RolloutFormatError extends Error {
  override name = "RolloutFormatError";
}

const estimatorSchema = z.enum(
  ADVANTAGE_ESTIMATORS as [AdvantageEstimator, ...AdvantageEstimator[]],
);
const index = z.number().int().min(0);

// ---- AgentTraj -------------------------------------------------------------------------------

const agentTrajTurnSchema = z.object({
  from: z.enum(["human", "gpt"]),
  loss: z.boolean().nullable(),
  value: z.string(),
  advantage: z.number().optional(),
});

export const rolloutAgentTrajItemSchema: z.ZodType<RolloutAgentTrajItem> = z
  .object({
    // AgentGym reads the task index after the last "_".
    item_id: z.string().regex(/_\d+$/, "must end in _<task index>"),
    conversations: z.array(agentTrajTurnSchema),
    reward: z.number(),
    success: z.boolean(),
    group: index,
    sample: index,
    estimator: estimatorSchema,
  })
  .superRefine((item, ctx) => {
    let trained = 0;
    item.conversations.forEach((turn, i) => {
      const issue = (message: string, field: string) =>
        ctx.addIssue({ code: "custom", path: ["conversations", i, field], message });
      if (turn.from === "human" && turn.loss !== null) issue("a human turn has loss null", "loss");
      if (turn.from === "gpt" && turn.loss === null)
        issue("a gpt turn has loss true or false", "loss");
      const isTrained = turn.from === "gpt" && turn.loss === true;
      if (isTrained) trained++;
      if (isTrained && turn.advantage === undefined) {
        issue("a trained gpt turn (loss true) carries its advantage", "advantage");
      }
      if (!isTrained && turn.advantage !== undefined) {
        issue("only trained gpt turns (loss true) carry an advantage", "advantage");
      }
    });
    if (trained === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["conversations"],
        message: "no trained gpt turn (loss true)",
      });
    }
  });

/** One item, already parsed from JSON. */
export function parseRolloutAgentTrajItem(value: unknown): RolloutAgentTrajItem {
  const result = rolloutAgentTrajItemSchema.safeParse(value);
  if (result.success) return result.data;
  throw new RolloutFormatError(firstIssue(result.error));
}

/** A whole AgentTraj file: one JSON array of items. */
export function parseRolloutAgentTraj(text: string): RolloutAgentTrajItem[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RolloutFormatError(`not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(value)) {
    throw new RolloutFormatError("an AgentTraj file is one JSON array of items");
  }
  return value.map((item, i) => {
    try {
      return parseRolloutAgentTrajItem(item);
    } catch (error) {
      const id = (item as { item_id?: unknown } | null)?.item_id;
      const named = typeof id === "string" ? ` (${id})` : "";
      throw new RolloutFormatError(`item ${i}${named}: ${(error as Error).message}`);
    }
  });
}

// ---- Chat JSONL ------------------------------------------------------------------------------

const ASSISTANT_ONLY = ["advantage", "return", "logprob", "token_ids", "token_logprobs"] as const;

const chatMessageSchema = z
  .object({
    role: z.enum(["system", "user", "assistant"]),
    content: z.string(),
    mask: z.union([z.literal(0), z.literal(1)]),
    advantage: z.number().optional(),
    return: z.number().optional(),
    logprob: z.number().optional(),
    token_ids: z.array(index).optional(),
    token_logprobs: z.array(z.number()).optional(),
  })
  .superRefine((message, ctx) => {
    const issue = (message: string, field: string) =>
      ctx.addIssue({ code: "custom", path: [field], message });
    const assistant = message.role === "assistant";
    const expected = assistant ? 1 : 0;
    if (message.mask !== expected) issue(`a ${message.role} message has mask ${expected}`, "mask");
    if (assistant) {
      if (message.advantage === undefined)
        issue("an assistant message carries its advantage", "advantage");
      if (message.return === undefined) issue("an assistant message carries its return", "return");
      const ids = message.token_ids;
      const logprobs = message.token_logprobs;
      if (ids && logprobs && ids.length !== logprobs.length) {
        issue(`${logprobs.length} token_logprobs for ${ids.length} token_ids`, "token_logprobs");
      }
    } else {
      for (const field of ASSISTANT_ONLY) {
        if (message[field] !== undefined) issue(`only assistant messages carry ${field}`, field);
      }
    }
  });

export const rolloutChatLineSchema: z.ZodType<RolloutChatLine> = z
  .object({
    env: z.string().min(1),
    env_version: z.string(),
    task: index,
    group: index,
    sample: index,
    reset_seed: z.number().int(),
    reward: z.number(),
    success: z.boolean(),
    end: z.enum(["done", "horizon"]),
    estimator: estimatorSchema,
    messages: z.array(chatMessageSchema),
  })
  .superRefine((line, ctx) => {
    const roles = line.messages.map((m) => m.role);
    if (roles[0] !== "system") {
      ctx.addIssue({
        code: "custom",
        path: ["messages", 0, "role"],
        message: "the first message is the system message (the instruction)",
      });
    }
    if (!roles.includes("assistant")) {
      ctx.addIssue({ code: "custom", path: ["messages"], message: "no assistant message" });
    }
  });

/** One line's object, already parsed from JSON. */
export function parseRolloutChatLine(value: unknown): RolloutChatLine {
  const result = rolloutChatLineSchema.safeParse(value);
  if (result.success) return result.data;
  throw new RolloutFormatError(firstIssue(result.error));
}

/** A whole chat JSONL file; blank lines are skipped, line numbers count from 1. */
export function parseRolloutChat(text: string): RolloutChatLine[] {
  const lines: RolloutChatLine[] = [];
  text.split("\n").forEach((raw, i) => {
    if (raw.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new RolloutFormatError(`line ${i + 1}: not JSON: ${(error as Error).message}`);
    }
    try {
      lines.push(parseRolloutChatLine(value));
    } catch (error) {
      throw new RolloutFormatError(`line ${i + 1}: ${(error as Error).message}`);
    }
  });
  return lines;
}

/** The first problem, as `path.to.field: message` (or the message alone at the top). */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const path = issue.path.map(String).join(".");
  return path === "" ? issue.message : `${path}: ${issue.message}`;
}
