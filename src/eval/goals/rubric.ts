/**
 * The rubric a teacher judge follows: what the assistant is for, the catalogue of goals users
 * come with, when a new goal starts, and the quality standards, written by domain experts (the
 * "expert-written goal definitions and quality standards" of "Mind the Goal"). The taxonomy of
 * causes is chosen apart (`--taxonomy`) and joins the rubric in the judge's prompt.
 *
 * Two file shapes: JSON, validated (`{name, domain?, goals, segmentation?, quality_standards,
 * notes?}`), and Markdown, taken as the expert's prose as it is. Built-ins live in
 * `data/goals/rubrics/` (`generic`, `helpdesk`) in the JSON shape.
 */
import { readFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

export class RubricError extends Error {
  override name = "RubricError";
}

const text = (what: string) => z.string().trim().min(1, `${what} must not be empty`);

export const rubricGoalSchema = z
  .object({
    name: text("name"),
    definition: text("definition"),
    examples: z.array(text("an example")).optional(),
  })
  .strict();

export const rubricFileSchema = z
  .object({
    name: text("name"),
    /** What the assistant is for and what it can do. */
    domain: z.string().optional(),
    goals: z.array(rubricGoalSchema).min(1, "a rubric needs at least one goal"),
    /** When a turn starts a new goal. */
    segmentation: z.string().optional(),
    quality_standards: z.array(text("a standard")).min(1, "a rubric needs at least one standard"),
    notes: z.string().optional(),
  })
  .strict();

export type RubricGoal = z.output<typeof rubricGoalSchema>;

export type Rubric =
  | ({ format: "json" } & z.output<typeof rubricFileSchema>)
  | { format: "markdown"; name: string; text: string };

export const BUILTIN_RUBRICS = ["generic", "helpdesk"] as const;
export type BuiltinRubricName = (typeof BUILTIN_RUBRICS)[number];
export const DEFAULT_RUBRIC: BuiltinRubricName = "generic";

// src/eval/goals/x.ts and dist/eval/goals/x.js are both three levels below the package.
const RUBRIC_DIR = new URL("../../../data/goals/rubrics/", import.meta.url);

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const where = issue.path.length ? issue.path.map(String).join(".") : "(top level)";
  return `${where}: ${issue.message}`;
}

/** Validates a JSON rubric's value; `source` starts the error line. */
export function parseRubric(raw: unknown, source: string): Rubric {
  const parsed = rubricFileSchema.safeParse(raw);
  if (!parsed.success) throw new RubricError(`${source}: ${firstIssue(parsed.error)}`);
  return { format: "json", ...parsed.data };
}

/** A rubric file: `.md`/`.markdown`/`.txt` as prose, anything else as JSON. */
export function loadRubricFile(path: string): Rubric {
  let content: string;
  try {
    content = readFileSync(path, "utf8");
  } catch (error) {
    throw new RubricError(`${path}: cannot read: ${(error as Error).message}`);
  }
  const extension = extname(path);
  if ([".md", ".markdown", ".txt"].includes(extension.toLowerCase())) {
    if (content.trim() === "") throw new RubricError(`${path}: the rubric is empty`);
    return { format: "markdown", name: basename(path, extension), text: content.trim() };
  }
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (error) {
    // JSON.parse quotes the text around the error, line breaks included: keep it one line.
    const message = (error as Error).message.replace(/\s+/g, " ").trim();
    throw new RubricError(`${path}: not JSON (${message}); a prose rubric needs a .md file`);
  }
  return parseRubric(json, path);
}

export function isBuiltinRubric(name: string): name is BuiltinRubricName {
  return (BUILTIN_RUBRICS as readonly string[]).includes(name);
}

/** `--rubric generic|helpdesk|FILE`. */
export function resolveRubric(nameOrPath: string = DEFAULT_RUBRIC): Rubric {
  return isBuiltinRubric(nameOrPath)
    ? loadRubricFile(fileURLToPath(new URL(`${nameOrPath}.json`, RUBRIC_DIR)))
    : loadRubricFile(nameOrPath);
}

/** The rubric as the judge's prompt gives it: Markdown sections. */
export function renderRubric(rubric: Rubric): string {
  if (rubric.format === "markdown") return rubric.text;
  const lines: string[] = [];
  if (rubric.domain?.trim()) lines.push("## The assistant", rubric.domain.trim(), "");
  lines.push("## Goals users come with");
  for (const goal of rubric.goals) {
    lines.push(`- **${goal.name}**: ${goal.definition}`);
    for (const example of goal.examples ?? []) lines.push(`  - e.g. "${example}"`);
  }
  lines.push("");
  if (rubric.segmentation?.trim()) {
    lines.push("## When a new goal starts", rubric.segmentation.trim(), "");
  }
  lines.push("## Quality standards");
  for (const standard of rubric.quality_standards) lines.push(`- ${standard}`);
  if (rubric.notes?.trim()) lines.push("", "## Notes", rubric.notes.trim());
  return lines.join("\n");
}
