import {
  existsSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { solveCoding } from "../../src/agent/reference/coding.js";
import {
  CodingEnv,
  canonicalJson,
  codingEnv,
  EXERCISES,
  exerciseSlot,
  generateTask,
  judgeCase,
  parseAction,
  renameIdentifier,
  runInSandbox,
  SANDBOX_RUN_MEMORY_BYTES,
  SandboxBusyError,
  type SandboxRun,
  type SuiteRequest,
  sandboxConcurrency,
  sandboxSlotsFor,
  setSandboxConcurrency,
  TEST_ONLY_IDS,
  type TestCase,
  TRAIN_EXERCISES,
  unfence,
} from "../../src/env/coding/index.js";
import { createRng } from "../../src/env/rng.js";
import { type Env, EpisodeDoneError, type StepResult } from "../../src/env/types.js";
import { resetSandboxCheck, SandboxUnavailableError } from "../../src/sandbox/index.js";
import { runReferenceEpisode } from "../fixtures/reference-episode.js";

const info = codingEnv.info;
const FENCE = "```";
/** Task 0 is reverse-words, exported as reverseWords, with 3 visible tests. */
const TASK = generateTask(0);
const REVERSE =
  "export function reverseWords(t) { return t.split(/\\s+/).filter(Boolean)" +
  '.reverse().join(" "); }\n';

const write = (file: string, content: string) => `write ${file}\n${FENCE}js\n${content}${FENCE}`;

/** Envs created by the tests, closed at the end so no workspace is left behind. */
const opened: Env[] = [];
function newEnv(timeoutMs?: number): CodingEnv {
  const env = new CodingEnv(timeoutMs === undefined ? {} : { timeoutMs });
  opened.push(env);
  return env;
}
afterAll(async () => {
  await Promise.all(opened.map((env) => env.close?.()));
});

async function resetTask0(timeoutMs?: number): Promise<CodingEnv> {
  const env = newEnv(timeoutMs);
  await env.reset(0);
  return env;
}

/** Runs `jobs` with at most `width` in flight. */
async function pooled<T>(jobs: (() => Promise<T>)[], width = 4): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await (jobs[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

/** Runs many (module source, tests) pairs in ONE sandboxed process; returns failures as text. */
async function batchFailures(
  entries: { file: string; source: string; names: string[]; tests: TestCase[] }[],
): Promise<{ failures: string[]; passed: number; total: number }> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "clade-coding-test-")));
  writeFileSync(join(root, "package.json"), '{ "type": "module" }\n');
  try {
    const suites: SuiteRequest[] = entries.map((entry) => {
      writeFileSync(join(root, entry.file), entry.source);
      return { file: entry.file, names: entry.names, calls: entry.tests.map((t) => t.call) };
    });
    const run = await runInSandbox(suites, { root, timeoutMs: 20_000 });
    expect(run.completed).toBe(true);
    const failures: string[] = [];
    let passed = 0;
    let total = 0;
    run.suites.forEach((suite, s) => {
      const entry = entries[s];
      if (!entry) return;
      if (!suite.load?.ok) failures.push(`${entry.file}: did not load`);
      entry.tests.forEach((test, i) => {
        total++;
        const verdict = judgeCase(test, suite.cases[i]);
        if (verdict.passed) passed++;
        else failures.push(`${entry.file}: ${test.call} -> ${verdict.problem}`);
      });
    });
    return { failures, passed, total };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe("coding info, splits and catalog", () => {
  it("declares splits, limits and a description that says tasks repeat exercises", () => {
    expect(info.name).toBe("coding");
    expect(info.version).toBe("1.0.0");
    expect(info.splits).toEqual({ train: { start: 100, end: 500 }, test: { start: 0, end: 100 } });
    expect(info.successThreshold).toBe(1);
    expect(info.maxSteps).toBe(20);
    expect(info.description).toMatch(/repeat exercises/);
    for (const syntax of ["view <file>", "write <file>", "run tests", "submit"]) {
      expect(info.instruction).toContain(syntax);
    }
  });

  it("has at least 40 distinct exercises of graded difficulty with enough tests", () => {
    expect(EXERCISES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(EXERCISES.map((e) => e.id)).size).toBe(EXERCISES.length);
    const difficulties = EXERCISES.map((e) => e.difficulty);
    expect(difficulties).toEqual([...difficulties].sort((a, b) => a - b));
    expect(new Set(difficulties)).toEqual(new Set([1, 2, 3, 4, 5]));
    for (const exercise of EXERCISES) {
      expect(exercise.visible.length, exercise.id).toBeGreaterThanOrEqual(3);
      expect(exercise.hidden.length, exercise.id).toBeGreaterThanOrEqual(4);
      const entry = exercise.exports[0] as string;
      for (const text of [exercise.statement, exercise.stub, exercise.solution]) {
        expect(text, exercise.id).toContain(entry);
      }
    }
  });

  it("maps test indices onto every exercise and keeps held-out exercises out of train", () => {
    const testIds = new Set<string>();
    for (let i = 0; i < 100; i++) testIds.add(exerciseSlot(i).exercise.id);
    expect(testIds.size).toBe(EXERCISES.length);
    expect(TEST_ONLY_IDS.size).toBeGreaterThanOrEqual(5);
    for (let i = 100; i < 500; i++) {
      expect(TEST_ONLY_IDS.has(exerciseSlot(i).exercise.id)).toBe(false);
    }
    expect(TRAIN_EXERCISES.length).toBe(EXERCISES.length - TEST_ONLY_IDS.size);
    expect(exerciseSlot(0)).toEqual({ exercise: EXERCISES[0], variant: 0 });
    expect(exerciseSlot(EXERCISES.length).variant).toBe(1);
  });
});

describe("coding task generation", () => {
  it("is deterministic and varies with the index", () => {
    expect(generateTask(57, 3)).toEqual(generateTask(57, 3));
    expect(generateTask(1).exercise.id).not.toBe(generateTask(0).exercise.id);
  });

  it("renames the main export consistently in every variant", () => {
    const names = new Set<string>();
    for (let i = 0; i < 500; i += EXERCISES.length) {
      for (const seed of [0, 1, 2]) {
        const task = generateTask(i, seed);
        if (task.exercise.id !== EXERCISES[0]?.id) continue;
        const name = task.exports[0] as string;
        names.add(name);
        expect(task.stub).toContain(`export function ${name}(`);
        expect(task.solution).toContain(`export function ${name}(`);
        expect(task.statement).toContain(name);
        for (const test of [...task.visible, ...task.hidden]) expect(test.call).toContain(name);
        expect(task.testFileText).toContain(`import { ${name} } from "./reverse-words.js";`);
        if (name !== "reverseWords") expect(task.solution).not.toContain("reverseWords");
      }
    }
    expect(names.size).toBeGreaterThan(1);
  });

  it("orders hidden tests by seed without changing the set", () => {
    const canonical = (seed: number) => {
      const task = generateTask(30, seed);
      const original = task.exercise.exports[0] as string;
      return task.hidden.map((t) => renameIdentifier(t.call, task.exports[0] as string, original));
    };
    const orders = [0, 1, 2, 3].map(canonical);
    for (const order of orders) expect([...order].sort()).toEqual([...(orders[0] ?? [])].sort());
    expect(new Set(orders.map((order) => order.join("|"))).size).toBeGreaterThan(1);
  });

  it("writes the visible tests as a node:assert file the reference solution passes", async () => {
    const env = newEnv();
    await env.reset(2);
    const task = generateTask(2);
    await env.step(write(task.solutionFile, task.solution));
    const root = env.workspaceRoot as string;
    // The test file is ordinary node:assert code: run it as the module under test.
    const run = await runInSandbox([{ file: task.testFile, names: [], calls: ["1"] }], { root });
    expect(run.suites[0]?.load).toMatchObject({ ok: true });
  });
});

describe("coding reference solutions", () => {
  it("every solution passes all its tests under every name; stubs pass none", async () => {
    const entries = EXERCISES.flatMap((exercise) =>
      [exercise.exports[0] as string, ...exercise.aliases].map((name) => {
        const rename = (text: string) =>
          renameIdentifier(text, exercise.exports[0] as string, name);
        return {
          file: `${exercise.id}-${name}.js`,
          source: rename(exercise.solution),
          names: [name, ...exercise.exports.slice(1)],
          tests: [...exercise.visible, ...exercise.hidden].map((t) => ({
            ...t,
            call: rename(t.call),
          })),
        };
      }),
    );
    const solved = await batchFailures(entries);
    expect(solved.failures).toEqual([]);
    expect(solved.total).toBeGreaterThan(1000);

    const stubs = await batchFailures(
      EXERCISES.map((exercise) => ({
        file: `${exercise.id}.js`,
        source: exercise.stub,
        names: exercise.exports,
        // Tests that the input is left unmodified would pass on a stub that throws.
        tests: exercise.hidden.filter((t) => !/return (input|grid); \}\)\(\)$/.test(t.call)),
      })),
    );
    expect(stubs.passed).toBe(0);
    expect(stubs.total).toBeGreaterThan(400);
  });

  it("proves all 100 test tasks solvable for seeds 0, 1 and 2", async () => {
    const entries = [];
    for (const seed of [0, 1, 2]) {
      for (let i = 0; i < 100; i++) {
        const task = generateTask(i, seed);
        entries.push({
          file: `t${i}-s${seed}.js`,
          source: task.solution,
          names: task.exports,
          tests: [...task.visible, ...task.hidden],
        });
      }
    }
    const { failures } = await batchFailures(entries);
    expect(failures).toEqual([]);
  });

  it("the reference solver wins test and train episodes", async () => {
    const tasks: [number, number][] = [];
    for (let i = 0; i < 100; i += 5) tasks.push([i, 0]);
    tasks.push([3, 1], [64, 2], [99, 4], [100, 0], [250, 1], [499, 0]);
    const results = await pooled(
      tasks.map(
        ([i, seed]) =>
          () =>
            runReferenceEpisode(codingEnv, solveCoding, i, seed),
      ),
    );
    results.forEach((record, k) => {
      expect(record.reward, `task ${tasks[k]}`).toBeGreaterThanOrEqual(info.successThreshold);
      expect(record.steps.at(-1)?.info).toMatchObject({ success: true, fraction: 1 });
    });
  });

  it("the reference solver writes a ReAct message with the bare action", async () => {
    const agent = solveCoding({ env: info, taskIndex: 0, seed: 0, sampleIndex: 0 });
    const env = newEnv();
    const observation = await env.reset(0);
    const reply = await agent.act(
      { instruction: info.instruction, observation, history: [] },
      new AbortController().signal,
    );
    expect(reply.action.startsWith("write reverse-words.js\n```js\n")).toBe(true);
    expect(reply.message).toMatch(/^Thought: .+\n\nAction: write reverse-words\.js/);
  });
});

