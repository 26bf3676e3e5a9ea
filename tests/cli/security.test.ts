/**
 * API keys never reach the store, the logs or the exports. Evaluations run with known fake keys
 * (one from the environment, one from the config file) against fake providers that succeed, fail
 * with 500s, reject the key with a 401, echo the key back in their error messages, and echo it in
 * their completions (text, tool arguments, model name; streamed too); then every byte the CLI
 * wrote (database, WAL, exports, stdout, stderr, console) is searched for the keys. Code under
 * test in the coding environment (run in the sandbox) looks for the key too, and finds none.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  API_KEY_PLACEHOLDER,
  type FakeModelServer,
  type FakeReply,
  type FakeRequest,
  type FakeRule,
  startFakeModelServer,
} from "../../src/testing/fake-model-server.js";
import { runCli } from "../fixtures/cli.js";

const ENV_KEY = "sk-test-SECRET-7f3a9c";
const CONFIG_KEY = "sk-conf-SECRET-55d1";
/** A key not shaped like "sk-..." (a self-hosted server's token): only its known value helps. */
const PLAIN_KEY = "vllm-token-NOPREFIX-31c7";
/** Also searched for: what a provider echoing part of a key (as OpenAI does) would leave. */
const NEEDLES = [ENV_KEY, CONFIG_KEY, PLAIN_KEY, "SECRET-7f3a9c", "SECRET-55d1", "NOPREFIX-31c7"];
/** The key an auth-checking fake server expects: ours are wrong, so it answers 401. */
const SERVER_KEY = "sk-expected-by-the-server-000";
/** Environment variables this file sets; restored after each test. */
const TOUCHED_VARIABLES = [
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
] as const;

let workDir: string;
let dataDir: string;
let db: string;
let savedEnv: Record<string, string | undefined>;
const servers: FakeModelServer[] = [];
/** Everything the CLI printed, through its io and around it (console, process streams). */
let captured: string[];

beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "clade-security-"));
  // The config file holds a key by design; it lives outside the directory that is searched.
  dataDir = join(workDir, "data");
  mkdirSync(dataDir);
  db = join(dataDir, "clade.db");
  captured = [];
  savedEnv = Object.fromEntries(TOUCHED_VARIABLES.map((name) => [name, process.env[name]]));
  for (const name of TOUCHED_VARIABLES) delete process.env[name];
  process.env.OPENAI_API_KEY = ENV_KEY;
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      captured.push(args.map(String).join(" "));
    });
  }
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, "write").mockImplementation(((chunk: unknown, ...rest: never[]) => {
      captured.push(String(chunk));
      return write(chunk as string, ...rest);
    }) as typeof stream.write);
  }
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(servers.splice(0).map((server) => server.close()));
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function cli(...argv: string[]) {
  const { code, stdout, stderr } = await runCli(...argv);
  captured.push(stdout, stderr);
  return { code, stdout, stderr };
}

async function server(rule: FakeRule, apiKey?: string): Promise<FakeModelServer> {
  const started = await startFakeModelServer({ rule, ...(apiKey ? { apiKey } : {}) });
  servers.push(started);
  return started;
}

const compatSpec = (s: FakeModelServer) => `openai-compatible:${s.openaiBaseUrl}#fake-model`;

const header = (request: FakeRequest, name: string) => {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(",") : (value ?? "");
};

/** A valid move in the maze for either agent and either wire. */
function moveUp(request: FakeRequest): FakeReply {
  const tools = (request.body as { tools?: unknown[] }).tools;
  return tools?.length
    ? { content: "", toolCalls: [{ name: "act", arguments: { action: "move up" } }] }
    : { content: "Thought:\nUp it is.\n\nAction:\nmove up" };
}

/** A valid move whose completion quotes the key the request carried, everywhere it can. */
function moveUpQuotingKey(request: FakeRequest): FakeReply {
  const tools = (request.body as { tools?: unknown[] }).tools;
  return tools?.length
    ? {
        content: `Using key ${API_KEY_PLACEHOLDER} to move.`,
        toolCalls: [{ name: "act", arguments: { action: "move up", key: API_KEY_PLACEHOLDER } }],
        model: `fake-model-${API_KEY_PLACEHOLDER}`,
        echoKey: true,
      }
    : {
        content: `Thought:\nMy key is ${API_KEY_PLACEHOLDER}; up it is.\n\nAction:\nmove up`,
        echoKey: true,
      };
}

