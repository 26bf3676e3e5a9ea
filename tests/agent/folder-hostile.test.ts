/**
 * Hostile agent folders: each attack is an agent whose act() performs it, run as an episode in
 * the sandbox (one sandbox per episode, driven over the channel), with small limits so that each
 * ends in a few seconds. Per attack, the concrete defence is asserted: what the agent could read
 * (it reports it in its reply's message) holds no secret; a connection to a port this test
 * listens on never arrives; a fork bomb, an infinite loop, a 4 GB allocation and a file past the
 * size limit end the episode as an `error` (never a `failure`) whose reason names the limit that
 * stopped it, or is the agent's own error when the kernel refused; a write outside the workspace
 * fails and the host file is not created; a signal aimed at the parent reaches nothing outside
 * the sandbox. At the end, this process is alive and no process of any sandbox is left.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { getPriority, networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_MANIFEST } from "../../src/agent/folder/files.js";
import { folderAgentFactory } from "../../src/agent/folder/sandboxed-agent.js";
import type { EnvDefinition } from "../../src/env/types.js";
import { runEpisode } from "../../src/rollout/episode.js";
import type { SandboxLimits } from "../../src/sandbox/index.js";
import { hostProcesses, leftoverSandboxProcesses } from "../fixtures/sandbox-processes.js";

/** One turn: any action ends it, as a failure (reward 0) unless the episode errs. */
const oneTurnEnv: EnvDefinition = {
  info: {
    name: "one-turn",
    version: "1",
    description: "one turn, nothing to win",
    instruction: "Do as you please.",
    splits: { train: { start: 0, end: 1 }, test: { start: 1, end: 2 } },
    successThreshold: 1,
    maxSteps: 1,
  },
  create() {
    return {
      info: oneTurnEnv.info,
      async reset() {
        return { text: "Your turn.", availableActions: ["pass"] };
      },
      async step(action) {
        return {
          observation: { text: `You did: ${action.slice(0, 100)}` },
          reward: 0,
          done: true,
          info: {},
        };
      },
    };
  },
};

/**
 * A folder whose agent runs `body` as its act(). The folder is never type-checked (tsx strips the
 * types), so the Node globals are declared loosely.
 */
function folder(body: string): Map<string, string> {
  return new Map([
    [
      AGENT_MANIFEST,
      JSON.stringify({ format: "clade.agent/1", name: "hostile-agent", entry: "src/agent.ts" }),
    ],
    [
      "src/agent.ts",
      `import type { AgentModule, AgentState } from "clade-agent";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
declare const process: any;
declare const Buffer: any;
const attempt = (f: () => unknown) => { try { f(); return "allowed"; } catch (e: any) { return e.code ?? String(e); } };
const read = (p: string) => { try { return "READ " + fs.readFileSync(p, "latin1"); } catch (e: any) { return e.code; } };
const list = (p: string) => { try { return "LISTED " + fs.readdirSync(p).join(","); } catch (e: any) { return e.code; } };
const agent: AgentModule = {
  name: "hostile-agent",
  create() {
    return {
      async act(state: AgentState, signal: AbortSignal) {
        ${body}
      },
    };
  },
};
export default agent;
`,
    ],
  ]);
}

/** Runs one episode of `body` with these sandbox limits; `timeoutMs` is the episode's own. */
async function episode(body: string, limits: Partial<SandboxLimits> = {}, timeoutMs = 30_000) {
  const factory = folderAgentFactory({
    files: folder(body),
    mode: "bwrap",
    limits: { wallMs: 20_000, ...limits },
  });
  const context = { env: oneTurnEnv.info, taskIndex: 0, seed: 0, sampleIndex: 0 };
  const started = performance.now();
  const record = await runEpisode({
    env: oneTurnEnv.create(),
    agent: factory.create(context),
    context,
    limits: { maxTurns: 1, timeoutMs },
  });
  return { record, ms: performance.now() - started, seen: parseMessage(record.steps[0]?.message) };
}

function parseMessage(message: string | undefined): Record<string, unknown> {
  try {
    return JSON.parse(message ?? "{}") as Record<string, unknown>;
  } catch {
    return {};
  }
}

