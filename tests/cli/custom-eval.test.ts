/**
 * Your own environments, agents and eval files, through the CLI as a user types it:
 * `clade eval --env ./my-env.ts --agent ./my-agent.js`, `--limit`, and `clade eval NAME` running
 * the named evals of clade.config (one run per env × model, then a combined table).
 */
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { worstExitCode } from "../../src/cli/commands/eval.js";
import { RunStore } from "../../src/store/run-store.js";
import { type FakeModelServer, startFakeModelServer } from "../../src/testing/fake-model-server.js";
import { runCli } from "../fixtures/cli.js";
import {
  COUNTER_ENV_TS,
  INC_AGENT_JS,
  INC_FUNCTION_AGENT_TS,
  MODEL_AGENT_TS,
  writeModule,
} from "../fixtures/user-modules.js";

const cli = runCli;

let dir: string;
let db: string;
let envPath: string;
let agentPath: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "clade-custom-"));
  db = join(dir, "clade.db");
  envPath = writeModule(dir, "counter-env.ts", COUNTER_ENV_TS);
  agentPath = writeModule(dir, "inc-agent.js", INC_AGENT_JS);
});

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

function storedRun(id: string) {
  const store = RunStore.open(db, { readonly: true });
  try {
    return { run: store.getRun(id), episodes: store.episodes(id) };
  } finally {
    store.close();
  }
}

/** A refusal: exit 2, one line on stderr, nothing on stdout. */
function expectOneLineError(result: { code: number; stdout: string; stderr: string }, re: RegExp) {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  expect(result.stderr.trim().split("\n")).toHaveLength(1);
  expect(result.stderr).toMatch(re);
}

