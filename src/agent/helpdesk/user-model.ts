/**
 * An LLM as the helpdesk's simulated employee (`clade eval --env helpdesk --user-model SPEC`),
 * after τ-bench's simulated users: the environment's state machine decides what the employee
 * means (the intent, with every fact to convey) and the model says it in its own words. Each
 * message is checked (checkUserMessage); a message that fails is asked for once more with a
 * one-line correction, and a second failure is an error, which ends the episode as an error
 * (never a failure, never the rule-based text in its place).
 *
 * withModelUser wires such a voice into a run: every episode's helpdesk gets a voice of its own
 * whose calls go through a recorder that the episode's agent hands to the runner with its own,
 * so the user's calls are stored with the episode (model `user:<id>`) and priced like any other.
 */
import {
  HELPDESK_INFO,
  HelpdeskEnv,
  keptFact,
  type MustKeepFact,
  mustKeepFacts,
  type UserVoice,
  type UserVoiceRequest,
  userModelInfo,
} from "../../env/helpdesk/index.js";
import { type Env, type EnvDefinition, NotResetError } from "../../env/types.js";
import { CallRecorder, type ModelCallRecord } from "../../model/call-record.js";
import type { ChatMessage, GenerationParams, Model } from "../../model/types.js";
import type { AgentFactory } from "../registry.js";
import type { Agent } from "../types.js";

/** Marks the user model's calls among a run's calls (and its rows in the usage reports). */
export const USER_CALL_PREFIX = "user:";

/** A message longer than this many times its intent (and than MIN_MAX_CHARS) is refused. */
const MAX_LENGTH_RATIO = 4;
const MIN_MAX_CHARS = 400;

export class UserVoiceError extends Error {
  override name = "UserVoiceError";
}

export interface ModelUserVoiceOptions {
  /** Generation parameters over the model's own (clade.config's). */
  params?: GenerationParams;
  /** The episode's sample: part of the cache key, so that samples stay independent draws. */
  sampleIndex?: number;
}

/** The system prompt: who the model plays and the rules of a message (τ-bench's, adapted). */
export function userVoiceSystemPrompt(request: UserVoiceRequest): string {
  const { employee, company, assistant } = request;
  return [
    `You are ${employee.name} (employee id ${employee.id}), an employee of ${company}, chatting with ${assistant}, the company's internal helpdesk assistant.`,
    "You play the employee, never the assistant. Each time you are told what your next message must say (the intent); write that message in your own words, as the employee would type it into the chat.",
    "Rules:",
    "- Write one message only: plain text, no quotation marks, no name or role before it, no notes.",
    "- Keep every fact of the intent exactly as written: employee ids, dates (YYYY-MM-DD), numbers, leave types, offices, urgency and the problem you describe.",
    "- Say nothing the intent does not say: add no facts, dates, numbers or requests, and do not answer questions the intent does not answer.",
    "- Sound natural and vary your wording, but do not repeat the intent word for word.",
    `- Never reply as ${assistant}, never mention these instructions or the intent, and never say you are an AI.`,
  ].join("\n");
}

function situationLine(request: UserVoiceRequest): string {
  const s = request.situation;
  const parts: string[] = [];
  if (s.opensSession) {
    parts.push("This is your first message: greet the assistant, introduce yourself, then ask.");
  }
  if (s.unanswered) parts.push("The assistant has not answered your last message.");
  if (s.previousGoal === "achieved") parts.push("The assistant solved your previous request.");
  if (s.previousGoal === "abandoned") parts.push("You gave up on your previous request.");
  if (s.kind === "next-goal") parts.push("You now move on to a new request.");
  if (s.kind === "retry") parts.push("The assistant's last reply did not help: you ask again.");
  if (s.kind === "answer") parts.push("You give the details the assistant asked for.");
  if (s.kind === "follow-up") parts.push("You ask a follow-up question.");
  return parts.join(" ");
}

function transcript(request: UserVoiceRequest): string {
  if (request.history.length === 0) return "(nothing yet)";
  return request.history
    .map((m) => `${m.role === "user" ? "You" : request.assistant}: ${m.text}`)
    .join("\n");
}

const factList = (facts: readonly MustKeepFact[]) => facts.map((f) => f.label).join(", ");

/** The user message of a request: the conversation, the goal and what to say now. */
export function userVoicePrompt(request: UserVoiceRequest): string {
  return [
    `Conversation so far:\n${transcript(request)}`,
    "",
    `What you want: ${request.goal}.`,
    situationLine(request),
    `Your next message must say: ${request.intent}`,
    ...(request.facts.length > 0 ? [`Keep exactly: ${factList(request.facts)}.`] : []),
    "Write your next message now.",
  ]
    .filter((line, i) => line !== "" || i === 1)
    .join("\n");
}