const MiB = 1024 * 1024;
const _isRoot = process.getuid?.() === 0;
const scratch = mkdtempSync(join(tmpdir(), "clade-folder-hostile-"));
/** Marks the command lines of processes an attack starts, to find them from outside. */
const MARKER = `clade-folder-hostile-${process.pid}`;
let ownPriority: number;

const leftovers = () => leftoverSandboxProcesses((cmdline) => cmdline.includes(MARKER));

/** Processes with the attack's marker on their command line. */
function markedProcesses(): number {
  return [...hostProcesses().values()].filter((p) => p.state !== "Z" && p.cmdline.includes(MARKER))
    .length;
}

beforeAll(() => {
  ownPriority = getPriority();
});

afterAll(async () => {
  // Killed sandboxes are reaped within moments; give a slow machine a second before judging.
  let left = leftovers();
  for (let i = 0; i < 20 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = leftovers();
  }
  rmSync(scratch, { recursive: true, force: true });
  expect(left.map((p) => `${p.pid} (uid ${p.uid}): ${p.cmdline}`)).toEqual([]);
  // This process and its parent (vitest) are alive, at their priority.
  expect(() => process.kill(process.ppid, 0)).not.toThrow();
  expect(getPriority()).toBe(ownPriority);
});

describe("hostile agent folders: secrets of the host", () => {
  it("cannot read ~/.ssh, /etc/shadow, the parent's environment or /proc/1/environ", async () => {
    const home = join(scratch, "home");
    mkdirSync(join(home, ".ssh"), { recursive: true });
    const keyCanary = `-----BEGIN OPENSSH PRIVATE KEY----- canary-${Date.now()}`;
    writeFileSync(join(home, ".ssh", "id_ed25519"), keyCanary, { mode: 0o600 });
    const secretName = "CLADE_TEST_HOSTILE_FOLDER_API_KEY";
    const secretCanary = `sk-canary-hostile-folder-${Date.now()}-0123456789abcdef`;
    // Not named like a secret: nothing on the way would scrub it, so only isolation keeps it.
    const plainName = "CLADE_TEST_HOSTILE_FOLDER_PLAIN";
    const plainCanary = `plain-canary-${Date.now()}`;
    const savedHome = process.env.HOME;
    process.env[secretName] = secretCanary;
    process.env[plainName] = plainCanary;
    process.env.HOME = home;
    try {
      const { record, seen } = await episode(`
        const out = {
          env: process.env,
          home: process.env.HOME ?? null,
          homedir: attempt(() => os.homedir()),
          hostKey: read(${JSON.stringify(join(home, ".ssh", "id_ed25519"))}),
          rootKey: read("/root/.ssh/id_ed25519"),
          root: list("/root"),
          homes: list("/home"),
          shadow: read("/etc/shadow"),
          etc: list("/etc"),
          ownEnviron: read("/proc/self/environ"),
          initEnviron: read("/proc/1/environ"),
          ppid: process.ppid,
          parentEnviron: read("/proc/" + process.ppid + "/environ"),
          hostEnviron: read("/proc/${process.pid}/environ"),
          hostParentEnviron: read("/proc/${process.ppid}/environ"),
        };
        return { action: "pass", message: JSON.stringify(out) };
      `);
      expect(record.error).toBeUndefined();
      expect(record.outcome).toBe("failure");
      expect(seen).toEqual({
        env: { NODE_ENV: "production" },
        home: null,
        homedir: "ERR_SYSTEM_ERROR", // no HOME, no /etc/passwd: os.homedir() has nothing to say
        hostKey: "ENOENT",
        rootKey: "ENOENT",
        root: "ENOENT",
        homes: "ENOENT",
        shadow: "ENOENT",
        etc: "ENOENT",
        ownEnviron: "READ NODE_ENV=production\0",
        initEnviron: "READ ", // the sandbox's init (bwrap), started with an empty environment
        ppid: 1,
        parentEnviron: "READ ",
        hostEnviron: "ENOENT", // host pids are not in the sandbox's PID namespace
        hostParentEnviron: "ENOENT",
      });
      const everything = JSON.stringify(record);
      for (const canary of [keyCanary, secretCanary, plainCanary, "canary-"]) {
        expect(everything).not.toContain(canary);
      }
    } finally {
      delete process.env[secretName];
      delete process.env[plainName];
      if (savedHome === undefined) delete process.env.HOME;
      else process.env.HOME = savedHome;
    }
  }, 30_000);
});

