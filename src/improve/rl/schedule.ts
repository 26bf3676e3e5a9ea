/**
 * Horizon schedules for ScalingInter-RL: the maximum number of agent turns per episode (the
 * "interaction horizon") as a function of the training step. Training starts short and lengthens
 * the horizon in stages.
 *
 *   fixed:15                  horizon 15 throughout (the fixed-horizon baseline)
 *   scaling:10,20,30@100      10 for 100 steps, then 20 for 100 steps, then 30 for the rest
 *   custom:5x40,10x60,20      5 for 40 steps, then 10 for 60 steps, then 20 for the rest
 *
 * Steps are 0-based: `globalStep` is the number of optimizer steps completed before the step being
 * taken, which is also what a checkpoint records. So a run resumed from a checkpoint taken after
 * k steps asks for step k and gets exactly the stage an uninterrupted run had there, with nothing
 * to restore. `scaling:10,20,30@100` gives steps 0..99 → 10, 100..199 → 20, 200.. → 30 (the
 * paper's 1-based "steps 1..S use h0").
 *
 * The reference keeps a stateful counter instead: it starts at 1, advances the stage when
 * `counter % S == 0`, and on resume is set to the checkpoint's step k while the trainer moves on
 * to k + 1. From then on every stage change comes one step late, and a run resumed at a stage
 * boundary (k = S) enters stage 1 at once and then skips stage 1 for stage 2 after one step.
 * Here the stage is a pure function of the global step.
 */
import { z } from "zod";

export type ScheduleKind = "fixed" | "scaling" | "custom";

export interface Stage {
  /** 0-based position of the stage in the schedule. */
  index: number;
  /** Maximum agent turns per episode during the stage. */
  horizon: number;
  /** First global step (0-based) of the stage. */
  startStep: number;
  /** First global step after the stage; null for the last, open-ended stage. */
  endStep: number | null;
}

export interface HorizonSchedule {
  kind: ScheduleKind;
  /** The schedule as written, spaces removed, e.g. "scaling:10,20,30@100", for run records. */
  spec: string;
  /** At least one stage; only the last has endStep null. */
  stages: readonly Stage[];
}

const FORMS = "fixed:H, scaling:H1,H2,...@S or custom:H1xS1,H2xS2,...,Hn";

/** A whole number of at least 1 written in decimal digits, named in its error messages. */
function count(what: string) {
  return z
    .string()
    .trim()
    .regex(/^\d+$/, {
      error: (issue) => `${what} ${JSON.stringify(issue.input)} is not a whole number`,
    })
    .transform(Number)
    .pipe(
      z
        .number()
        .int({ error: `${what} is too large` })
        .min(1, { error: (issue) => `${what} must be at least 1, got ${String(issue.input)}` }),
    );
}

/** One stage as written: its horizon and, except for the last, how many steps it lasts. */
interface StageSpec {
  horizon: number;
  steps: number | null;
}

const fixedSchema = count("horizon").transform((horizon): StageSpec[] => [
  { horizon, steps: null },
]);

const scalingSchema = z
  .string()
  .regex(/^[^@]*@[^@]*$/, {
    error: 'write the horizons, one "@", then the steps per stage, e.g. scaling:10,20,30@100',
  })
  .transform((body) => body.split("@") as [string, string])
  .pipe(
    z.tuple([
      z
        .string()
        .transform((list) => list.split(","))
        .pipe(z.array(count("horizon"))),
      count("steps per stage"),
    ]),
  )
  .transform(([horizons, steps]): StageSpec[] =>
    horizons.map((horizon, i) => ({ horizon, steps: i < horizons.length - 1 ? steps : null })),
  );

const customStageSchema = z
  .string()
  .trim()
  .regex(/^[^x]*(x[^x]*)?$/, {
    error: (issue) => `stage ${JSON.stringify(issue.input)} is not HxS or H`,
  })
  .transform((stage) => stage.split("x"))
  .pipe(z.union([z.tuple([count("horizon")]), z.tuple([count("horizon"), count("steps")])]))
  .transform(([horizon, steps]): StageSpec => ({ horizon, steps: steps ?? null }));

const customSchema = z
  .string()
  .transform((list) => list.split(","))
  .pipe(z.array(customStageSchema))
  .superRefine((stages, ctx) => {
    stages.forEach((stage, i) => {
      const last = i === stages.length - 1;
      if (last && stage.steps !== null) {
        ctx.addIssue({
          code: "custom",
          message: `the last stage is open-ended: write its horizon alone (${stage.horizon}, not ${stage.horizon}x${stage.steps})`,
        });
      } else if (!last && stage.steps === null) {
        ctx.addIssue({
          code: "custom",
          message: `stage ${i + 1} (${stage.horizon}) needs its number of steps, e.g. ${stage.horizon}x100; only the last stage is open-ended`,
        });
      }
    });
  });

const BODY_SCHEMAS = { fixed: fixedSchema, scaling: scalingSchema, custom: customSchema } as const;

const kindSchema = z.enum(["fixed", "scaling", "custom"], {
  error: (issue) => `unknown schedule kind ${JSON.stringify(issue.input)}`,
});

/** Parses a schedule; throws one line naming the problem and the accepted forms. */
export function parseSchedule(spec: string): HorizonSchedule {
  const fail = (problem: string): never => {
    throw new Error(
      `invalid horizon schedule ${JSON.stringify(spec)}: ${problem} (forms: ${FORMS})`,
    );
  };
  const colon = spec.indexOf(":");
  if (colon < 0) return fail('no kind: start with "fixed:", "scaling:" or "custom:"');
  const kind = kindSchema.safeParse(spec.slice(0, colon).trim());
  if (!kind.success) return fail(kind.error.issues[0]?.message ?? "unknown kind");
  const body = BODY_SCHEMAS[kind.data].safeParse(spec.slice(colon + 1));
  if (!body.success) return fail(body.error.issues[0]?.message ?? "invalid");
  return scheduleFromStages(kind.data, spec.replace(/\s+/g, ""), body.data);
}

function scheduleFromStages(
  kind: ScheduleKind,
  spec: string,
  specs: readonly StageSpec[],
): HorizonSchedule {
  const stages: Stage[] = [];
  let startStep = 0;
  specs.forEach(({ horizon, steps }, index) => {
    const endStep = steps === null ? null : startStep + steps;
    stages.push({ index, horizon, startStep, endStep });
    if (endStep !== null) startStep = endStep;
  });
  return { kind, spec, stages };
}

/** The stage in force at a 0-based global step (the number of optimizer steps already taken). */
export function stageAt(schedule: HorizonSchedule, globalStep: number): Stage {
  if (!Number.isSafeInteger(globalStep) || globalStep < 0) {
    throw new RangeError(`global step must be a whole number ≥ 0 (0-based), got ${globalStep}`);
  }
  // A handful of stages: a scan is clearer than a search. The last stage is open-ended, so a
  // step past every boundary lands there (a hand-built schedule whose last stage is closed, too).
  const stages = schedule.stages;
  const found = stages.find((stage) => stage.endStep === null || globalStep < stage.endStep);
  const stage = found ?? stages.at(-1);
  if (stage === undefined) throw new Error("horizon schedule has no stages");
  return stage;
}

/** The maximum number of agent turns per episode at a 0-based global step. */
export function horizonAt(schedule: HorizonSchedule, globalStep: number): number {
  return stageAt(schedule, globalStep).horizon;
}