describe("coding actions", () => {
  it("starts with the statement, the files and the stub", async () => {
    const env = newEnv();
    const first = await env.reset(0);
    expect(first.text).toContain("Exercise: Reverse Words (difficulty 1 of 5)");
    expect(first.text).toContain("- reverse-words.js: your solution; it must export reverseWords");
    expect(first.text).toContain("- reverse-words.test.js: 3 visible tests (read-only)");
    expect(first.text).toContain(TASK.stub.trimEnd());
    expect(first.availableActions).toBeUndefined();
  });

  it("view shows files; unknown or unsafe names are invalid", async () => {
    const env = await resetTask0();
    const viewed = await env.step("view reverse-words.test.js");
    expect(viewed.info).toEqual({ file: "reverse-words.test.js" });
    expect(viewed.observation.text).toContain(
      'assert.deepStrictEqual(reverseWords("hello world"), "world hello");',
    );
    const quoted = await env.step("View `reverse-words.js`");
    expect(quoted.observation.text).toContain("export function reverseWords(text)");
    for (const bad of ["view nope.js", "view ../../../etc/passwd", "view /etc/passwd", "view"]) {
      const result = await env.step(bad);
      expect(result.info.invalid, bad).toBe(true);
      expect(result.done).toBe(false);
    }
  });

  it("write replaces a file, fenced or not; read-only or bad names are invalid", async () => {
    const env = await resetTask0();
    const fenced = await env.step(write("reverse-words.js", REVERSE));
    expect(fenced.observation.text).toBe("Wrote 1 line to reverse-words.js.");
    expect((await env.step("view reverse-words.js")).observation.text).toContain(REVERSE.trim());
    const plain = await env.step("write helper.js\nexport const x = 1;\nexport const y = 2;\n");
    expect(plain.observation.text).toBe("Wrote 2 lines to helper.js.");
    expect((await env.step("view helper.js")).observation.text).toContain("export const y = 2;");
    for (const bad of [
      "write reverse-words.test.js\nx",
      "write package.json\n{}",
      "write ../escape.js\nx",
      "write dir/file.js\nx",
      "write .hidden\nx",
      "write reverse-words.js",
      `write big.js\n${"x".repeat(200_000)}`,
    ]) {
      const result = await env.step(bad);
      expect(result.info.invalid, bad.slice(0, 30)).toBe(true);
    }
    expect(existsSync(join(env.workspaceRoot as string, "..", "escape.js"))).toBe(false);
  });

  it("run tests reports passes and failures with expected and received values", async () => {
    const env = await resetTask0();
    const stub = await env.step("run tests");
    expect(stub.info).toEqual({ passed: 0, total: 3, timedOut: false });
    expect(stub.observation.text).toContain("threw Error: Not implemented yet");
    await env.step(write("reverse-words.js", "export function reverseWords(t) { return t; }\n"));
    const wrong = await env.step("Run Tests");
    expect(wrong.info).toMatchObject({ passed: 1, total: 3 });
    expect(wrong.observation.text).toContain(
      'FAIL reverseWords("hello world")\n  expected: "world hello"\n  received: "hello world"',
    );
    await env.step(write("reverse-words.js", REVERSE));
    const right = await env.step("run tests");
    expect(right.observation.text).toBe("Visible tests of reverse-words.js: 3 run, all passed.");
    expect(right.reward).toBe(0);
    expect(right.done).toBe(false);
  });

  it("explains syntax errors, load errors and missing exports", async () => {
    const env = await resetTask0();
    await env.step("write reverse-words.js\nexport function reverseWords(t) {\n  return t +;\n}\n");
    const syntax = (await env.step("run tests")).observation.text;
    expect(syntax).toContain("reverse-words.js has a syntax error:\nreverse-words.js:2");
    expect(syntax).toContain("SyntaxError");
    expect(syntax).not.toContain(env.workspaceRoot as string);
    await env.step("write reverse-words.js\nexport function reverse(t) { return t; }\n");
    const missing = (await env.step("run tests")).observation.text;
    expect(missing).toContain("does not export reverseWords (it exports reverse)");
    await env.step("write reverse-words.js\nthrow new TypeError('boom');\n");
    const thrown = (await env.step("run tests")).observation.text;
    expect(thrown).toContain("threw while loading: TypeError: boom (at reverse-words.js:1:7)");
  });

  it("submit grades all tests, ends the episode and reports the fraction passed", async () => {
    const env = await resetTask0();
    await env.step(
      write(
        "reverse-words.js",
        'export function reverseWords(t) { return t.split(" ").reverse().join(" "); }\n',
      ),
    );
    const result = await env.step("submit");
    const total = TASK.visible.length + TASK.hidden.length;
    expect(result.done).toBe(true);
    expect(result.reward).toBe(0);
    expect(result.info).toMatchObject({ success: false, total });
    const fraction = result.info.fraction as number;
    expect(fraction).toBeGreaterThan(0.3);
    expect(fraction).toBeLessThan(1);
    expect(result.observation.text).toMatch(/^Submitted\. \d+ of \d+ tests .* not accepted\./);
    await expect(env.step("run tests")).rejects.toBeInstanceOf(EpisodeDoneError);

    const good = await resetTask0();
    await good.step(write("reverse-words.js", REVERSE));
    const accepted = await good.step("submit");
    expect(accepted).toMatchObject({ reward: 1, done: true });
    expect(accepted.info).toMatchObject({ success: true, passed: total, total, fraction: 1 });
  });

  it("treats malformed input as an invalid step and never throws", async () => {
    const env = await resetTask0();
    const inputs = [
      "",
      "   \n\t",
      "dance",
      '{"action": "run tests"}',
      "💥 ünïcödé",
      "x".repeat(1_000_000),
      `view ${".".repeat(100_000)}`,
      `write ${"f".repeat(1_000_000)}`,
      "\u0000\u0001",
    ];
    for (const input of inputs) {
      const result = await env.step(input);
      expect(result.info.invalid).toBe(true);
      expect(result.reward).toBe(0);
      expect(result.observation.text.length).toBeLessThan(400);
      expect(result.observation.text).toMatch(/^Invalid action: /);
    }
  });

  it("ends the episode at the step limit without success", async () => {
    const env = await resetTask0();
    let result: StepResult | undefined;
    for (let i = 0; i < info.maxSteps; i++) {
      expect(result?.done ?? false).toBe(false);
      result = await env.step("view reverse-words.js");
    }
    expect(result?.done).toBe(true);
    expect(result?.reward).toBe(0);
    expect(result?.info).toMatchObject({ success: false, truncated: true, steps: 20 });
    expect(result?.observation.text).toContain("Step limit of 20 actions reached");
    await expect(env.step("submit")).rejects.toBeInstanceOf(EpisodeDoneError);
  });

  it("replays identically for the same task and seed, and differs across tasks", async () => {
    const script = ["view reverse-words.test.js", "run tests", "bogus", "submit"];
    const transcript = async (index: number, seed: number) => {
      const env = newEnv();
      const texts = [(await env.reset(index, { seed })).text];
      for (const action of script) texts.push((await env.step(action)).observation.text);
      return texts;
    };
    const [a, b, c] = await Promise.all([transcript(0, 0), transcript(0, 0), transcript(1, 0)]);
    expect(a).toEqual(b);
    expect(c[0]).not.toEqual(a[0]);
  });
});