describe("hostile agent folders: the network", () => {
  let server: Server | undefined;
  afterAll(() => {
    server?.close();
  });

  it("cannot connect to a loopback port the test listens on (nor the host's other addresses)", async () => {
    let arrived = 0;
    server = createServer((socket) => {
      arrived++;
      socket.end("reached");
    });
    const listening = server;
    await new Promise<void>((resolve) => listening.listen(0, "0.0.0.0", resolve));
    const port = (listening.address() as { port: number }).port;
    const hosts = [
      "127.0.0.1",
      ...Object.values(networkInterfaces())
        .flat()
        .filter((a) => a !== undefined && a.family === "IPv4" && !a.internal)
        .map((a) => a?.address as string),
    ];
    const { record, seen } = await episode(`
      const out: Record<string, string> = {};
      for (const host of ${JSON.stringify(hosts)}) {
        out[host] = await new Promise<string>((resolve) => {
          const socket = net.connect(${port}, host);
          socket.setTimeout(2000, () => { socket.destroy(); resolve("timeout"); });
          socket.on("data", () => resolve("REACHED"));
          socket.on("connect", () => resolve("CONNECTED"));
          socket.on("error", (e: any) => resolve(e.code));
        });
      }
      return { action: "pass", message: JSON.stringify(out) };
    `);
    expect(record.error).toBeUndefined();
    // The sandbox's own loopback, where nothing listens; no route to any other address.
    expect(seen["127.0.0.1"]).toBe("ECONNREFUSED");
    for (const host of hosts.slice(1)) expect(seen[host], host).toBe("ENETUNREACH");
    expect(arrived).toBe(0);
  }, 30_000);
});