/** A provider that quotes the credentials it got, as real ones do for a wrong key. */
function echoingRejection(request: FakeRequest): FakeReply {
  const given = `${header(request, "authorization")} ${header(request, "x-api-key")}`.trim();
  return {
    fault: "bad_request",
    status: 401,
    message:
      `Incorrect API key provided: ${given}. Your key: ${given.replace(/^Bearer /, "")}; ` +
      `api_key=${given.replace(/^Bearer /, "")}. You can find your API key in your account.`,
  };
}

/** Every file under a directory, recursively. */
function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(directory, entry.name)) : [join(directory, entry.name)],
  );
}

function expectNoSecrets(where: string, bytes: Buffer): void {
  for (const needle of NEEDLES) {
    const at = bytes.indexOf(needle);
    const context = at < 0 ? "" : bytes.subarray(Math.max(0, at - 80), at + 80).toString("latin1");
    expect(at, `${needle} found in ${where}: ...${context}...`).toBe(-1);
  }
}

interface Evaluation {
  run: string;
  agent: "react" | "tools";
  model: string;
  /** Environment variables set for this evaluation only (e.g. a provider base URL). */
  env?: Record<string, string>;
  /** Whether the provider fails every call (the episodes are errors). */
  fails: boolean;
  /** More `clade eval` options for this evaluation. */
  args?: string[];
}

