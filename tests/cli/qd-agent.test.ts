/**
 * `clade qd --agent-config` as a user with a model endpoint runs it, at a tiny scale: two tasks,
 * two seed configurations, a few generations, both model roles served by a fake OpenAI-compatible
 * server. Its rule plays the agent (an available action picked by a hash of the system prompt and
 * the observation, so configurations differ in score) and the mutator (one fenced ```prompt block
 * computed from the request). The run fills the archives, uses the rewrite and writes the
 * finalists; `clade archive` reads it; the same command resumes a cut log to the uninterrupted
 * run's archives; a seed the provider refuses is dropped and counted; bad input is one line and
 * writes nothing.
 */
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import {
  type FakeModelServer,
  type FakeReply,
  type FakeRequest,
  startFakeModelServer,
} from "../../src/testing/index.js";
import { runCli } from "../fixtures/cli.js";

interface WireMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
}
interface WireBody {
  model: string;
  messages: WireMessage[];
  tools?: { function: { parameters: { properties: { action: { enum?: string[] } } } } }[];
}

const text = (message: WireMessage | undefined): string =>
  typeof message?.content === "string"
    ? message.content
    : (message?.content ?? []).map((part) => part.text ?? "").join("");

/** FNV-1a: a stable hash of the request's text. */
function hash(value: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Marks a configuration whose every request the provider refuses. */
const BROKEN = "BROKEN-PROVIDER";

/** What the mutator's rewrite says, and what makes the fake agent play well. */
const ADVICE = "act toward the goal";

/**
 * An available action: with the rewrite's advice in the system prompt, one that names an object
 * of the goal ("Goal: go to the red box." → "go to red box") when there is one; otherwise one
 * picked by a hash of the system prompt and the observation.
 */
function chooseAction(system: string, observation: string, listed: readonly string[]): string {
  const goal = /Goal: (.*)\./.exec(observation)?.[1] ?? "";
  if (system.includes(ADVICE) && goal !== "") {
    const object = (action: string) => action.replace(/^(go to|pick up|open|toggle|drop) /, "");
    const aimed = listed.find((a) => a !== object(a) && goal.includes(object(a)));
    if (aimed) return aimed;
  }
  return listed[hash(`${system}\n${observation}`) % Math.max(1, listed.length)] ?? "look";
}

/** The agent's model and the mutator, answering from the request alone (deterministic). */
function rule(request: FakeRequest): FakeReply {
  const body = request.body as WireBody;
  const system = text(body.messages[0]);
  const last = text(body.messages.at(-1));
  if (body.model === "mutator") {
    const h = hash(last).toString(16);
    return { content: `Here it is.\n\n\`\`\`prompt\nRewritten ${h}: ${ADVICE}.\n\`\`\`` };
  }
  if (system.includes(BROKEN)) {
    return { fault: "bad_request", status: 400, message: "this configuration is refused" };
  }
  const listed =
    body.tools?.[0]?.function.parameters.properties.action.enum ??
    [...last.matchAll(/^- (.+)$/gm)].map((m) => m[1] as string);
  const action = chooseAction(system, last, listed);
  if (body.tools) return { toolCalls: [{ name: "act", arguments: { action } }] };
  return { content: `Thought:\nOne step.\n\nAction:\n${action}` };
}

let dir: string;
let server: FakeModelServer;
const model = (name: string) => `openai-compatible:${server.openaiBaseUrl}#${name}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "clade-qd-agent-"));
  server = await startFakeModelServer({ rule });
  const write = (name: string, value: unknown) =>
    writeFileSync(join(dir, name), JSON.stringify(value));
  write("maze.json", {
    parts: [
      { name: "role", text: "You walk mazes." },
      { name: "style", text: "Prefer moves toward the goal." },
    ],
    fewShot: [{ id: "m1", text: "Action: move up" }],
    params: { temperature: 0.2, maxTokens: 200 },
  });
  write("grid.json", {
    parts: [{ name: "role", text: "You walk a grid world." }],
    params: { temperature: 0.5, maxTokens: 200 },
  });
  write("pool.json", {
    fewShot: [
      { id: "p1", text: "Action: go to red box" },
      { id: "p2", text: "Action: turn left" },
    ],
    tools: ["move", "turn", "go"],
  });
  write("broken.json", { parts: [{ name: "role", text: `You are ${BROKEN}.` }] });
  write("bad.json", { parts: [{ name: "role", text: "x" }], params: { temperature: 5 } });
  write("badpool.json", { fewShot: [{ id: "has space", text: "x" }] });
});

afterAll(async () => {
  await server.close();
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
});

const GENERATIONS = 8;
const TASKS = "maze:100-109,gridworld:100-109";
const qdArgs = (runId: string, db: string, extra: string[] = []) => [
  ...["qd", "--tasks", TASKS, "--generations", String(GENERATIONS)],
  ...["--agent-config", `maze=${join(dir, "maze.json")}`],
  ...["--agent-config", `gridworld=${join(dir, "grid.json")}`],
  ...["--model", model("agent"), "--mutator-model", model("mutator")],
  ...["--pool", join(dir, "pool.json"), "--search-tasks", "3", "--test-tasks", "3"],
  ...["--max-turns", "4", "--seed", "1", "--run-id", runId, "--db", db],
  ...["--dir", join(dir, "runs", runId), ...extra],
];

interface Summary {
  schema: string;
  generations: number;
  resumed: boolean;
  errored: number;
  archives: { task: string; elites: number; objMax: number | null }[];
  mutations: { applied: Record<string, number>; rewrites: { succeeded: number; failed: number } };
  finalists: {
    bestMean: { id: string; scores: number[]; file: string };
    perTask: { task: string; id: string; file: string }[];
  };
  test: { name: string; mean: number; perTask: { task: string; rate: number; tasks: number }[] }[];
  costUsd: number | null;
}

interface ArchiveJson {
  generation: number;
  archives: { label: string; cells: { id: string; scores: number[] }[] }[];
}

async function archiveJson(db: string, runId: string): Promise<ArchiveJson> {
  const result = await runCli("archive", runId, "--db", db, "--json");
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ArchiveJson;
}

describe("clade qd --agent-config", () => {
  let db: string;
  let summary: Summary;
  let mutatorRequests: number;

  beforeAll(async () => {
    db = join(dir, "a.db");
    const result = await runCli(...qdArgs("a", db), "--json");
    expect(result.code, result.stderr).toBe(0);
    summary = JSON.parse(result.stdout) as Summary;
    mutatorRequests = server.requests.filter(
      (r) => (r.body as WireBody).model === "mutator",
    ).length;
  }, 60_000);

  it("fills the archives, writes the finalists and plays them on the test tasks", () => {
    expect(summary).toMatchObject({
      schema: "clade.qd-agent/1",
      runId: "a",
      variant: "paper",
      tasks: ["maze:100-109", "gridworld:100-109"],
      model: model("agent"),
      mutatorModel: model("mutator"),
      samples: 1,
      generations: GENERATIONS,
      resumed: false,
      errored: 0,
      costUsd: null,
    });
    for (const archive of summary.archives) expect(archive.elites).toBeGreaterThanOrEqual(1);
    const runDir = join(dir, "runs", "a");
    const best = JSON.parse(readFileSync(join(runDir, "final-best-mean.json"), "utf8"));
    expect(best.parts.length).toBeGreaterThan(0);
    expect(summary.finalists.bestMean.file).toBe(join(runDir, "final-best-mean.json"));
    expect(summary.finalists.perTask.map((f) => f.file)).toEqual([
      join(runDir, "final-task-0.json"),
      join(runDir, "final-task-1.json"),
    ]);
    for (const f of summary.finalists.perTask) expect(existsSync(f.file)).toBe(true);
    expect(summary.test.map((t) => t.name)).toEqual([
      "CycleQD best-mean",
      "expert maze:100-109",
      "expert gridworld:100-109",
    ]);
    for (const row of summary.test) {
      expect(row.perTask.map((t) => t.task)).toEqual(["maze:100-109", "gridworld:100-109"]);
      expect(row.perTask.map((t) => t.tasks)).toEqual([3, 3]);
      expect(row.mean).toBeCloseTo(
        ((row.perTask[0]?.rate as number) + (row.perTask[1]?.rate as number)) / 2,
        12,
      );
    }
  });

  it("uses the mutator's rewrite: its requests, the counts and a kept elite show it", () => {
    expect(mutatorRequests).toBeGreaterThan(0);
    expect(summary.mutations.rewrites.succeeded).toBeGreaterThan(0);
    expect(summary.mutations.applied.rewrite).toBe(summary.mutations.rewrites.succeeded);
    const elites = readdirSync(join(dir, "runs", "a", "elites")).map((f) =>
      readFileSync(join(dir, "runs", "a", "elites", f), "utf8"),
    );
    expect(elites.some((e) => /Rewritten [0-9a-f]+: act toward the goal/.test(e))).toBe(true);
    // The advice pays on gridworld: the best elite there scores above the seeds.
    const gridBest = summary.archives[1]?.objMax as number;
    expect(gridBest).toBeGreaterThan(0.34);
  });

  it("stores the run's configuration with public specs and the seeds' hashes", () => {
    const raw = openDatabase(db);
    const row = raw.prepare("SELECT config FROM qd_runs WHERE id = 'a'").get() as {
      config: string;
    };
    raw.close();
    const config = JSON.parse(row.config);
    expect(config).toMatchObject({
      kind: "agent-config",
      model: model("agent"),
      mutatorModel: model("mutator"),
      bins: 15,
      ranges: [
        { min: 0, max: 1 },
        { min: 0, max: 1 },
      ],
    });
    expect(config.experts.map((e: { sha256: string }) => e.sha256)).toEqual([
      expect.stringMatching(/^[0-9a-f]{64}$/),
      expect.stringMatching(/^[0-9a-f]{64}$/),
    ]);
    expect(config.pool.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("clade archive draws the run; the text output shows both tables", async () => {
    const archives = await archiveJson(db, "a");
    expect(archives.generation).toBe(GENERATIONS);
    expect(archives.archives.map((a) => a.label)).toEqual(["maze:100-109", "gridworld:100-109"]);
    const text = await runCli(...qdArgs("a", db), "--quiet");
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("CycleQD a over agent configurations");
    expect(text.stdout).toContain("archive (quality)");
    expect(text.stdout).toContain("held-out test tasks");
    expect(text.stdout).toContain("expert gridworld:100-109");
    expect(text.stdout).toContain("no merge for configurations");
  }, 30_000);

  it("resumes a run cut after a generation to the archives of the uninterrupted run", async () => {
    const cut = join(dir, "cut.db");
    copyFileSync(db, cut);
    const raw = openDatabase(cut);
    raw.prepare("DELETE FROM qd_generations WHERE run_id = 'a' AND generation > 3").run();
    raw.prepare("UPDATE qd_runs SET status = 'running' WHERE id = 'a'").run();
    raw.close();
    const resumed = await runCli(...qdArgs("a", cut), "--json");
    expect(resumed.code, resumed.stderr).toBe(0);
    const again = JSON.parse(resumed.stdout) as Summary;
    expect(again).toMatchObject({ resumed: true, generations: GENERATIONS });
    expect(again.finalists).toEqual(summary.finalists);
    expect((await archiveJson(cut, "a")).archives).toEqual((await archiveJson(db, "a")).archives);
  }, 60_000);

  it("drops and counts a seed the provider refuses, never scoring it", async () => {
    const brokenDb = join(dir, "broken.db");
    const result = await runCli(
      ...["qd", "--tasks", TASKS, "--generations", "2", "--search-tasks", "2"],
      ...["--agent-config", `maze=${join(dir, "maze.json")}`],
      ...["--agent-config", `gridworld=${join(dir, "broken.json")}`],
      ...["--model", model("agent"), "--max-turns", "3", "--test-tasks", "0"],
      ...["--run-id", "b", "--db", brokenDb, "--dir", join(dir, "runs", "b"), "--json"],
    );
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as Summary;
    expect(out.errored).toBeGreaterThanOrEqual(1);
    expect(out.test).toEqual([]);
    // Without a mutator the rewrite never applies.
    expect(out.mutations.applied.rewrite).toBe(0);
    const archives = await archiveJson(brokenDb, "b");
    const ids = new Set(archives.archives.flatMap((a) => a.cells.map((c) => c.id)));
    const broken = readdirSync(join(dir, "runs", "b", "elites")).filter((f) =>
      readFileSync(join(dir, "runs", "b", "elites", f), "utf8").includes(BROKEN),
    );
    expect(broken).toEqual([]);
    expect(ids.size).toBeGreaterThanOrEqual(1);

    const none = await runCli(
      ...["qd", "--tasks", TASKS, "--generations", "2", "--search-tasks", "1"],
      ...["--agent-config", `maze=${join(dir, "broken.json")}`, "--model", model("agent")],
      ...["--max-turns", "2", "--run-id", "c", "--db", brokenDb, "--dir", join(dir, "runs", "c")],
    );
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split("\n")).toHaveLength(1);
    expect(none.stderr).toMatch(/no seed configuration could be evaluated.*refused/);
  }, 30_000);

  it("says in one line what is wrong with bad input, writing nothing", async () => {
    const fresh = join(dir, "never.db");
    const maze = `maze=${join(dir, "maze.json")}`;
    const m = ["--model", model("agent")];
    const cases: [string[], RegExp][] = [
      [["--agent-config", maze], /--agent-config needs --model/],
      [
        ["--agent-config", maze, ...m, "--base", "b.safetensors", "--batch", "2"],
        /--base, --batch apply to embedded policies only/,
      ],
      [[...m, "--pool", "p.json"], /--model, --pool apply to LLM agent configurations only/],
      [
        ["--agent-config", `maze=${join(dir, "bad.json")}`, ...m],
        /bad\.json: params\.temperature: /,
      ],
      [["--agent-config", `maze=${join(dir, "none.json")}`, ...m], /none\.json: cannot read/],
      [
        ["--agent-config", maze, ...m, "--pool", join(dir, "badpool.json")],
        /badpool\.json: fewShot\.0\.id: /,
      ],
      [
        ["--agent-config", `textcraft=${join(dir, "maze.json")}`, ...m],
        /"textcraft" is not one of --tasks/,
      ],
      [["--agent-config", "maze", ...m], /--agent-config "maze": use TASK=FILE/],
      [["--agent-config", maze, "--model", "nope"], /unknown model "nope"/],
      [["--agent-config", maze, ...m, "--samples", "0"], /--samples must be at least 1/],
      [["--agent-config", maze, ...m, "--ranges", "0:1"], /1 range\(s\) for 2 tasks/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli("qd", "--tasks", TASKS, ...args, "--run-id", "x", "--db", fresh);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(result.stderr, args.join(" ")).toMatch(message);
    }
    expect(existsSync(fresh)).toBe(false);
  });
});
