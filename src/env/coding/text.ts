/** The coding environment's texts: the instruction and every observation's wording. */
import { echo } from "./actions.js";
import { type CaseVerdict, describeThrown } from "./grading.js";
import { type CappedText, type SandboxRun, type SuiteRun, WORKSPACE_BYTES } from "./runner.js";
import type { CodingTask } from "./task.js";

export const MAX_STEPS = 20;
/** Failures listed after `run tests`. */
const SHOWN_FAILURES = 3;
const SHOWN_CALL_CHARS = 200;
const SHOWN_OUTPUT_CHARS = 1500;
/** Characters of a file shown by `view`. */
export const VIEW_CHARS = 8000;
const FENCE = "```";

export const ACTIONS_SUMMARY =
  "view <file> | write <file> (new content on the following lines) | run tests | submit";

export const INSTRUCTION = `You are solving a programming exercise in JavaScript (Node.js 20,
ES modules). Your workspace holds the solution file <exercise>.js, which starts as a stub, and
the read-only test file <exercise>.test.js with the visible tests. The first message gives the
exercise, the names to export and the file names.

Reply with exactly one action per turn:
view <file>
    Show a file.
write <file>
<content>
    Replace the whole file (or create it) with the content on the lines after "write <file>".
    Wrap the content in a ${FENCE}js fenced code block; the fences are removed.
run tests
    Run the visible tests against your solution file and report the failures.
submit
    Run the hidden tests (they include the visible ones) and end the episode.

Example:
write reverse-words.js
${FENCE}js
export function reverseWords(text) {
  return text.split(/\\s+/).filter(Boolean).reverse().join(" ");
}
${FENCE}

Rules:
- Export exactly the names the exercise asks for ("export function name(...)" or
  "export class Name"). Tests call your exports and compare the returned value by deep equality,
  or expect an error whose message contains a given text.
- Your code runs in a sandbox: Node.js built-in modules only, no network, no environment
  variables, files only inside the workspace, 128 MB of memory, and 5 seconds per test run
  (longer runs are killed). Console output is shown, truncated.
- Reward 1 when every hidden test passes on submit, otherwise 0. You have at most ${MAX_STEPS}
  actions; invalid ones count too.`;

export function introText(task: CodingTask): string {
  const [entry, ...others] = task.exports;
  const names = others.length > 0 ? `${entry} and ${others.join(", ")}` : entry;
  return [
    `Exercise: ${task.exercise.title} (difficulty ${task.exercise.difficulty} of 5)`,
    "",
    task.statement,
    "",
    "Files:",
    `- ${task.solutionFile}: your solution; it must export ${names}`,
    `- ${task.testFile}: ${task.visible.length} visible tests (read-only)`,
    "- package.json: makes .js files ES modules (read-only)",
    "",
    `${task.solutionFile} now contains:`,
    `${FENCE}js`,
    task.stub.trimEnd(),
    FENCE,
  ].join("\n");
}

export function invalidText(error: string): string {
  return `Invalid action: ${error}. Actions: ${ACTIONS_SUMMARY}.`;
}

export function unknownFileText(file: string, files: readonly string[]): string {
  return invalidText(`there is no file ${echo(file)}; the workspace holds ${files.join(", ")}`);
}

/** A file's content; `size` (bytes) tells when only its beginning was read. */
export function viewText(file: string, text: string, size: number): string {
  const cut = text.length > VIEW_CHARS || size > Buffer.byteLength(text);
  const note = `... (only the first ${VIEW_CHARS} characters of ${size} bytes shown)`;
  const shown = cut ? `${text.slice(0, VIEW_CHARS)}\n${note}` : text;
  return `${file}:\n${FENCE}\n${shown.replace(/\n$/, "")}\n${FENCE}`;
}

export function writeText(file: string, text: string): string {
  const lines = text === "" ? 0 : text.replace(/\n$/, "").split("\n").length;
  return `Wrote ${lines} line${lines === 1 ? "" : "s"} to ${file}.`;
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 3)}...` : text;
}

/** The workspace path never shows: file URLs and paths become plain file names. */
function relative(text: string, root: string): string {
  return text.split(`file://${root}/`).join("").split(`${root}/`).join("");
}

/** What the code printed, when it printed anything; stderr is left out after a syntax error. */
function outputSection(run: SandboxRun, root: string, withStderr: boolean): string {
  const show = (stream: CappedText) =>
    stream.dropped > 0 ? `${stream.text}... (${stream.dropped} more characters)` : stream.text;
  const streams = withStderr ? [run.stdout, run.stderr] : [run.stdout];
  const printed = streams
    .map(show)
    .filter((part) => part !== "")
    .join("\n");
  if (printed.trim() === "") return "";
  const text = relative(printed.trimEnd(), root);
  const clipped =
    text.length > SHOWN_OUTPUT_CHARS
      ? `${text.slice(0, SHOWN_OUTPUT_CHARS)}\n... (output truncated)`
      : text;
  return `\n\nConsole output:\n${clipped}`;
}