describe("API keys never reach the store, the logs or the exports", () => {
  it("searches every byte written for the environment key and the config-file key", async () => {
    const healthy = await server(moveUp);
    const broken = await server(() => ({ fault: "server_error" }));
    const echoing = await server(echoingRejection);
    const guarded = await server(moveUp, SERVER_KEY);
    const quoting = await server(moveUpQuotingKey);
    const configPath = join(workDir, "clade.config.json");
    const entry = (s: FakeModelServer, extra: Record<string, unknown> = {}) => ({
      model: compatSpec(s),
      maxRetries: 1,
      ...extra,
    });
    writeFileSync(
      configPath,
      JSON.stringify({
        models: {
          confHealthy: entry(healthy, { apiKey: CONFIG_KEY }),
          confAnthropic: { model: "anthropic:claude-haiku-4-5", apiKey: CONFIG_KEY, maxRetries: 0 },
          envBroken: entry(broken),
          confBroken: entry(broken, { apiKey: CONFIG_KEY }),
          envEchoing: entry(echoing),
          confEchoing: entry(echoing, { apiKey: CONFIG_KEY }),
          plainEchoing: entry(echoing, { apiKey: PLAIN_KEY }),
          envGuarded: entry(guarded),
          confGuarded: entry(guarded, { apiKey: CONFIG_KEY }),
          envQuoting: entry(quoting),
          confQuoting: entry(quoting, { apiKey: CONFIG_KEY }),
          plainQuoting: entry(quoting, { apiKey: PLAIN_KEY }),
          confQuotingStreamed: entry(quoting, { apiKey: CONFIG_KEY, stream: true }),
        },
      }),
    );

    const NO_CACHE = ["--cache", "off"];
    const evaluations: Evaluation[] = [
      { run: "env-ok", agent: "react", model: compatSpec(healthy), fails: false },
      {
        run: "env-openai-ok",
        agent: "tools",
        model: "openai:gpt-4o-mini",
        env: { OPENAI_BASE_URL: healthy.openaiBaseUrl },
        fails: false,
      },
      { run: "conf-ok", agent: "tools", model: "confHealthy", fails: false },
      {
        run: "conf-anthropic-ok",
        agent: "react",
        model: "confAnthropic",
        env: { ANTHROPIC_BASE_URL: healthy.anthropicBaseUrl },
        fails: false,
      },
      {
        run: "conf-anthropic-echo",
        agent: "tools",
        model: "confAnthropic",
        env: { ANTHROPIC_BASE_URL: echoing.anthropicBaseUrl },
        fails: true,
      },
      {
        run: "env-openai-echo",
        agent: "react",
        model: "openai:gpt-4o-mini",
        env: { OPENAI_BASE_URL: echoing.openaiBaseUrl },
        fails: true,
      },
      { run: "env-500", agent: "react", model: "envBroken", fails: true },
      { run: "conf-500", agent: "tools", model: "confBroken", fails: true },
      { run: "env-echo", agent: "react", model: "envEchoing", fails: true },
      { run: "conf-echo", agent: "tools", model: "confEchoing", fails: true },
      { run: "plain-echo", agent: "react", model: "plainEchoing", fails: true },
      { run: "env-401", agent: "react", model: "envGuarded", fails: true },
      { run: "conf-401", agent: "tools", model: "confGuarded", fails: true },
      // Healthy servers that quote the key in their completions: the runs succeed, keyless.
      { run: "env-quote", agent: "react", model: "envQuoting", fails: false },
      { run: "conf-quote", agent: "tools", model: "confQuoting", fails: false },
      // The same requests as above: the cache would answer them, so it is off.
      { run: "plain-quote", agent: "react", model: "plainQuoting", fails: false, args: NO_CACHE },
      {
        run: "conf-quote-stream",
        agent: "tools",
        model: "confQuotingStreamed",
        fails: false,
        args: NO_CACHE,
      },
      {
        run: "conf-anthropic-quote",
        agent: "tools",
        model: "confAnthropic",
        env: { ANTHROPIC_BASE_URL: quoting.anthropicBaseUrl },
        fails: false,
      },
    ];

    // A read transaction held open from the first run on pins SQLite's write-ahead log: what
    // later runs write stays in the -wal file for the search below instead of being reset.
    let pin: Database.Database | undefined;
    for (const evaluation of evaluations) {
      for (const [name, value] of Object.entries(evaluation.env ?? {})) process.env[name] = value;
      const json = evaluation.run.endsWith("ok") ? [] : ["--json"];
      const result = await cli(
        "eval",
        "--env",
        "maze",
        "--agent",
        evaluation.agent,
        "--model",
        evaluation.model,
        "--config",
        configPath,
        "--tasks",
        "0-1",
        "--samples",
        "2",
        "--max-turns",
        "2",
        "--run-id",
        evaluation.run,
        "--db",
        db,
        ...json,
        ...(evaluation.args ?? []),
      );
      for (const name of Object.keys(evaluation.env ?? {})) delete process.env[name];
      // Exit 5: every episode errored (they are meant to), 0: every episode finished.
      expect(result.code, `${evaluation.run}: ${result.stderr}`).toBe(evaluation.fails ? 5 : 0);
      if (pin === undefined) {
        pin = new Database(db);
        pin.exec("BEGIN");
        pin.prepare("SELECT COUNT(*) FROM runs").get();
      }
    }

    // Every server was really called with the keys: a key never used would prove nothing.
    // (Which header carries it is the SDK's business: x-api-key or Authorization: Bearer.)
    const sent = (s: FakeModelServer) =>
      new Set(
        s.requests.map((r) => {
          const key = header(r, "x-api-key") || header(r, "authorization").replace(/^Bearer /, "");
          return `${r.path} ${key}`;
        }),
      );
    const OPENAI = "/v1/chat/completions";
    const ANTHROPIC = "/v1/messages";
    expect(sent(healthy)).toEqual(
      new Set([`${OPENAI} ${ENV_KEY}`, `${OPENAI} ${CONFIG_KEY}`, `${ANTHROPIC} ${CONFIG_KEY}`]),
    );
    expect(sent(echoing)).toEqual(new Set([...sent(healthy), `${OPENAI} ${PLAIN_KEY}`]));
    expect(sent(broken)).toEqual(new Set([`${OPENAI} ${ENV_KEY}`, `${OPENAI} ${CONFIG_KEY}`]));
    expect(sent(guarded)).toEqual(sent(broken));
    expect(guarded.requests.every((r) => r.problem?.includes("Invalid API key"))).toBe(true);
    expect(sent(quoting)).toEqual(
      new Set([
        `${OPENAI} ${ENV_KEY}`,
        `${OPENAI} ${CONFIG_KEY}`,
        `${OPENAI} ${PLAIN_KEY}`,
        `${ANTHROPIC} ${CONFIG_KEY}`,
      ]),
    );
    expect(quoting.requests.some((r) => r.stream)).toBe(true);
    // The quoted key never reached the agent: its next requests carry the scrubbed reply.
    const laterBodies = quoting.requests.map((r) => JSON.stringify(r.body));
    expect(laterBodies.some((b) => b.includes("My key is ***"))).toBe(true);
    expect(laterBodies.some((b) => b.includes("Using key ***"))).toBe(true);
    for (const body of laterBodies) expectNoSecrets("a request the agent sent", Buffer.from(body));
    // The echoing provider really sent both keys back to the client in its error bodies.
    const echoed = echoing.requests.map((r) => (r.reply as { message?: string }).message ?? "");
    expect(echoed.some((m) => m.includes(ENV_KEY))).toBe(true);
    expect(echoed.some((m) => m.includes(CONFIG_KEY))).toBe(true);
    expect(echoed.some((m) => m.includes(PLAIN_KEY))).toBe(true);

    // The runs went as planned: the failing ones are errors whose messages went through the
    // key-bearing error path (auth failures quoting the key, server errors after retries).
    const conn = new Database(db, { readonly: true });
    const outcomes = conn
      .prepare(
        `SELECT run_id AS run, GROUP_CONCAT(DISTINCT outcome) AS outcomes, MAX(error) AS error
         FROM episodes GROUP BY run_id`,
      )
      .all() as { run: string; outcomes: string; error: string | null }[];
    const byRun = new Map(outcomes.map((o) => [o.run, o]));
    for (const evaluation of evaluations) {
      const row = byRun.get(evaluation.run);
      if (evaluation.fails) {
        expect(row?.outcomes, evaluation.run).toBe("error");
      } else {
        expect(row?.outcomes.split(",").every((o) => o === "success" || o === "failure")).toBe(
          true,
        );
      }
    }
    expect(byRun.get("env-echo")?.error).toMatch(/401|authentication/i);
    expect(byRun.get("env-echo")?.error).toContain("***");
    expect(byRun.get("conf-anthropic-echo")?.error).toMatch(/401|authentication/i);
    expect(byRun.get("env-500")?.error).toMatch(/gave up after 2 attempts/);
    // The quoting runs stored the replies, scrubbed: trajectories, responses, the cache.
    const scrubbed = (sql: string) =>
      (conn.prepare(sql).all() as { text: string }[]).map((row) => row.text).join("\n");
    const steps = scrubbed(
      `SELECT t.steps AS text FROM trajectories t JOIN episodes e ON e.id = t.episode_id
       WHERE e.run_id IN ('env-quote', 'plain-quote')`,
    );
    expect(steps).toContain("My key is ***; up it is.");
    const responses = scrubbed(
      `SELECT c.response AS text FROM model_calls c JOIN episodes e ON e.id = c.episode_id
       WHERE e.run_id IN ('conf-quote', 'conf-quote-stream', 'conf-anthropic-quote')`,
    );
    expect(responses).toContain("Using key *** to move.");
    expect(responses).toContain("fake-model-***");
    expect(responses).toContain('\\"key\\":\\"***\\"');
    expect(scrubbed("SELECT response AS text FROM model_cache")).toContain("My key is ***");
    const failedCalls = conn
      .prepare("SELECT COUNT(*) AS n FROM model_calls WHERE error IS NOT NULL")
      .get() as { n: number };
    expect(failedCalls.n).toBe(evaluations.filter((e) => e.fails).length * 4);
    conn.close();

    // Everything a user can get out of the store, to files and to the terminal.
    for (const { run } of evaluations) {
      for (const format of ["agenttraj", "chat"]) {
        const out = join(dataDir, `${run}.${format}.json`);
        const exported = await cli("export", run, "--format", format, "--db", db, "--out", out);
        expect(exported.code).toBe(0);
        expect(existsSync(out)).toBe(true);
      }
      for (const args of [["--json", "--episodes"], ["--episodes"]]) {
        expect((await cli("show", run, "--db", db, ...args)).code).toBe(0);
      }
      expect((await cli("cost", run, "--db", db, "--json")).code).toBe(0);
      expect((await cli("cost", run, "--db", db)).code).toBe(0);
    }
    expect((await cli("runs", "--db", db, "--json")).code).toBe(0);
    expect((await cli("runs", "--db", db)).code).toBe(0);
    expect((await cli("models", "--config", configPath, "--json")).code).toBe(0);
    expect((await cli("models", "--config", configPath)).code).toBe(0);

    // The search: captured output, then every file the CLI wrote (the WAL still open).
    const files = filesUnder(dataDir);
    expect(files).toContain(`${db}-wal`);
    expect(statSync(`${db}-wal`).size).toBeGreaterThan(0);
    // The log holds the failed runs' (redacted) provider errors: searching it means something.
    expect(readFileSync(`${db}-wal`).includes("Incorrect API key provided")).toBe(true);
    expect(files.filter((f) => f.endsWith(".json"))).toHaveLength(evaluations.length * 2);
    const searched: string[] = [];
    for (const file of files) {
      expectNoSecrets(file, readFileSync(file));
      searched.push(file);
    }
    pin?.exec("COMMIT");
    pin?.close();
    for (const file of filesUnder(dataDir)) expectNoSecrets(`${file} (closed)`, readFileSync(file));
    const output = captured.join("\n");
    expect(output.length).toBeGreaterThan(10_000);
    expectNoSecrets("CLI output", Buffer.from(output));
    // The search itself works: the config file does hold a key.
    expect(() => expectNoSecrets(configPath, readFileSync(configPath))).toThrow();
    expect(searched.length).toBeGreaterThanOrEqual(evaluations.length * 2 + 2);
  });

  it("a password in the base URL stays out of the store and the output too", async () => {
    const urlSecret = "SECRET-url-9e1b4d";
    const healthy = await server(moveUp);
    const withCredentials = healthy.openaiBaseUrl.replace("//", `//user:${urlSecret}@`);
    const result = await cli(
      "eval",
      "--env",
      "maze",
      "--agent",
      "react",
      "--model",
      `openai-compatible:${withCredentials}#fake-model`,
      "--tasks",
      "0",
      "--max-turns",
      "1",
      "--run-id",
      "url",
      "--db",
      db,
      "--json",
    );
    expect(result.code).toBe(0);
    // The call went through (the SDK does not send URL credentials; they are simply unused).
    expect(healthy.requests.length).toBeGreaterThan(0);
    expect(JSON.parse(result.stdout).metrics.errors).toBe(0);
    await cli("show", "url", "--db", db, "--json", "--episodes");
    await cli("runs", "--db", db, "--json");
    await cli("export", "url", "--format", "chat", "--db", db, "--out", join(dataDir, "u.jsonl"));
    for (const file of filesUnder(dataDir)) {
      expect(readFileSync(file).indexOf(urlSecret), file).toBe(-1);
    }
    expect(captured.join("\n")).not.toContain(urlSecret);
  });
});

