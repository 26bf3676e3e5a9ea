/** Simulated self-improvement: scenarios, simulated work, and comparisons over seeds. */
import { parseScenario, type Scenario } from "./scenario.js";
import { BUILTIN_SCENARIOS } from "./scenarios.js";

export * from "./experiment.js";
export * from "./process.js";
export * from "./scenario.js";
export { BUILTIN_SCENARIOS } from "./scenarios.js";
export { VirtualClock } from "./virtual-clock.js";

export const BUILTIN_SCENARIO_NAMES: readonly string[] = BUILTIN_SCENARIOS.map((s) => s.name);

/** A built-in scenario by name, parsed (defaults filled in), or undefined. */
export function builtinScenario(name: string): Scenario | undefined {
  const input = BUILTIN_SCENARIOS.find((s) => s.name === name);
  return input ? parseScenario(input) : undefined;
}
