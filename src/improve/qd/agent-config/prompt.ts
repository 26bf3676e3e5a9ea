/**
 * The system prompt a configuration gives its agent:
 *
 *   the agent kind's own prompt (its reply format) · the parts, in order · the few-shot
 *   examples · (tools kind with a tool set) the tools it may use
 *
 * The kind's prompt always comes first and is not a part: it states the reply format the agent's
 * parser reads, so no crossover or rewrite can break parsing, and switching the kind switches it.
 */
import { DEFAULT_REACT_SYSTEM_PROMPT } from "../../../agent/react.js";
import { DEFAULT_TOOL_CALLING_SYSTEM_PROMPT } from "../../../agent/tool-calling.js";
import type { AgentConfig, AgentKind } from "./config.js";

export const KIND_PROMPTS: Readonly<Record<AgentKind, string>> = {
  react: DEFAULT_REACT_SYSTEM_PROMPT,
  tools: DEFAULT_TOOL_CALLING_SYSTEM_PROMPT,
};

export const EXAMPLES_HEADER = "Examples of solved tasks:";

/** The tools line, or null when the configuration does not restrict tools. */
export function toolsLine(config: AgentConfig): string | null {
  if (config.kind !== "tools" || config.tools === null) return null;
  if (config.tools.length === 0) return "No tools are available to you in this configuration.";
  return `Use only these tools (an action's first word): ${config.tools.join(", ")}.`;
}

export function renderSystemPrompt(config: AgentConfig): string {
  const sections = [KIND_PROMPTS[config.kind], ...config.parts.map((part) => part.text.trim())];
  if (config.fewShot.length > 0) {
    const examples = config.fewShot.map((e, i) => `Example ${i + 1}:\n${e.text.trim()}`);
    sections.push([EXAMPLES_HEADER, ...examples].join("\n\n"));
  }
  const tools = toolsLine(config);
  if (tools !== null) sections.push(tools);
  return sections.join("\n\n");
}