/** A coding agent whose solution snoops for the parent's secrets before solving task 0. */
const SNOOPING_CODING_AGENT_JS = `const SNOOP = [
  'import fs from "node:fs";',
  'const read = (p) => { try { return fs.readFileSync(p, "latin1"); } catch (e) { return e.code; } };',
  'console.log("ENV " + JSON.stringify(process.env));',
  'console.log("PID1 " + read("/proc/1/environ"));',
  'console.log("PARENT " + read("/proc/" + process.ppid + "/environ"));',
  'export function reverseWords(t) { return t.split(/\\\\s+/).filter(Boolean).reverse().join(" "); }',
  "",
].join("\\n");
export default {
  name: "snoop",
  create: () => {
    let turn = 0;
    return {
      act: async () => {
        turn++;
        if (turn === 1) return { action: "write reverse-words.js\\n" + SNOOP };
        return { action: turn === 2 ? "run tests" : "submit" };
      },
    };
  },
};
`;

describe("coding: agent code never sees the keys", () => {
  it("code under test finds no key in its environment or /proc, and none is stored", async () => {
    const agent = join(workDir, "snoop.js");
    writeFileSync(agent, SNOOPING_CODING_AGENT_JS);
    const result = await cli(
      "eval",
      "--env",
      "coding",
      "--agent",
      agent,
      "--tasks",
      "0",
      "--max-turns",
      "5",
      "--run-id",
      "snoop",
      "--db",
      db,
      "--json",
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).metrics.successRate).toBe(1);
    const conn = new Database(db, { readonly: true });
    const steps = (conn.prepare("SELECT steps FROM trajectories").all() as { steps: string }[]).map(
      (row) => row.steps,
    );
    conn.close();
    // The snooping code ran in the sandbox and saw nothing of the parent.
    const stored = steps.join("\n");
    expect(stored).toContain("ENV {}");
    expect(stored).toContain("PID1 ");
    for (const file of filesUnder(dataDir)) expectNoSecrets(file, readFileSync(file));
    expectNoSecrets("CLI output", Buffer.from(captured.join("\n")));
  });
});
