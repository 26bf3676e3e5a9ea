/**
 * The visible tests written out as a runnable node:assert file, so the agent can read exactly what
 * `run tests` checks. The runner never executes this file: it grades from the task's data.
 */
import type { TestCase } from "./exercise.js";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

export function testLine(test: TestCase): string {
  if (test.throws !== undefined) {
    return `assert.throws(() => ${test.call}, /${escapeRegExp(test.throws)}/);`;
  }
  return `assert.deepStrictEqual(${test.call}, ${JSON.stringify(test.expect)});`;
}

export function renderTestFile(options: {
  title: string;
  solutionFile: string;
  exports: readonly string[];
  tests: readonly TestCase[];
}): string {
  const { title, solutionFile, exports, tests } = options;
  return [
    `// Visible tests for "${title}" (read-only). "run tests" runs them against ${solutionFile};`,
    '// "submit" runs hidden tests as well. Errors must contain the text in /.../.',
    'import assert from "node:assert/strict";',
    `import { ${exports.join(", ")} } from "./${solutionFile}";`,
    "",
    ...tests.map(testLine),
    "",
  ].join("\n");
}
