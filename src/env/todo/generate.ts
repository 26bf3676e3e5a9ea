/** Task generation: (index, seed) → initial database, user request, gold calls and answers. */
import { createRng } from "../rng.js";
import type { ToolCall } from "./action.js";
import { generateDatabase, generateToday } from "./database.js";
import type { AnswerCandidates } from "./grading.js";
import { Planner } from "./planner.js";
import { REQUEST_TEMPLATES } from "./requests.js";
import { cloneState, type TodoState } from "./world.js";

/** Keeps this environment's random streams apart from other environments' (ASCII "todo"). */
const STREAM_TAG = 0x746f646f;
const MAX_ATTEMPTS = 500;
/** Gold calls stay well under the step limit so that a careful agent has room to look around. */
export const MAX_GOLD_CALLS = 16;

export interface TodoScenario {
  taskIndex: number;
  seed: number;
  /** Which request template produced the request. */
  kind: string;
  today: string;
  request: string;
  initial: TodoState;
  /** Tool calls (finish excluded) that turn the initial state into the gold state. */
  goldCalls: ToolCall[];
  gold: TodoState;
  /** Strings that must all appear in the agent's final answer. */
  answers: string[];
  /**
   * Every project name and task title of the initial and gold databases: the names a hedged
   * answer would list alongside the right one.
   */
  candidates: AnswerCandidates;
}

function candidatesOf(states: readonly TodoState[]): AnswerCandidates {
  const projects = new Set(states.flatMap((state) => state.projects));
  const titles = new Set(states.flatMap((state) => [...state.tasks.values()].map((t) => t.title)));
  return { projects: [...projects], titles: [...titles] };
}

export function generateScenario(taskIndex: number, seed = 0): TodoScenario {
  const template = REQUEST_TEMPLATES[taskIndex % REQUEST_TEMPLATES.length];
  if (!template) throw new Error("todo: no request templates");
  const rng = createRng(STREAM_TAG, taskIndex, seed);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const today = generateToday(rng);
    const initial = generateDatabase(rng, today);
    const plan = new Planner(cloneState(initial), today);
    const built = template.build(rng, plan);
    if (built === null || plan.calls.length > MAX_GOLD_CALLS) continue;
    return {
      taskIndex,
      seed,
      kind: template.kind,
      today,
      request: built.text,
      initial,
      goldCalls: plan.calls,
      gold: plan.state,
      answers: built.answers,
      candidates: candidatesOf([initial, plan.state]),
    };
  }
  throw new Error(`todo: no ${template.kind} request fits task ${taskIndex} (seed ${seed})`);
}