const QUOTES = /^\s*["'“”‘’`]+|["'“”‘’`]+\s*$/g;
const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The reply with quotes and a role or name prefix ("Employee:", "**Priya:**") taken off. */
export function cleanUserMessage(reply: string, request: UserVoiceRequest): string {
  const names = [request.employee.name, request.employee.name.split(" ")[0] ?? ""]
    .filter((n) => n !== "")
    .map(escapeRegex);
  const prefix = new RegExp(
    `^\\s*(?:\\*\\*)?(?:employee|user|me|you|message|${names.join("|")})(?:\\*\\*)?\\s*:\\s*(?:\\*\\*)?`,
    "i",
  );
  let text = reply.trim().replace(QUOTES, "").trim();
  text = text.replace(prefix, "").trim().replace(QUOTES, "").trim();
  return text.replace(/\s+/g, " ");
}

/** Speaking as the assistant: a role line, or a tool call in the assistant's format. */
const AS_ASSISTANT = (assistant: string) =>
  new RegExp(
    `(?:^|\\n)\\s*(?:\\*\\*)?(?:assistant|agent|${escapeRegex(assistant)})(?:\\*\\*)?\\s*:|Action Input:`,
    "i",
  );
/**
 * Talk about the task instead of the message itself ("Let me rephrase" is left alone: an
 * employee asking again says it).
 */
const META =
  /\b(?:as an ai|language model|the intent|here(?:'s| is) (?:the|my|your|a) (?:message|reply|version))\b/i;

/** Facts a message states that the intent does not (a date, an id, a type it made up). */
const INVENTABLE = new Set(["employee-id", "date", "number", "leave-type", "urgency", "location"]);
/** Facts of the assistant's that the employee may quote back (a request id, a figure). */
const QUOTABLE = new Set(["employee-id", "date", "number"]);

/**
 * Facts the message may state: the intent's, the employee's earlier messages' (saying them
 * again misleads no one), and the ids, dates and numbers the assistant wrote.
 */
function knownFacts(request: UserVoiceRequest): Set<string> {
  const key = (f: MustKeepFact) => `${f.kind}:${f.value.toLowerCase()}`;
  const known = new Set(request.facts.map(key));
  for (const message of request.history) {
    for (const fact of mustKeepFacts(message.text)) {
      if (message.role === "user" || QUOTABLE.has(fact.kind)) known.add(key(fact));
    }
  }
  return known;
}

export type UserMessageCheck = { ok: true; text: string } | { ok: false; problems: string[] };

/**
 * Whether a reply is a usable employee message: not empty once cleaned, at most
 * max(400, 4 × the intent's) characters, not in the assistant's voice nor about the task, with
 * every must-keep fact of the intent (request.facts), and stating no id, date, number, leave
 * type, urgency or location that neither the intent nor the conversation so far holds
 * (knownFacts): an invented detail would tell the assistant what the state machine never gave.
 */
export function checkUserMessage(reply: string, request: UserVoiceRequest): UserMessageCheck {
  const text = cleanUserMessage(reply, request);
  if (text === "") return { ok: false, problems: ["the message is empty"] };
  const problems: string[] = [];
  const max = Math.max(MIN_MAX_CHARS, MAX_LENGTH_RATIO * request.intent.length);
  if (text.length > max)
    problems.push(`it is too long (${text.length} characters; at most ${max})`);
  if (AS_ASSISTANT(request.assistant).test(reply)) {
    problems.push(`it speaks as ${request.assistant}, not as the employee`);
  }
  if (META.test(text)) problems.push("it talks about the task instead of being the message");
  const missing = request.facts.filter((fact) => !keptFact(text, fact));
  if (missing.length > 0) problems.push(`it leaves out ${factList(missing)}`);
  const known = knownFacts(request);
  const added = mustKeepFacts(text).filter(
    (f) => INVENTABLE.has(f.kind) && !known.has(`${f.kind}:${f.value.toLowerCase()}`),
  );
  if (added.length > 0) problems.push(`it adds ${factList(added)}, which the intent does not say`);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, text };
}

/**
 * A voice backed by a model: one call per message, and one more with a correction when the
 * first reply fails its checks; UserVoiceError when the second fails too.
 */
export function createModelUserVoice(model: Model, options: ModelUserVoiceOptions = {}): UserVoice {
  return {
    async say(request, signal) {
      const messages: ChatMessage[] = [
        { role: "system", content: userVoiceSystemPrompt(request) },
        { role: "user", content: userVoicePrompt(request) },
      ];
      const ask = () =>
        model.complete(
          {
            messages: [...messages],
            ...(options.params ? { params: options.params } : {}),
            ...(options.sampleIndex !== undefined ? { sampleIndex: options.sampleIndex } : {}),
          },
          signal,
        );
      const first = await ask();
      const checked = checkUserMessage(first.content, request);
      if (checked.ok) return checked.text;
      messages.push(
        { role: "assistant", content: first.content.trim() === "" ? "(empty)" : first.content },
        {
          role: "user",
          content: `That message cannot be sent: ${checked.problems.join("; ")}. Write the employee's message again: one message, every fact kept exactly, nothing added.`,
        },
      );
      const second = await ask();
      const rechecked = checkUserMessage(second.content, request);
      if (rechecked.ok) return rechecked.text;
      throw new UserVoiceError(
        `the user model's message for turn ${request.turn} failed its checks twice: ${rechecked.problems.join("; ")}`,
      );
    },
  };
}

export interface ModelUserSetup {
  /** The user model's client, shared by the run's episodes (one limiter, one cache). */
  model: Model;
  options?: Omit<ModelUserVoiceOptions, "sampleIndex">;
}

/** The user's calls, marked as the user's: `user:<model id>`. */
function asUserCalls(calls: readonly ModelCallRecord[]): ModelCallRecord[] {
  return calls.map((call) => ({ ...call, model: `${USER_CALL_PREFIX}${call.model}` }));
}

/**
 * The helpdesk with a model as its user, and the agent paired with it for a run: each episode's
 * agent opens a recorder for the user's calls; the episode's reset takes it (the runner creates
 * an episode's agent and resets the worker's env in the same tick, matched by (task, seed) in
 * creation order), and the agent hands the user's calls to the runner before its own, so they
 * are stored with the episode, tagged with the turn whose observation holds the message they
 * phrased. The environment's version reads `+user-model`.
 */
export function withModelUser(
  env: EnvDefinition,
  agent: AgentFactory,
  setup: ModelUserSetup,
): { env: EnvDefinition; agent: AgentFactory } {
  if (env.info.name !== HELPDESK_INFO.name) {
    throw new UserVoiceError(
      `a user model applies to the helpdesk environment only, not "${env.info.name}"`,
    );
  }
  const info = userModelInfo(env.info);
  /** Recorders of episodes whose agent exists and whose reset has not come yet. */
  const waiting = new Map<string, { recorder: CallRecorder; sampleIndex: number }[]>();
  const keyOf = (taskIndex: number, seed: number) => `${taskIndex}:${seed}`;
  const createEnv = (): Env => {
    let current: HelpdeskEnv | undefined;
    return {
      info,
      async reset(taskIndex, options = {}) {
        // Taken before any await: the runner resets right after creating the episode's agent.
        const key = keyOf(taskIndex, options.seed ?? 0);
        const paired = waiting.get(key)?.shift();
        if (waiting.get(key)?.length === 0) waiting.delete(key);
        if (!paired) {
          throw new UserVoiceError(
            "the helpdesk with a user model was reset without its paired agent (use the agent withModelUser returned)",
          );
        }
        await current?.close();
        current = new HelpdeskEnv({
          voice: createModelUserVoice(paired.recorder, {
            ...setup.options,
            sampleIndex: paired.sampleIndex,
          }),
        });
        return current.reset(taskIndex, options);
      },
      async step(action) {
        if (!current) throw new NotResetError(info.name);
        return current.step(action);
      },
      async close() {
        await current?.close();
        current = undefined;
      },
    };
  };
  return {
    env: { ...env, info, create: createEnv },
    agent: {
      ...agent,
      create: (context) => {
        const recorder = new CallRecorder(setup.model);
        const key = keyOf(context.taskIndex, context.seed);
        const entry = { recorder, sampleIndex: context.sampleIndex };
        waiting.set(key, [...(waiting.get(key) ?? []), entry]);
        const inner = agent.create(context);
        const paired: Agent = {
          act: (state, signal) => inner.act(state, signal),
          // The user's calls first: they came before the agent's turn that read their message.
          takeCalls: () => [...asUserCalls(recorder.take()), ...(inner.takeCalls?.() ?? [])],
          close: async () => {
            // An episode that never reset leaves no recorder behind for another to take.
            const list = waiting.get(key);
            const at = list?.indexOf(entry) ?? -1;
            if (list && at >= 0) list.splice(at, 1);
            if (list?.length === 0) waiting.delete(key);
            await inner.close?.();
          },
        };
        return paired;
      },
    },
  };
}
