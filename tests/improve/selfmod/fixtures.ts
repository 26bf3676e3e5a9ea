/** A small agent folder, plans and nodes for the self-modification tests. */
import type { SearchNode } from "../../../src/improve/search/tree.js";
import type { Plan } from "../../../src/improve/selfmod/plan.js";
import type { NodeEvaluation } from "../../../src/improve/selfmod/target.js";

export const PARSE_SOURCE = `export function parseAction(reply: string): string | null {
  const match = /Action:\\s*(.+)/.exec(reply);
  return match ? match[1].trim() : null;
}
`;

export const PARENT_FILES: ReadonlyMap<string, string> = new Map([
  [
    "clade-agent.json",
    `${JSON.stringify(
      {
        format: "clade.agent/1",
        name: "react",
        entry: "src/agent.ts",
        tests: ["test/parse.test.ts"],
      },
      null,
      2,
    )}\n`,
  ],
  ["src/agent.ts", 'import { parseAction } from "./parse.js";\nexport default { parseAction };\n'],
  ["src/parse.ts", PARSE_SOURCE],
  ["test/parse.test.ts", 'import { parseAction } from "../src/parse.js";\nparseAction("x");\n'],
]);

export const PLAN: Plan = {
  log_summarization: "The agent wrote its action in lower case and the parser missed it.",
  potential_improvements: ["Case-insensitive action parsing", "A clearer format instruction"],
  improvement_proposal: "Parse the action line case-insensitively.",
  implementation_suggestion: "In src/parse.ts, add the i flag to the action pattern.",
  problem_description: "The action parser misses 'action:' written in lower case.",
};

/** The plan as a model would answer: reasoning, then a fenced JSON block. */
export function planReply(plan: unknown = PLAN): string {
  return `The parser is too strict.\n\n\`\`\`json\n${JSON.stringify(plan, null, 2)}\n\`\`\`\n`;
}

export function evaluation(
  task: number,
  outcome: NodeEvaluation["outcome"],
  extra: Partial<NodeEvaluation> = {},
): NodeEvaluation {
  return { task, outcome, log: `episode of task ${task}`, parseErrors: 0, ...extra };
}

export function node(id: number, data: SearchNode["data"] = null): SearchNode {
  return {
    id,
    parent: id === 0 ? null : 0,
    depth: id === 0 ? 0 : 1,
    children: [],
    data,
    improvement: id === 0 ? null : id,
    createdAtT: 0,
    s: 0,
    f: 0,
    sC: 0,
    fC: 0,
    pending: 0,
    pendingImprovements: 0,
    expansions: 0,
    errors: 0,
    abandoned: 0,
    openTasks: 0,
  };
}
