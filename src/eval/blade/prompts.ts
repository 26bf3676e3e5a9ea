/**
 * The BLADE model roles' prompts, kept as data in `data/blade/prompts/<name>.md`. A file holds a
 * system part and a user part, each starting at its own marker line (`<!-- system -->`,
 * `<!-- user -->`); anything above the first marker is a note for editors and is not sent.
 * `{{name}}` in either part is filled from the caller's values; a placeholder without a value, or
 * a value no placeholder uses, is an error (a template and its code must agree).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

// src/eval/blade/x.ts and dist/eval/blade/x.js are both three levels below the package.
const PROMPT_DIR = new URL("../../../data/blade/prompts/", import.meta.url);
const SYSTEM_MARKER = "<!-- system -->";
const USER_MARKER = "<!-- user -->";
const PLACEHOLDER = /\{\{(\w+)\}\}/g;

export const PROMPT_NAMES = [
  "cvar-judge",
  "model-judge",
  "transform-splitter",
  "model-describer",
] as const;
export type PromptName = (typeof PROMPT_NAMES)[number];

export class PromptError extends Error {
  override name = "PromptError";
}

export interface PromptTemplate {
  source: string;
  system: string;
  user: string;
}

/** Splits a template file's text into its two parts. */
export function parsePromptTemplate(text: string, source: string): PromptTemplate {
  const systemAt = text.indexOf(SYSTEM_MARKER);
  const userAt = text.indexOf(USER_MARKER);
  if (systemAt === -1 || userAt === -1 || userAt < systemAt) {
    throw new PromptError(
      `${source}: needs a "${SYSTEM_MARKER}" line, then a "${USER_MARKER}" line`,
    );
  }
  if (
    text.indexOf(SYSTEM_MARKER, systemAt + 1) !== -1 ||
    text.indexOf(USER_MARKER, userAt + 1) !== -1
  ) {
    throw new PromptError(`${source}: each marker may appear once`);
  }
  return {
    source,
    system: text.slice(systemAt + SYSTEM_MARKER.length, userAt).trim(),
    user: text.slice(userAt + USER_MARKER.length).trim(),
  };
}

const loaded = new Map<PromptName, PromptTemplate>();

/** A built-in template, read once. */
export function loadPrompt(name: PromptName): PromptTemplate {
  const cached = loaded.get(name);
  if (cached) return cached;
  const path = fileURLToPath(new URL(`${name}.md`, PROMPT_DIR));
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new PromptError(`${path}: cannot read: ${(error as Error).message}`);
  }
  const template = parsePromptTemplate(text, path);
  loaded.set(name, template);
  return template;
}

function fill(text: string, values: Record<string, string>, used: Set<string>, source: string) {
  return text.replace(PLACEHOLDER, (_, key: string) => {
    const value = values[key];
    if (value === undefined) throw new PromptError(`${source}: no value for {{${key}}}`);
    used.add(key);
    return value;
  });
}

/** The template's two parts with every placeholder filled. */
export function renderPrompt(
  template: PromptTemplate,
  values: Record<string, string>,
): { system: string; user: string } {
  const used = new Set<string>();
  // One pass per part over the template only: a value's own "{{...}}" is never expanded.
  const system = fill(template.system, values, used, template.source);
  const user = fill(template.user, values, used, template.source);
  const unused = Object.keys(values).filter((key) => !used.has(key));
  if (unused.length > 0) {
    throw new PromptError(`${template.source}: no placeholder for ${unused.join(", ")}`);
  }
  return { system, user };
}
