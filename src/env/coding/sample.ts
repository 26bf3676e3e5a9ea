/**
 * The random baseline's action sampler: mostly well-formed actions on the files the observation
 * names (run, view, write a placeholder solution, occasionally submit), rarely a malformed one.
 */
import type { Observation } from "../types.js";

const FILE_NAMES = /\b[a-z0-9][a-z0-9-]*(?:\.test)?\.js\b/g;

/** Plausible but (almost always) wrong solution bodies. */
const PLACEHOLDERS = [
  "export function solve(input) {\n  return input;\n}\n",
  "export default function () {\n  return null;\n}\n",
  "// TODO: implement\n",
  'export const answer = "42";\n',
];

const MALFORMED = ["help", "run", "write", "view", "ls -la", "cat solution.js"];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

export function sampleCodingAction(random: () => number, observation: Observation): string {
  const files = [...new Set(observation.text.match(FILE_NAMES) ?? [])];
  const solution = files.find((file) => !file.endsWith(".test.js"));
  const roll = random();
  if (roll < 0.35 || files.length === 0) return "run tests";
  if (roll < 0.6) return `view ${pick(random, files)}`;
  if (roll < 0.85 && solution) return `write ${solution}\n${pick(random, PLACEHOLDERS)}`;
  if (roll < 0.93) return "submit";
  return pick(random, MALFORMED);
}
