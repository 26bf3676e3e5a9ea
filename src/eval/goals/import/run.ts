/**
 * clade runs: each finished episode of a run as a conversation, read as `clade export` reads it.
 * The environment is the user: its first observation is the first user message and each step's
 * observation the user's next one (the observation after the last step is the `closing`); the
 * agent's actions are the assistant's replies (the action, what the environment received, not
 * the agent's whole reply: a ReAct model's "Thought: ..." never reached the user). The system
 * prompt is the instruction the episode's agent was given.
 *
 * Keys of a step's `info` let a conversational environment say more (RUN_STEP_INFO):
 * - `tool_result: true`: the action was a tool call and the observation its result, not the
 *   user's reply; the turn goes on. The call is named by `info.tool` (todo's key) when a string.
 * - `groundTruth: {turns: [{turn_number, is_new_goal, quality, rcof}, ...]}` on the last step:
 *   the whole session's turn labels as the environment knows them (helpdesk's injected faults),
 *   one per turn in order; extra keys are passed by.
 * - else `goal_label: {is_new_goal, quality, rcof?}` on steps: the label of the turn the step
 *   belongs to, the turn's last labelled step counting; when any step is labelled, every turn
 *   must be.
 * Either becomes the per-turn ground truth. Without labels it is the episode's outcome: one
 * goal, succeeded iff the episode reached the environment's success threshold.
 *
 * Errored, never-run and damaged episodes are left out, as `clade export` leaves them out
 * (ImportOptions.onSkip is told of each).
 */
import { z } from "zod";
import { findEnvInfo } from "../../../env/infos.js";
import type { StepRecord } from "../../../rollout/episode.js";
import { DamagedEpisodeError, RunStore, type StoredEpisode } from "../../../store/run-store.js";
import type { Conversation, GroundTruth } from "../conversation.js";
import {
  ConversationImportError,
  fail,
  groundTruthLabels,
  groupTurns,
  type ImportOptions,
  type LabelFields,
  labelFieldsSchema,
  parseWith,
  Skips,
  type TurnMessage,
} from "./common.js";

export const RUN_STEP_INFO = {
  toolResult: "tool_result",
  label: "goal_label",
  groundTruth: "groundTruth",
} as const;

const sessionTruthSchema = z.object({
  turns: z.array(labelFieldsSchema.extend({ turn_number: z.number().int().min(1) })),
});

/** The messages of one episode, and the label given for each turn (by turn index). */
function episodeMessages(
  episode: StoredEpisode,
  steps: readonly StepRecord[],
  where: string,
): { messages: TurnMessage[]; labels: Map<number, { step: number; value: unknown }> } {
  if (episode.initialObservation === null) fail(where, "initial_observation", "missing");
  const messages: TurnMessage[] = [{ role: "user", text: episode.initialObservation.text }];
  const labels = new Map<number, { step: number; value: unknown }>();
  let turn = 0;
  steps.forEach((step, i) => {
    const label = step.info[RUN_STEP_INFO.label];
    if (label !== undefined) labels.set(turn, { step: i, value: label });
    if (step.info[RUN_STEP_INFO.toolResult] === true) {
      const tool = step.info.tool;
      const name = typeof tool === "string" ? tool : "tool";
      messages.push({ role: "assistant", text: "", toolCalls: [{ name, arguments: step.action }] });
      messages.push({ role: "tool", result: { name, content: step.observation.text } });
      return;
    }
    messages.push({ role: "assistant", text: step.action, toolCalls: [] });
    messages.push({ role: "user", text: step.observation.text });
    turn++;
  });
  return { messages, labels };
}