describe("clade eval --env ./module --agent ./module", () => {
  it("runs a TypeScript environment with a JavaScript agent and stores both modules' identity", async () => {
    const result = await cli(
      "eval",
      "--env",
      envPath,
      "--agent",
      agentPath,
      "--tasks",
      "0-4",
      "--samples",
      "2",
      "--run-id",
      "c1",
      "--db",
      db,
      "--json",
    );
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({
      schema: "clade.eval/1",
      runId: "c1",
      env: "counter",
      envVersion: "1",
      agent: "always-inc",
      model: null,
      exitCode: 0,
      ran: 10,
    });
    expect(summary.metrics).toMatchObject({ episodes: 10, successes: 10, successRate: 1 });

    const shown = JSON.parse((await cli("show", "c1", "--db", db, "--json")).stdout);
    expect(shown.run).toMatchObject({ env: "counter", agent: "always-inc" });
    expect(shown.run.config.envModule).toEqual({ path: envPath, sha256: sha256(envPath) });
    expect(shown.run.config.agentModule).toEqual({ path: agentPath, sha256: sha256(agentPath) });

    // Unchanged modules: the same command resumes, running nothing new.
    const again = await cli(
      "eval",
      "--env",
      envPath,
      "--agent",
      agentPath,
      "--tasks",
      "0-4",
      "--samples",
      "2",
      "--run-id",
      "c1",
      "--db",
      db,
      "--json",
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ resumed: true, skipped: 10, ran: 0 });
  });

  it("refuses to resume a run whose environment or agent module changed", async () => {
    const args = ["--tasks", "0-2", "--run-id", "c2", "--db", db, "--quiet"];
    const first = await cli("eval", "--env", envPath, "--agent", agentPath, ...args);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/run c2: counter v1, agent always-inc/);

    appendFileSync(agentPath, "// a changed agent\n");
    const changedAgent = await cli("eval", "--env", envPath, "--agent", agentPath, ...args);
    expectOneLineError(
      changedAgent,
      /run "c2" already exists with a different configuration \(agentModule\)/,
    );

    writeFileSync(agentPath, INC_AGENT_JS);
    appendFileSync(envPath, "// a changed environment\n");
    const changedEnv = await cli("eval", "--env", envPath, "--agent", agentPath, ...args);
    expectOneLineError(changedEnv, /different configuration \(envModule\)/);
    // Nothing was added to the stored run.
    expect(storedRun("c2").episodes).toHaveLength(3);
  });

  it("takes a plain function as the agent, named after its file, from a relative path", async () => {
    writeModule(dir, "inc-fn.ts", INC_FUNCTION_AGENT_TS);
    // Relative to the working directory, as typed: ../../tmp/.../inc-fn.ts
    const relativeTo = (path: string) => relative(process.cwd(), path);
    expect(relativeTo(envPath)).toMatch(/^\.\.\//);
    const result = await cli(
      "eval",
      "--env",
      relativeTo(envPath),
      "--agent",
      relativeTo(join(dir, "inc-fn.ts")),
      "--tasks",
      "0-3",
      "--run-id",
      "fn",
      "--db",
      db,
      "--json",
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ agent: "inc-fn", ran: 4 });
    expect(storedRun("fn").run?.config.agentModule).toMatchObject({ path: join(dir, "inc-fn.ts") });
  });

  it("--limit runs the first N tasks of the selection, and the tasks identify the run", async () => {
    const base = ["eval", "--env", envPath, "--agent", agentPath, "--db", db, "--json"];
    const limited = await cli(...base, "--tasks", "3-9", "--limit", "3", "--run-id", "lim");
    expect(limited.code).toBe(0);
    expect(JSON.parse(limited.stdout).metrics.tasks).toBe(3);
    const { run, episodes } = storedRun("lim");
    expect(run?.config.tasks).toBe("3-5");
    expect(episodes.map((e) => e.taskIndex)).toEqual([3, 4, 5]);

    // --tasks test --limit 2 on the built-in maze: tasks 0 and 1.
    const maze = await cli("eval", "--env", "maze", "--limit", "2", "--run-id", "mz", "--db", db);
    expect(maze.code).toBe(0);
    expect(storedRun("mz").run?.config.tasks).toBe("0-1");

    // Another limit is another task list, hence another configuration.
    const other = await cli(...base, "--tasks", "3-9", "--limit", "4", "--run-id", "lim");
    expectOneLineError(other, /different configuration \(tasks\)/);

    const bad = await cli(...base, "--limit", "0", "--run-id", "x");
    expectOneLineError(bad, /--limit must be at least 1/);
  });

  it("refuses a bad module with one line, exit 2, and writes nothing", async () => {
    writeModule(dir, "syntax.ts", "export default { info: ;\n");
    writeModule(dir, "no-create.ts", "export default { info: { name: 'x' } };\n");
    writeModule(dir, "no-default.mjs", "export const env = 1;\n");
    writeModule(dir, "number-agent.js", "export default 42;\n");
    writeModule(dir, "bad-name-agent.js", "export default { name: 'a b', create() {} };\n");
    const cases: [string[], RegExp][] = [
      [["--env", join(dir, "missing.ts")], /environment module .*missing\.ts not found/],
      [["--env", join(dir, "syntax.ts")], /environment module .*syntax\.ts: cannot load: /],
      [
        ["--env", join(dir, "no-create.ts")],
        /environment module .*no-create\.ts: the default export is not an environment definition .*info\.version/,
      ],
      [
        ["--env", join(dir, "no-default.mjs")],
        /environment module .*no-default\.mjs has no default export/,
      ],
      [
        ["--env", envPath, "--agent", join(dir, "number-agent.js")],
        /agent module .*number-agent\.js: the default export must be an agent factory/,
      ],
      [
        ["--env", envPath, "--agent", join(dir, "bad-name-agent.js")],
        /agent module .*bad-name-agent\.js: .*name: use 1-60 letters/,
      ],
      [
        ["--env", envPath, "--agent", "./nowhere/agent.ts"],
        /agent module \.\/nowhere\/agent\.ts not found/,
      ],
      // A custom environment has no reference solver, and this one no action sampler.
      [["--env", envPath], /no reference solver for environment "counter"/],
      [["--env", envPath, "--agent", "random"], /has no sampleAction/],
      [
        ["--env", envPath, "--agent", agentPath, "--env-url", "http://127.0.0.1:1"],
        /not a module path/,
      ],
    ];
    for (const [args, re] of cases) {
      const result = await cli("eval", ...args, "--run-id", "bad", "--db", db);
      expectOneLineError(result, re);
      expect(existsSync(db)).toBe(false);
    }
  });
});

describe("custom agents with --model", () => {
  let server: FakeModelServer;
  beforeEach(async () => {
    server = await startFakeModelServer({ rule: () => ({ content: "inc" }) });
  });
  afterEach(async () => {
    await server.close();
  });

  it("get the run's model in setup.model; every call is stored and in the identity", async () => {
    const asker = writeModule(dir, "asker.ts", MODEL_AGENT_TS);
    const model = `openai-compatible:${server.openaiBaseUrl}#fake-model`;
    const result = await cli(
      "eval",
      "--env",
      envPath,
      "--agent",
      asker,
      "--model",
      model,
      "--temperature",
      "0.5",
      "--tasks",
      "0-1",
      "--run-id",
      "ask",
      "--db",
      db,
      "--json",
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ agent: "asker", model, exitCode: 0 });
    expect(summary.metrics.successes).toBe(2);
    // Tasks 0 and 1 need 1 and 2 steps: one model call per step.
    expect(summary.usage).toEqual([expect.objectContaining({ calls: 3 })]);
    const { run } = storedRun("ask");
    expect(run?.config).toMatchObject({ model, params: { temperature: 0.5 } });
    expect(run?.config.agentModule).toMatchObject({ sha256: sha256(asker) });
  });
});