describe("hostile agent folders: resources", () => {
  it("a fork bomb stays under the process limit, and dies with the sandbox", async () => {
    // The classic shell bomb, started again every 5 ms (alone, it burns out in milliseconds: a
    // shell whose fork fails gives up). The agent watches it from inside for a second, then
    // fails with what it saw, the bomb still going: the end of the episode must take it down.
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, markedProcesses());
    }, 20);
    const bomb = `let refused = 0;
      setInterval(() => {
        const child = spawn("/bin/sh", ["-c", "b() { b | b & }; b", ${JSON.stringify(MARKER)}], { stdio: ["ignore", "ignore", "pipe"] });
        child.on("error", () => { refused++; });
        child.stderr?.on("data", (d: any) => { refused += String(d).split("Cannot fork").length - 1; });
      }, 5);`;
    let watched: Awaited<ReturnType<typeof episode>>;
    let waiting: Awaited<ReturnType<typeof episode>>;
    try {
      watched = await episode(
        `${bomb}
         let processes = 0, tasks = 0;
         for (const until = Date.now() + 1000; Date.now() < until; ) {
           await new Promise((r) => setTimeout(r, 10));
           const pids = fs.readdirSync("/proc").filter((p: string) => /^\\d+$/.test(p));
           let count = 0;
           for (const pid of pids) { try { count += fs.readdirSync("/proc/" + pid + "/task").length; } catch {} }
           processes = Math.max(processes, pids.length);
           tasks = Math.max(tasks, count);
         }
         throw new Error("fork bomb contained: at most " + processes + " processes, " + tasks + " tasks; " + refused + " forks refused");`,
        { processes: 32 },
      );
      // A bomb that never yields: the sandbox's wall clock ends it.
      waiting = await episode(`${bomb}\n await new Promise(() => {});`, {
        processes: 32,
        wallMs: 4000,
      });
    } finally {
      clearInterval(sampler);
    }
    expect(watched.record.outcome).toBe("error");
    expect(watched.record.endReason).toBe("agent_error");
    const seen =
      /^Error: the agent failed: Error: fork bomb contained: at most (\d+) processes, (\d+) tasks; (\d+) forks refused \| at /.exec(
        watched.record.error ?? "",
      );
    expect(seen, watched.record.error).not.toBeNull();
    const [processes, tasks, refused] = [seen?.[1], seen?.[2], seen?.[3]].map(Number);
    // RLIMIT_NPROC counts tasks (threads, the harness's own included) of the sandbox's user
    // namespace, its init (bwrap) too: the bomb filled it up to the limit, and no further.
    expect(processes).toBeGreaterThan(5);
    expect(tasks).toBeLessThanOrEqual(32);
    expect(refused).toBeGreaterThan(0);
    expect(waiting.record.outcome).toBe("error");
    expect(waiting.record.endReason).toBe("agent_error");
    expect(waiting.record.error).toMatch(
      /^Error: the agent's sandbox killed \(wall limit\) before the episode ended(: |$)/,
    );
    // Seen from the host: never more shells than the limit allows, and none left.
    expect(peak).toBeLessThan(32);
    expect(markedProcesses()).toBe(0);
  }, 60_000);

  it("a fork loop is refused by the kernel (EAGAIN) at the process limit, and its error kept", async () => {
    const { record } = await episode(
      `let n = 0;
       for (;;) {
         // A shell that waits on a sleep (not exec'ing it: its marked command line stays).
         const child = spawn("/bin/sh", ["-c", "sleep 60; true", ${JSON.stringify(MARKER)}], { stdio: "ignore" });
         const error = await new Promise<any>((resolve) => { child.on("spawn", () => resolve(null)); child.on("error", resolve); });
         if (error) throw new Error("fork refused after " + n + " processes: " + error.message);
         n++;
       }`,
      { processes: 32 },
    );
    expect(record.outcome).toBe("error");
    expect(record.endReason).toBe("agent_error");
    const match =
      /^Error: the agent failed: Error: fork refused after (\d+) processes: spawn \/bin\/sh EAGAIN \| at /.exec(
        record.error ?? "",
      );
    expect(match, record.error).not.toBeNull();
    expect(Number(match?.[1])).toBeLessThan(32);
    expect(markedProcesses()).toBe(0);
  }, 30_000);

  it("an infinite loop is killed at its CPU limit; an idle one at the wall clock", async () => {
    // CPU time, not wall time: a loaded machine makes it slower, not different.
    const busy = await episode("for (;;) {}", { cpuSeconds: 2, wallMs: 25_000 });
    expect(busy.record.outcome).toBe("error");
    expect(busy.record.endReason).toBe("agent_error");
    expect(busy.record.error).toBe(
      "Error: the agent's sandbox killed (cpu limit) before the episode ended",
    );
    const idle = await episode("for (;;) await new Promise((r) => setTimeout(r, 10));", {
      wallMs: 2000,
    });
    expect(idle.record.outcome).toBe("error");
    expect(idle.record.endReason).toBe("agent_error");
    expect(idle.record.error).toBe(
      "Error: the agent's sandbox killed (wall limit) before the episode ended",
    );
  }, 60_000);

  it("cannot allocate 4 GB: refused in one piece, killed by the memory watchdog in pieces", async () => {
    const whole = await episode("Buffer.alloc(4 * 1024 ** 3, 1); return { action: 'pass' };", {
      memoryBytes: 512 * MiB,
    });
    expect(whole.record.outcome).toBe("error");
    expect(whole.record.endReason).toBe("agent_error");
    // RLIMIT_DATA refuses the mapping; the agent's own error says so.
    expect(whole.record.error).toMatch(
      /^Error: the agent failed: RangeError: Array buffer allocation failed \| at /,
    );
    const pieces = await episode(
      `const chunks = [];
       for (let i = 0; i < 64; i++) chunks.push(Buffer.alloc(64 * 1024 ** 2, 1));
       return { action: "pass", message: String(chunks.length) };`,
      // RLIMIT_DATA well above the watchdog's mark, so that the watchdog is what stops it.
      { memoryBytes: 2048 * MiB, residentBytes: 256 * MiB },
    );
    expect(pieces.record.outcome).toBe("error");
    expect(pieces.record.endReason).toBe("agent_error");
    expect(pieces.record.error).toBe(
      "Error: the agent's sandbox killed (memory limit) before the episode ended",
    );
  }, 30_000);

  it("cannot write a file past the size limit", async () => {
    // Node gets EFBIG (it is not killed by SIGXFSZ): the agent's own error ends the episode.
    const node = await episode(
      "fs.writeFileSync('big.bin', Buffer.alloc(4 * 1024 ** 2)); return { action: 'pass' };",
      { fileBytes: MiB },
    );
    expect(node.record.outcome).toBe("error");
    expect(node.record.endReason).toBe("agent_error");
    expect(node.record.error).toMatch(
      /^Error: the agent failed: Error: EFBIG: file too large, write \| at /,
    );
    // A shell writing without end is killed by SIGXFSZ at the limit, its file cut there.
    const shell = await episode(
      `const run = spawnSync("/bin/sh", ["-c", "while :; do echo 0123456789abcdef; done > big.txt"]);
       return { action: "pass", message: JSON.stringify({ signal: run.signal, size: fs.statSync("big.txt").size }) };`,
      { fileBytes: MiB },
    );
    expect(shell.record.error).toBeUndefined();
    expect(shell.seen).toEqual({ signal: "SIGXFSZ", size: MiB });
  }, 30_000);
});