/** The last step's session labels (RUN_STEP_INFO.groundTruth), when it carries them. */
function sessionLabels(
  steps: readonly StepRecord[],
  turns: number,
  where: string,
): GroundTruth | undefined {
  const last = steps.length - 1;
  const value = steps[last]?.info[RUN_STEP_INFO.groundTruth];
  if (value === undefined) return undefined;
  const path = ["steps", last, "info", RUN_STEP_INFO.groundTruth];
  const truth = parseWith(sessionTruthSchema, value, where, path);
  const field = (i: number, name: string) => [...path, "turns", i, name].join(".");
  if (truth.turns.length !== turns) {
    fail(where, [...path, "turns"].join("."), `${truth.turns.length} labels for ${turns} turns`);
  }
  truth.turns.forEach((label, i) => {
    if (label.turn_number !== i + 1) fail(where, field(i, "turn_number"), `expected ${i + 1}`);
  });
  return { kind: "turns", labels: groundTruthLabels(truth.turns, where, field) };
}

function groundTruth(
  episode: StoredEpisode,
  steps: readonly StepRecord[],
  turns: number,
  labels: Map<number, { step: number; value: unknown }>,
  where: string,
): GroundTruth {
  const session = sessionLabels(steps, turns, where);
  if (session) return session;
  if (labels.size === 0) {
    return { kind: "outcome", reward: episode.reward, success: episode.outcome === "success" };
  }
  const given: LabelFields[] = [];
  const labelled: number[] = [];
  for (let t = 0; t < turns; t++) {
    const label = labels.get(t);
    if (!label) {
      fail(where, `turn ${t + 1}`, `no info.${RUN_STEP_INFO.label} (other turns are labelled)`);
    }
    const path = ["steps", label.step, "info", RUN_STEP_INFO.label];
    given.push(parseWith(labelFieldsSchema, label.value, where, path));
    labelled.push(label.step);
  }
  const field = (i: number, name: string) =>
    `steps.${labelled[i]}.info.${RUN_STEP_INFO.label}.${name}`;
  return { kind: "turns", labels: groundTruthLabels(given, where, field) };
}

/**
 * The finished episodes of run `runId` as conversations, ids `task/sample` (as `clade show
 * --episode` names them). `source` is an open store, or a store's path (opened read-only and
 * closed again).
 */
export function importRun(
  source: RunStore | string,
  runId: string,
  options: ImportOptions = {},
): Conversation[] {
  const store = typeof source === "string" ? RunStore.open(source, { readonly: true }) : source;
  try {
    const run = store.getRun(runId);
    const named = `run ${runId}`;
    if (!run) {
      const where = typeof source === "string" ? ` in ${source}` : "";
      throw new ConversationImportError(`no run "${runId}"${where} (see: clade runs)`);
    }
    // As clade export: episodes stored before instructions were kept take the built-in env's.
    const fallback = findEnvInfo(run.env)?.instruction;
    const conversations: Conversation[] = [];
    const skips = new Skips();
    for (const episode of store.episodes(runId)) {
      const record = `episode ${episode.id} (task ${episode.taskIndex}, sample ${episode.sampleIndex})`;
      if (episode.outcome !== "success" && episode.outcome !== "failure") {
        const reason =
          episode.outcome === "error"
            ? `errored: ${episode.error ?? "unknown error"}`
            : episode.outcome;
        skips.note(record, reason);
        continue;
      }
      let steps: StepRecord[];
      try {
        steps = store.steps(episode.id);
      } catch (error) {
        if (!(error instanceof DamagedEpisodeError)) throw error;
        skips.note(record, "damaged");
        continue;
      }
      const where = `${named}: ${record}`;
      const { messages, labels } = episodeMessages(episode, steps, where);
      const grouped = groupTurns(messages, where, "steps");
      const system = store.instruction(episode.id) ?? fallback;
      conversations.push({
        id: `${episode.taskIndex}/${episode.sampleIndex}`,
        source: { format: "run", runId, record },
        ...(system !== undefined ? { system } : {}),
        ...grouped,
        groundTruth: groundTruth(episode, steps, grouped.turns.length, labels, where),
        metadata: {
          env: run.env,
          task: episode.taskIndex,
          sample: episode.sampleIndex,
          seed: episode.seed,
          end_reason: episode.endReason,
        },
      });
    }
    if (conversations.length === 0) {
      throw new ConversationImportError(`${named}: no finished episodes (success or failure)`);
    }
    skips.report(options);
    return conversations;
  } finally {
    if (typeof source === "string") store.close();
  }
}
