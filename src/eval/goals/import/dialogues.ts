/**
 * Dialogue JSON: `{"dialogues": [{"dialogue_id", "turns": [{"turn_id"?, "user", "system"}]}]}`,
 * each turn one user message and the system's (the assistant's) reply, taken as they are: turn
 * N of the array is turn_number N (`turn_id` is read but not needed; an empty `user`, as before a
 * greeting, stays a turn so that labels keep their places).
 *
 * Labelled dialogues carry the judges' label fields on their turns, named as the judges name
 * them: `is_new_goal` (boolean), `quality` (`"success"` or `"failure"`) and `rcof` (a cause's
 * code, or null). A dialogue is labelled when any turn has one of them, and then every turn has
 * `is_new_goal` and `quality`, the first turn starts a goal, and `rcof` is null or absent on
 * successful turns (on a failed turn it may be null: cause not given). They become the
 * conversation's per-turn ground truth.
 */
import { z } from "zod";
import { type Conversation, type GroundTruthLabel, turnQualitySchema } from "../conversation.js";
import {
  ConversationImportError,
  checkUnique,
  fail,
  groundTruthLabels,
  type LabelFields,
  parseJsonFile,
  parseWith,
  readText,
} from "./common.js";

const idSchema = z.union([z.string().min(1), z.number()], {
  error: "expected a string or a number",
});

const dialogueTurnSchema = z.object({
  turn_id: idSchema.optional(),
  user: z.string(),
  system: z.string(),
  is_new_goal: z.boolean().optional(),
  quality: turnQualitySchema.optional(),
  rcof: z.string().min(1).nullable().optional(),
});

const dialogueSchema = z.object({
  dialogue_id: idSchema,
  turns: z.array(dialogueTurnSchema),
});

const fileSchema = z.object({ dialogues: z.array(z.unknown()) });

const LABEL_FIELDS = ["is_new_goal", "quality", "rcof"] as const;

function dialogueRecord(index: number, value: unknown): string {
  const id = (value as { dialogue_id?: unknown } | null)?.dialogue_id;
  return typeof id === "string" || typeof id === "number"
    ? `dialogue ${index} (dialogue_id ${String(id)})`
    : `dialogue ${index}`;
}

type DialogueTurn = z.infer<typeof dialogueTurnSchema>;

/** The turns' labels, when the dialogue is labelled: then every turn carries them. */
function labels(turns: readonly DialogueTurn[], where: string): GroundTruthLabel[] | undefined {
  if (!turns.some((turn) => LABEL_FIELDS.some((field) => turn[field] !== undefined))) {
    return undefined;
  }
  const given: LabelFields[] = turns.map((turn, i) => {
    const { is_new_goal, quality, rcof } = turn;
    const others = "missing (the dialogue's other turns are labelled)";
    if (is_new_goal === undefined) fail(where, `turns.${i}.is_new_goal`, others);
    if (quality === undefined) fail(where, `turns.${i}.quality`, others);
    return { is_new_goal, quality, rcof };
  });
  return groundTruthLabels(given, where, (i, name) => `turns.${i}.${name}`);
}

/** Every dialogue of a dialogue JSON file, or the first problem as one line. */
export function parseDialogues(text: string, file: string): Conversation[] {
  const { dialogues } = parseWith(fileSchema, parseJsonFile(text, file), file);
  if (dialogues.length === 0) throw new ConversationImportError(`${file}: no dialogues`);
  const seen = new Map<string, string>();
  return dialogues.map((value, i): Conversation => {
    const record = dialogueRecord(i, value);
    const where = `${file}: ${record}`;
    const dialogue = parseWith(dialogueSchema, value, where);
    const id = String(dialogue.dialogue_id);
    checkUnique(seen, id, file, record, "dialogue_id");
    if (dialogue.turns.every((turn) => turn.user === "")) fail(where, "turns", "no user message");
    const truth = labels(dialogue.turns, where);
    return {
      id,
      source: { format: "dialogues", file, record },
      turns: dialogue.turns.map((turn, t) => ({
        turn_number: t + 1,
        user: turn.user,
        assistant: turn.system,
      })),
      ...(truth ? { groundTruth: { kind: "turns", labels: truth } } : {}),
    };
  });
}

export function readDialoguesFile(path: string): Conversation[] {
  return parseDialogues(readText(path), path);
}