/** Why the module could not be used, or undefined when it loaded with every export present. */
export function loadProblem(
  suite: SuiteRun,
  task: CodingTask,
  run: SandboxRun,
  root: string,
): string | undefined {
  const load = suite.load;
  if (load === undefined) {
    return run.completed ? undefined : `${task.solutionFile} did not finish loading.`;
  }
  if (!load.ok) {
    if (load.error.name === "SyntaxError") {
      const report = relative(run.stderr.text, root);
      // Node's report: "file.js:LINE", the line, a caret, then "SyntaxError: ...".
      const located = /^[^\n]*:\d+\n[\s\S]*?SyntaxError[^\n]*/.exec(report)?.[0];
      const detail = clip(located ?? describeThrown(load.error), 800);
      return `${task.solutionFile} has a syntax error:\n${detail}`;
    }
    return `${task.solutionFile} threw while loading: ${describeThrown(load.error)}`;
  }
  const missing = task.exports.filter((name) => !load.exports.includes(name));
  if (missing.length === 0) return undefined;
  const found = load.exports.length > 0 ? load.exports.join(", ") : "nothing";
  return `${task.solutionFile} does not export ${missing.join(", ")} (it exports ${found}).`;
}

/** Why the test process stopped early, or undefined when it finished normally. */
export function stopProblem(run: SandboxRun, timeoutMs: number): string | undefined {
  if (run.completed) return undefined;
  if (run.timedOut) {
    const seconds = timeoutMs / 1000;
    const limit = seconds === 1 ? "1 second" : `${seconds} seconds`;
    return `The tests were stopped after ${limit} (an infinite loop?).`;
  }
  if (run.outputExceeded) return "The tests were stopped: your code printed far too much output.";
  if (run.memoryExceeded) {
    return "The tests were stopped: your code used more than 256 MB of memory.";
  }
  if (run.cpuExceeded) return "The tests were stopped: your code used too much CPU time.";
  const how = run.signal ? `signal ${run.signal}` : `exit code ${run.exitCode}`;
  const memory = /heap limit|out of memory/i.test(run.stderr.text) ? " (out of memory)" : "";
  return `The test process ended early with ${how}${memory} before all tests finished.`;
}

/**
 * The first failures, each with its call and problem. Of the tests that never finished, only the
 * first (the one running when the process stopped) is shown; the rest are counted.
 */
function failureLines(verdicts: readonly CaseVerdict[], limit: number): string[] {
  const failures = verdicts.filter((verdict) => !verdict.passed);
  const firstUnfinished = failures.findIndex((verdict) => verdict.finished === false);
  const shown = firstUnfinished < 0 ? failures : failures.slice(0, firstUnfinished + 1);
  const lines = shown.slice(0, limit).map((verdict) => {
    const call = clip(verdict.test.call, SHOWN_CALL_CHARS);
    return verdict.finished
      ? `FAIL ${call}\n  ${verdict.problem}`
      : `STOPPED ${call}\n  was still running when the tests were stopped`;
  });
  const unlisted = failures.length - Math.min(limit, shown.length);
  if (unlisted > 0) {
    lines.push(`(${unlisted} more failing or unfinished test${unlisted === 1 ? "" : "s"})`);
  }
  return lines;
}

export interface RunSummary {
  passed: number;
  total: number;
  /** Why the module could not be used (then every test failed the same way). */
  loadProblem: string | undefined;
  /** Why the test process stopped before the end. */
  stopProblem: string | undefined;
  /** The module had a syntax error: Node's report of it on stderr is already in loadProblem. */
  syntaxError: boolean;
}

function problems(summary: RunSummary): string[] {
  return [summary.loadProblem, summary.stopProblem].filter((p): p is string => p !== undefined);
}

export function runTestsText(
  task: CodingTask,
  summary: RunSummary,
  verdicts: readonly CaseVerdict[],
  run: SandboxRun,
  root: string,
): string {
  const { passed, total } = summary;
  const verdict = passed === total ? "all passed" : `${passed} passed, ${total - passed} failed`;
  const parts = [`Visible tests of ${task.solutionFile}: ${total} run, ${verdict}.`];
  const stated = problems(summary);
  if (run.workspaceFull) {
    stated.push(
      `The workspace is full (${WORKSPACE_BYTES / 1024 / 1024} MB): your code's last writes failed (ENOSPC).`,
    );
  }
  if (stated.length > 0) parts.push(stated.join("\n"));
  // A module that could not be used fails every test the same way: the problem says it all.
  if (summary.loadProblem === undefined && passed < total) {
    parts.push(failureLines(verdicts, SHOWN_FAILURES).join("\n"));
  }
  return relative(parts.join("\n\n"), root) + outputSection(run, root, !summary.syntaxError);
}

export function submitText(summary: RunSummary, verdicts: readonly CaseVerdict[]): string {
  const { passed, total } = summary;
  if (passed === total) {
    return `Submitted. All ${total} tests (visible and hidden) passed: the solution is accepted.`;
  }
  const parts = [
    `Submitted. ${passed} of ${total} tests (visible and hidden) passed: the solution is not ` +
      "accepted.",
  ];
  const stated = problems(summary);
  if (stated.length > 0) parts.push(stated.join("\n"));
  else parts.push(failureLines(verdicts, 1).join("\n"));
  return parts.join("\n");
}

const OUT_OF_STEPS = `Step limit of ${MAX_STEPS} actions reached without submit`;
export const OUT_OF_STEPS_TEXT = `\n\n${OUT_OF_STEPS}; the episode is over.`;