describe("coding sandbox", () => {
  it("kills an infinite loop at the timeout and the episode goes on", async () => {
    const env = await resetTask0(800);
    await env.step(
      write(
        "reverse-words.js",
        'export function reverseWords(t) { if (t === "one") for (;;) {} return t; }\n',
      ),
    );
    const started = Date.now();
    const result = await env.step("run tests");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.done).toBe(false);
    expect(result.info).toMatchObject({ timedOut: true, passed: 0, total: 3 });
    expect(result.observation.text).toContain("stopped after 0.8 seconds (an infinite loop?)");
    expect(result.observation.text).toContain('STOPPED reverseWords("one")');
    await env.step(write("reverse-words.js", REVERSE));
    expect((await env.step("run tests")).info).toMatchObject({ passed: 3, timedOut: false });
  });

  it("gives agent code an empty environment: no secrets", async () => {
    const secret = "sk-test-CLADE-FAKE-SECRET-12345";
    process.env.CLADE_FAKE_SECRET = secret;
    try {
      const env = await resetTask0();
      await env.step(
        write(
          "reverse-words.js",
          'console.log("ENV=" + JSON.stringify(process.env));\n' +
            "export function reverseWords() { return process.env.CLADE_FAKE_SECRET ?? 'none'; }\n",
        ),
      );
      const text = (await env.step("run tests")).observation.text;
      expect(text).toContain("ENV={}");
      expect(text).toContain('received: "none"');
      expect(text).not.toContain(secret);
    } finally {
      delete process.env.CLADE_FAKE_SECRET;
    }
  });

  it("stops code that takes too much native memory", async () => {
    const env = await resetTask0();
    await env.step(
      write(
        "reverse-words.js",
        "const hoard = [];\n" +
          "for (let i = 0; i < 64; i++) { hoard.push(Buffer.alloc(32 * 1024 * 1024, 1));\n" +
          "  await new Promise((r) => setTimeout(r, 20)); }\n" +
          `${REVERSE}`,
      ),
    );
    const started = Date.now();
    const result = await env.step("run tests");
    expect(result.done).toBe(false);
    expect(result.observation.text).toContain("used more than 256 MB of memory");
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("cannot signal the host process", async () => {
    const env = await resetTask0();
    await env.step(
      write(
        "reverse-words.js",
        `for (const pid of [process.ppid, ${process.pid}]) {\n` +
          '  try { process.kill(pid, "SIGKILL"); console.log("SIGNALLED", pid); }\n' +
          '  catch (e) { console.log("REFUSED", e.message); }\n' +
          `}\n${REVERSE}`,
      ),
    );
    const result = await env.step("run tests");
    // This test process is still here to read the result: that is the point.
    expect(result.info).toMatchObject({ passed: 3, total: 3 });
    expect(result.observation.text).not.toContain("SIGNALLED");
    expect(result.observation.text).toContain("REFUSED");
  });

  it("cannot reach servers on the host's loopback", async () => {
    const server = createServer((_req, res) => res.end("reached"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const env = await resetTask0();
      await env.step(
        write(
          "reverse-words.js",
          `try { const r = await fetch("http://127.0.0.1:${port}/"); console.log("GOT", await r.text()); }\n` +
            'catch (e) { console.log("UNREACHABLE"); }\n' +
            REVERSE,
        ),
      );
      const text = (await env.step("run tests")).observation.text;
      expect(text).toContain("UNREACHABLE");
      expect(text).not.toContain("reached");
    } finally {
      server.close();
    }
  });

  it("cannot reach a Unix-domain socket of the host", async () => {
    const dir = mkdtempSync(join(tmpdir(), "clade-coding-sock-"));
    const path = join(dir, "host.sock");
    let connections = 0;
    const server = createNetServer((socket) => {
      connections++;
      socket.end("reached");
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      const env = await resetTask0();
      await env.step(
        write(
          "reverse-words.js",
          'import net from "node:net";\n' +
            "const got = await new Promise((resolve) => {\n" +
            `  const s = net.connect(${JSON.stringify(path)});\n` +
            '  s.on("data", (d) => resolve("GOT " + d));\n' +
            '  s.on("error", (e) => resolve("UNREACHABLE " + e.code));\n' +
            "});\nconsole.log(got);\n" +
            REVERSE,
        ),
      );
      const text = (await env.step("run tests")).observation.text;
      expect(text).toContain("UNREACHABLE");
      expect(text).not.toContain("GOT");
      expect(connections).toBe(0);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("cannot fill the disk: the workspace is a 32 MB tmpfs and says when it is full", async () => {
    const env = await resetTask0();
    await env.step(
      write(
        "reverse-words.js",
        'import fs from "node:fs";\nlet written = 0;\n' +
          "try {\n  for (let i = 0; i < 64; i++) {\n" +
          '    fs.writeFileSync("fill" + i + ".bin", Buffer.alloc(8 * 1024 * 1024, 1));\n' +
          "    written += 8;\n  }\n" +
          '} catch (e) { console.log("STOPPED " + e.code + " after " + written + " MB"); }\n' +
          REVERSE,
      ),
    );
    const result = await env.step("run tests");
    expect(result.info).toMatchObject({ passed: 3, total: 3 });
    expect(result.observation.text).toMatch(/STOPPED ENOSPC after (16|24) MB/);
    expect(result.observation.text).toContain("The workspace is full (32 MB)");
    // What came back to the host is bounded by the tmpfs too.
    const root = env.workspaceRoot as string;
    const bytes = readdirSync(root).reduce((sum, name) => sum + statSync(join(root, name)).size, 0);
    expect(bytes).toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(bytes).toBeGreaterThan(16 * 1024 * 1024);
  });

  it("truncates huge output and huge files, and still runs the tests", async () => {
    const env = await resetTask0();
    const source =
      'import fs from "node:fs";\nfs.writeFileSync("big.txt", "z".repeat(5_000_000));\n' +
      `console.log("y".repeat(2_000_000));\n${REVERSE}`;
    await env.step(write("reverse-words.js", source));
    const result = await env.step("run tests");
    expect(result.info).toMatchObject({ passed: 3, total: 3 });
    expect(result.observation.text).toContain("Console output:");
    expect(result.observation.text).toContain("(output truncated)");
    expect(result.observation.text.length).toBeLessThan(3000);
    const viewed = await env.step("view big.txt");
    expect(viewed.observation.text).toContain("only the first 8000 characters of 5000000 bytes");
    expect(viewed.observation.text.length).toBeLessThan(8200);
  });

  it("confines files to the workspace and denies child processes", async () => {
    const env = await resetTask0();
    // A host file outside the workspace (inside the sandbox it does not even exist).
    const outside = "/etc/hostname";
    await env.step(
      write(
        "reverse-words.js",
        'import fs from "node:fs";\nimport cp from "node:child_process";\n' +
          "const tryIt = (f) => {\n  try { f(); return 'allowed'; }\n" +
          "  catch (e) { return e.code; }\n};\n" +
          `console.log("OUTSIDE=" + tryIt(() => fs.readFileSync(${JSON.stringify(outside)})));\n` +
          'console.log("INSIDE=" + tryIt(() => fs.readFileSync("reverse-words.test.js")));\n' +
          'console.log("SPAWN=" + tryIt(() => cp.execSync("echo hi")));\n' +
          'console.log("LINK=" + tryIt(() => fs.symlinkSync("/etc/hostname", "link.txt")));\n' +
          REVERSE,
      ),
    );
    const text = (await env.step("run tests")).observation.text;
    expect(text).toContain("OUTSIDE=ERR_ACCESS_DENIED");
    expect(text).toContain("INSIDE=allowed");
    expect(text).toContain("SPAWN=ERR_ACCESS_DENIED");
    expect(text).toContain("LINK=ERR_ACCESS_DENIED");
  });

  it("ignores result records forged by the code under test", async () => {
    const env = await resetTask0();
    const forged = [
      { t: "load", s: 0, ok: true, exports: ["reverseWords"] },
      ...[0, 1, 2].map((i) => ({ t: "case", s: 0, i, ok: true, value: "forged" })),
      { t: "end" },
    ];
    await env.step(
      write(
        "reverse-words.js",
        'import fs from "node:fs";\n' +
          `for (const r of ${JSON.stringify(forged)}) fs.writeSync(3, JSON.stringify(r) + "\\n");\n` +
          "export function reverseWords(t) { process.exit(0); }\n",
      ),
    );
    const result = await env.step("run tests");
    expect(result.info).toMatchObject({ passed: 0, total: 3 });
    expect(result.observation.text).toContain("ended early with exit code 0");
    expect(result.observation.text).not.toContain("forged");
  });

  it("keeps each episode in a fresh temp workspace, removed on reset and close", async () => {
    const env = newEnv();
    await env.reset(0);
    const first = env.workspaceRoot as string;
    expect(first.startsWith(realpathSync(tmpdir()))).toBe(true);
    expect(existsSync(join(first, "reverse-words.js"))).toBe(true);
    await env.reset(1);
    const second = env.workspaceRoot as string;
    expect(second).not.toBe(first);
    expect(existsSync(first)).toBe(false);
    await env.close();
    expect(existsSync(second)).toBe(false);
  });
});

describe("coding sandbox mode", () => {
  afterEach(() => {
    delete process.env.CLADE_SANDBOX;
    delete process.env.CLADE_BWRAP;
    resetSandboxCheck();
  });

  it("fails with one line saying how to install bubblewrap when it is missing", async () => {
    process.env.CLADE_BWRAP = "/nonexistent/bwrap";
    resetSandboxCheck();
    const env = newEnv();
    const error = await env.reset(0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain("apt-get install bubblewrap");
    expect(message).toContain("CLADE_SANDBOX=none");
    expect(message).not.toContain("\n");
    expect(env.workspaceRoot).toBeUndefined();
  });

  it("runs unsandboxed only when asked, and says so in its version", async () => {
    expect(codingEnv.info.version).toBe("1.0.0");
    process.env.CLADE_SANDBOX = "none";
    expect(codingEnv.info.version).toBe("1.0.0+sandbox-none");
    expect(codingEnv.info.description).toMatch(/^UNSANDBOXED/);
    // Even with bubblewrap gone, an explicit "none" runs the tests.
    process.env.CLADE_BWRAP = "/nonexistent/bwrap";
    resetSandboxCheck();
    const env = newEnv();
    expect(env.info.version).toBe("1.0.0+sandbox-none");
    await env.reset(0);
    await env.step(write("reverse-words.js", REVERSE));
    expect((await env.step("submit")).info).toMatchObject({ success: true });
    const explicit = new CodingEnv({ sandbox: "bwrap" });
    opened.push(explicit);
    expect(explicit.info.version).toBe("1.0.0");
  });

  it("refuses a CLADE_SANDBOX it does not know, in one line", async () => {
    process.env.CLADE_SANDBOX = "off";
    expect(codingEnv.info.version).toBe("1.0.0");
    const error = await newEnv()
      .reset(0)
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'CLADE_SANDBOX must be "bwrap" (the sandbox) or "none" (no sandbox), got "off"',
    );
  });
});

describe("coding helpers", () => {
  it("parses the action syntax", () => {
    expect(parseAction("run tests")).toEqual({ kind: "run" });
    expect(parseAction("  RUN   TESTS. ")).toEqual({ kind: "run" });
    expect(parseAction("submit")).toEqual({ kind: "submit" });
    expect(parseAction("`submit`")).toEqual({ kind: "submit" });
    expect(parseAction("view a.js")).toEqual({ kind: "view", file: "a.js" });
    expect(parseAction('view "a.js".')).toEqual({ kind: "view", file: "a.js" });
    expect(parseAction("write a.js\r\n```js\r\nx = 1;\r\n```\r\nthanks")).toEqual({
      kind: "write",
      file: "a.js",
      content: "x = 1;\n",
    });
    expect(parseAction("write a.js ```js\ny\n```")).toEqual({
      kind: "write",
      file: "a.js",
      content: "y\n",
    });
    expect(parseAction("write a.js\nplain\n\ncontent\n")).toEqual({
      kind: "write",
      file: "a.js",
      content: "plain\n\ncontent\n",
    });
    expect(parseAction("runs tests").kind).toBe("invalid");
    expect(unfence("\n```\nopen fence\n")).toBe("open fence\n\n");
  });

  it("compares values by canonical JSON, telling undefined and null apart", () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe(
      canonicalJson({ a: [1, { c: 3, d: 2 }], b: 1 }),
    );
    const test: TestCase = { call: "f()", expect: null };
    expect(judgeCase(test, { ok: true, value: null }).passed).toBe(true);
    expect(judgeCase(test, { ok: true, value: { $undefined: true } }).problem).toContain(
      "received: undefined",
    );
    const error = { name: "Error", message: "bad input here", where: "", stack: "" };
    expect(judgeCase({ call: "f()", throws: "bad input" }, { ok: false, error }).passed).toBe(true);
    expect(judgeCase({ call: "f()", throws: "other" }, { ok: false, error }).passed).toBe(false);
    expect(judgeCase({ call: "f()", throws: "x" }, { ok: true, value: 1 }).passed).toBe(false);
    expect(judgeCase(test, undefined)).toMatchObject({ passed: false, finished: false });
  });

  it("samples mostly valid actions", async () => {
    const env = newEnv();
    const rng = createRng(42);
    let steps = 0;
    let invalid = 0;
    for (const index of [0, 7]) {
      let observation = await env.reset(index);
      for (let i = 0; i < 15; i++) {
        const result = await env.step(codingEnv.sampleAction(rng.next, observation));
        steps++;
        if (result.info.invalid) invalid++;
        if (result.done) break;
        observation = result.observation;
      }
    }
    expect(steps).toBeGreaterThan(5);
    expect(invalid / steps).toBeLessThan(0.3);
  });
});

describe("coding sandbox concurrency", () => {
  const roots: string[] = [];
  afterEach(() => {
    setSandboxConcurrency();
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  /** A workspace whose busy(ms, v) spins for ms milliseconds, then returns v. */
  function busyWorkspace(): string {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "clade-coding-slots-")));
    roots.push(root);
    writeFileSync(join(root, "package.json"), '{ "type": "module" }\n');
    writeFileSync(
      join(root, "busy.js"),
      "export function busy(ms, v) { const end = Date.now() + ms; while (Date.now() < end) {} return v; }\n",
    );
    return root;
  }

  const busyRun = (root: string, ms: number, value: number, options = {}) =>
    runInSandbox([{ file: "busy.js", names: ["busy"], calls: [`busy(${ms}, ${value})`] }], {
      root,
      timeoutMs: 10_000,
      ...options,
    });

  const resultOf = (run: SandboxRun) => {
    const record = run.suites[0]?.cases[0];
    return record?.ok ? record.value : record;
  };

  it("derives the cap from memory: at least 1, one slot per run allowance", () => {
    expect(sandboxSlotsFor(0)).toBe(1);
    expect(sandboxSlotsFor(SANDBOX_RUN_MEMORY_BYTES)).toBe(1);
    expect(sandboxSlotsFor(16 * 1024 ** 3)).toBe(
      Math.floor((8 * 1024 ** 3) / SANDBOX_RUN_MEMORY_BYTES),
    );
    setSandboxConcurrency();
    expect(sandboxConcurrency().limit).toBeGreaterThanOrEqual(1);
    expect(() => setSandboxConcurrency(0)).toThrow(RangeError);
  });

  it("runs at most the cap at once; the rest wait their turn and all finish correctly", async () => {
    setSandboxConcurrency(2);
    const root = busyWorkspace();
    let maxActive = 0;
    const watch = setInterval(() => {
      maxActive = Math.max(maxActive, sandboxConcurrency().active);
    }, 5);
    try {
      const runs = [1, 2, 3, 4, 5].map((value) => busyRun(root, 250, value));
      // The first two took the slots, the other three are in line.
      expect(sandboxConcurrency()).toMatchObject({ limit: 2, active: 2, queued: 3 });
      const results = await Promise.all(runs);
      expect(results.map(resultOf)).toEqual([1, 2, 3, 4, 5]);
      expect(results.every((run) => run.completed && !run.timedOut)).toBe(true);
    } finally {
      clearInterval(watch);
    }
    expect(maxActive).toBe(2);
    expect(sandboxConcurrency()).toMatchObject({ active: 0, queued: 0 });
  });

  it("starts a queued run's timeout when its child starts, not while it waits", async () => {
    setSandboxConcurrency(1);
    const root = busyWorkspace();
    const first = busyRun(root, 600, 1);
    const second = busyRun(root, 50, 2, { timeoutMs: 400 });
    const [a, b] = await Promise.all([first, second]);
    expect(resultOf(a)).toBe(1);
    expect(b.timedOut).toBe(false);
    expect(resultOf(b)).toBe(2);
  });

  it("gives up a queued run on abort or past its queue timeout; the slot holder is unharmed", async () => {
    setSandboxConcurrency(1);
    const root = busyWorkspace();
    const holder = busyRun(root, 700, 1);
    const controller = new AbortController();
    const aborted = busyRun(root, 10, 2, { signal: controller.signal });
    const impatient = busyRun(root, 10, 3, { queueTimeoutMs: 100 });
    expect(sandboxConcurrency().queued).toBe(2);
    const reason = new Error("caller went away");
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    const busy = await impatient.catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(SandboxBusyError);
    expect((busy as Error).message).toMatch(/every sandbox slot \(1\) stayed busy/);
    expect(sandboxConcurrency().queued).toBe(0);
    expect(resultOf(await holder)).toBe(1);
    // An already-aborted signal never queues.
    await expect(busyRun(root, 10, 4, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it("lets closing a coding env give up its queued run", async () => {
    setSandboxConcurrency(1);
    const holder = busyRun(busyWorkspace(), 500, 1);
    const env = await resetTask0();
    const step = env.step("run tests").catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sandboxConcurrency().queued).toBe(1);
    await env.close();
    expect(await step).toMatchObject({ message: expect.stringMatching(/was closed/) });
    expect(sandboxConcurrency().queued).toBe(0);
    await holder;
  });

  it("does not count a run that never got a slot as a step", async () => {
    setSandboxConcurrency(1);
    const holder = busyRun(busyWorkspace(), 1_000, 1);
    const env = new CodingEnv({ queueTimeoutMs: 50 });
    opened.push(env);
    await env.reset(0);
    await expect(env.step("run tests")).rejects.toBeInstanceOf(SandboxBusyError);
    await holder;
    await env.step(write("reverse-words.js", REVERSE));
    // write and submit: two steps; the refused run is not one.
    expect((await env.step("submit")).info).toMatchObject({ success: true, steps: 2 });
  });
});