describe("clade eval NAME: eval files", () => {
  let server: FakeModelServer;
  beforeEach(async () => {
    server = await startFakeModelServer({
      rule: () => ({ content: "Thought:\nCount up.\n\nAction:\ninc" }),
    });
  });
  afterEach(async () => {
    await server.close();
  });

  function writeConfig(config: unknown, name = "clade.config.json"): string {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(config));
    return path;
  }

  /** Two models (one served model under two names and temperatures) on the counter module. */
  function twoModelConfig(extra: Record<string, unknown> = {}) {
    const spec = `openai-compatible:${server.openaiBaseUrl}#fake-model`;
    return writeConfig({
      models: {
        cold: { model: spec, params: { temperature: 0 } },
        warm: { model: spec, params: { temperature: 0.9 } },
      },
      evals: {
        smoke: {
          description: "react on the counter, two models",
          // Relative to the config file, not to the working directory.
          env: "./counter-env.ts",
          agent: "react",
          model: ["cold", "warm"],
          tasks: "0-9",
          limit: 3,
          maxTurns: 6,
          ...extra,
        },
        baseline: { env: ["maze", "./counter-env.ts"], agent: "./inc-agent.js", tasks: "0-1" },
      },
    });
  }

  it("runs each model as a run of its own, with a combined table and clade.eval-set/1", async () => {
    const config = twoModelConfig();
    const text = await cli("eval", "smoke", "--config", config, "--db", db, "--quiet");
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/run smoke-counter-cold: counter v1, agent react, model cold/);
    expect(text.stdout).toMatch(/run smoke-counter-warm: counter v1, agent react, model warm/);
    const table = text.stdout.slice(text.stdout.search(/\nrun\s+env\s+agent/));
    expect(table).toMatch(
      /^\nrun\s+env\s+agent\s+model\s+success\s+95% CI\s+mean reward\s+errors\s+cost\s+episodes\s+exit\n-+\n/,
    );
    expect(table).toMatch(/smoke-counter-cold\s+counter\s+react\s+cold\s+1\.000/);
    expect(table).toMatch(/smoke-counter-warm\s+counter\s+react\s+warm\s+1\.000/);

    const cold = storedRun("smoke-counter-cold").run;
    const warm = storedRun("smoke-counter-warm").run;
    expect(cold?.config).toMatchObject({ tasks: "0-2", maxTurns: 6, params: { temperature: 0 } });
    expect(warm?.config).toMatchObject({ tasks: "0-2", params: { temperature: 0.9 } });

    // The same command again resumes both runs; --json gives the eval set's object.
    const json = await cli("eval", "smoke", "--config", config, "--db", db, "--json");
    expect(json.code).toBe(0);
    const set = JSON.parse(json.stdout);
    expect(set).toMatchObject({ schema: "clade.eval-set/1", evals: ["smoke"], exitCode: 0 });
    expect(set.runs).toHaveLength(2);
    expect(set.runs[0]).toMatchObject({
      eval: "smoke",
      runId: "smoke-counter-cold",
      env: "counter",
      agent: "react",
      model: `openai-compatible:${server.openaiBaseUrl}#fake-model`,
      exitCode: 0,
      resumed: true,
      ran: 0,
      skipped: 3,
    });
    expect(set.runs[0].metrics).toMatchObject({ episodes: 3, successRate: 1 });
    expect(set.runs[0].usage).toHaveLength(1);
    expect(set.runs[1].runId).toBe("smoke-counter-warm");
  });

  it("runs several evals and env lists; flags override the file", async () => {
    const config = twoModelConfig();
    const result = await cli(
      "eval",
      "baseline",
      "smoke",
      "--config",
      config,
      "--db",
      db,
      "--limit",
      "1",
      "--samples",
      "2",
      "--run-id",
      "ci",
      "--json",
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const set = JSON.parse(result.stdout);
    expect(set.evals).toEqual(["baseline", "smoke"]);
    expect(set.runs.map((r: { runId: string }) => r.runId)).toEqual([
      "ci-maze-always-inc",
      "ci-counter-always-inc",
      "ci-counter-cold",
      "ci-counter-warm",
    ]);
    for (const run of set.runs) expect(run.metrics).toMatchObject({ tasks: 1, episodes: 2 });
    // The agent module path came from the file, relative to it.
    expect(storedRun("ci-maze-always-inc").run?.config.agentModule).toMatchObject({
      path: agentPath,
    });
    // The maze does not understand "inc": finished failures, not errors.
    expect(set.runs[0].metrics.successRate).toBe(0);
  });

  it("gives the worst run's exit code; a run refused does not stop the others", async () => {
    const config = twoModelConfig();
    expect((await cli("eval", "baseline", "--config", config, "--db", db, "--quiet")).code).toBe(0);
    appendFileSync(join(dir, "counter-env.ts"), "// changed\n");
    const result = await cli("eval", "baseline", "--config", config, "--db", db, "--json");
    expect(result.code).toBe(2);
    // With --json, the refusal is a clade.error/1 line on stderr, and the run's `error`.
    expect(JSON.parse(result.stderr)).toMatchObject({
      schema: "clade.error/1",
      error: { kind: "usage", name: "RunConflictError" },
    });
    expect(result.stderr).toMatch(
      /run \\"baseline-counter-always-inc\\" already exists with a different configuration \(envModule\)/,
    );
    const set = JSON.parse(result.stdout);
    expect(set.exitCode).toBe(2);
    expect(set.runs.map((r: { exitCode: number }) => r.exitCode)).toEqual([0, 2]);
    expect(set.runs[1]).toMatchObject({
      runId: "baseline-counter-always-inc",
      error: expect.any(String),
    });
    expect(set.runs[1].metrics).toBeUndefined();
  });

  it("a TypeScript config file works the same", async () => {
    const path = join(dir, "clade.config.ts");
    writeFileSync(
      path,
      `export default { evals: { quick: { env: "./counter-env.ts", agent: "./inc-agent.js", tasks: "0-1" } } };\n`,
    );
    const result = await cli("eval", "quick", "--config", path, "--db", db, "--json");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).runs[0]).toMatchObject({ runId: "quick-counter-always-inc" });
  });

  it("refuses bad eval entries and unknown names with one line, writing nothing", async () => {
    const bad: [unknown, RegExp][] = [
      [{ evals: { s: { env: "maze", samples: 0 } } }, /evals\.s\.samples: must be at least 1/],
      [{ evals: { s: { env: "maze", sample: 2 } } }, /evals\.s: Unrecognized key: "sample"/],
      [{ evals: { s: { agent: "random" } } }, /evals\.s\.env: /],
      [{ evals: { s: { env: [] } } }, /evals\.s\.env: must be an environment name or module path/],
      [{ evals: { s: { env: "maze", model: 3 } } }, /evals\.s\.model: /],
      [
        { evals: { s: { env: "maze", cache: "yes" } } },
        /evals\.s\.cache: must be off, read, write or rw/,
      ],
      [{ evals: { "-s": { env: "maze" } } }, /evals\.-s: /],
    ];
    for (const [config, re] of bad) {
      const result = await cli("eval", "s", "--config", writeConfig(config), "--db", db);
      expectOneLineError(result, re);
    }
    const config = twoModelConfig();
    const cases: [string[], RegExp][] = [
      [["nope"], /unknown eval "nope" \(known: smoke, baseline\)/],
      [["smoke", "--env-url", "http://127.0.0.1:1"], /--env-url .* single run/],
      [["smoke", "--model", "missing-model"], /unknown model "missing-model"/],
      [["smoke", "--tasks", "500"], /task 500 does not exist in counter/],
    ];
    for (const [args, re] of cases) {
      expectOneLineError(await cli("eval", ...args, "--config", config, "--db", db), re);
    }
    // An entry whose runs would collide: the same env twice.
    const twice = writeConfig({ evals: { t: { env: ["maze", "maze"] } } }, "twice.json");
    expectOneLineError(
      await cli("eval", "t", "--config", twice, "--db", db),
      /would share the run id "t-maze-reference"/,
    );
    // No --env and no name; a name with no config file around.
    expectOneLineError(await cli("eval", "--db", db), /give --env NAME .* clade eval NAME/);
    expectOneLineError(
      await cli("eval", "maze", "--config", config, "--db", db),
      /unknown eval "maze" \(known: smoke, baseline\); to evaluate an environment, use --env maze/,
    );
    const empty = writeConfig({}, "empty.json");
    expectOneLineError(
      await cli("eval", "smoke", "--config", empty, "--db", db),
      /unknown eval "smoke" \(.*defines no evals\)/,
    );
    expect(existsSync(db)).toBe(false);
  });
});

describe("worstExitCode", () => {
  it("orders refused > all errored > some errored > budget > finished", () => {
    expect(worstExitCode([])).toBe(0);
    expect(worstExitCode([0, 3, 0])).toBe(3);
    expect(worstExitCode([3, 4])).toBe(4);
    expect(worstExitCode([4, 5, 3])).toBe(5);
    expect(worstExitCode([5, 2, 0])).toBe(2);
  });
});