describe("hostile agent folders: the host's files", () => {
  it("cannot write outside the workspace, and the host's file is never created", async () => {
    const escaped = join(scratch, "escaped");
    const escapedDir = join(scratch, "escaped-dir");
    const { record, seen } = await episode(`
      const out: Record<string, string> = {};
      for (const p of ["/x", "/etc/x", "/usr/x", "/bin/x", "../x", "/proc/x", "/dev/x",
                       "/node_modules/x", "/node_modules/tsx/package.json", process.execPath,
                       ${JSON.stringify(escaped)}])
        out[p] = attempt(() => fs.writeFileSync(p, "x"));
      // The host's temporary folder is not the sandbox's /tmp: these land in the sandbox's own.
      out.mkdirHost = attempt(() => fs.mkdirSync(${JSON.stringify(escapedDir)}, { recursive: true }));
      out.writeHost = attempt(() => fs.writeFileSync(${JSON.stringify(join(escapedDir, "f"))}, "x"));
      // A link out of the workspace is followed inside only, and never copied back.
      out.link = attempt(() => { fs.symlinkSync(${JSON.stringify(escaped)}, "/work/link"); fs.writeFileSync("/work/link", "x"); });
      out.work = attempt(() => fs.writeFileSync("/work/ok", "x"));
      return { action: "pass", message: JSON.stringify(out) };
    `);
    expect(record.error).toBeUndefined();
    expect(seen).toEqual({
      "/x": "EROFS",
      "/etc/x": "ENOENT",
      "/usr/x": "EROFS",
      "/bin/x": "EROFS",
      "../x": "EROFS",
      "/proc/x": "ENOENT",
      "/dev/x": "EROFS",
      "/node_modules/x": "EROFS",
      "/node_modules/tsx/package.json": "EROFS",
      [process.execPath]: "EROFS",
      [escaped]: "ENOENT",
      mkdirHost: "allowed",
      writeHost: "allowed",
      link: "allowed",
      work: "allowed",
    });
    expect(readdirSync(scratch).filter((name) => name.startsWith("escaped"))).toEqual([]);
  }, 30_000);
});

describe("hostile agent folders: the parent process", () => {
  it("cannot signal the parent: its own parent is the sandbox's init, the host's pids are not there", async () => {
    const targets = { test: process.pid, vitest: process.ppid };
    const { record, seen } = await episode(`
      const out: Record<string, unknown> = { ppid: process.ppid };
      out.parentKill = attempt(() => process.kill(process.ppid, "SIGKILL"));
      out.parentTerm = attempt(() => process.kill(process.ppid, "SIGTERM"));
      for (const [name, pid] of Object.entries(${JSON.stringify(targets)}))
        out[name] = attempt(() => process.kill(pid, "SIGKILL"));
      await new Promise((r) => setTimeout(r, 200));
      out.alive = true;
      return { action: "pass", message: JSON.stringify(out) };
    `);
    // The signals to the sandbox's init (pid 1 of its namespace) are delivered and ignored, as the
    // kernel does for an init without handlers: the harness, and the episode, went on.
    expect(record.error).toBeUndefined();
    expect(record.outcome).toBe("failure");
    expect(seen).toEqual({
      ppid: 1,
      parentKill: "allowed",
      parentTerm: "allowed",
      test: "ESRCH",
      vitest: "ESRCH",
      alive: true,
    });
    expect(() => process.kill(process.ppid, 0)).not.toThrow();
  }, 30_000);
});
