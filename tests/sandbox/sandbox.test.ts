/**
 * The sandbox's API: what runs inside and how (namespaces, uid, environment, files), the
 * workspace copied in and mirrored back, the limits and how their kills are reported, the
 * channel to the parent with the key canary, read-only package binds (tsx), mode "none",
 * refusals, the one-line error when bubblewrap is missing, and the cleanup of workspaces left
 * by a process killed with SIGKILL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  checkSandbox,
  cleanupStaleWorkspaces,
  createWorkspace,
  packageBinds,
  resetSandboxCheck,
  runSandboxed,
  SANDBOX_UID,
  SandboxError,
  type SandboxRequest,
  SandboxUnavailableError,
  secretValues,
  workspacesBase,
} from "../../src/sandbox/index.js";

const REPO = join(import.meta.dirname, "..", "..");
const dirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs a CommonJS Node script in the sandbox. */
function node(script: string, options: Partial<SandboxRequest> = {}) {
  return runSandboxed({ command: process.execPath, args: ["-e", script], ...options });
}

describe("sandbox: what the code sees", () => {
  it("runs as uid 65534 in its own namespaces with an empty environment and a bare root", async () => {
    const result = await node(
      `const fs = require("fs"), os = require("os");
       console.log(JSON.stringify({
         uid: process.getuid(), gid: process.getgid(), pid: process.pid, env: process.env,
         cwd: process.cwd(), root: fs.readdirSync("/").sort(), host: os.hostname(),
         pids: fs.readdirSync("/proc").filter((p) => /^\\d+$/.test(p)).length,
         nets: Object.keys(os.networkInterfaces()),
       }));`,
    );
    expect(result).toMatchObject({ mode: "bwrap", exitCode: 0, signal: null, killedBy: null });
    const seen = JSON.parse(result.stdout.text);
    expect(seen).toMatchObject({ uid: SANDBOX_UID, gid: SANDBOX_UID, env: {}, cwd: "/work" });
    expect(seen.root).toEqual(["bin", "dev", "lib", "lib64", "proc", "tmp", "usr", "work"]);
    expect(seen.host).toBe("sandbox");
    // pid 1 (bwrap's init) and the command itself: no host process is visible.
    expect(seen.pid).toBe(2);
    expect(seen.pids).toBe(2);
    expect(seen.nets).toEqual(["lo"]);
  });

  it("passes only the variables given, and stdin", async () => {
    const result = await node(
      `let input = ""; process.stdin.on("data", (d) => (input += d));
       process.stdin.on("end", () => console.log(JSON.stringify({ env: process.env, input })));`,
      { env: { GREETING: "hello", PWD: "/work" }, stdin: "from the parent" },
    );
    expect(JSON.parse(result.stdout.text)).toEqual({
      env: { GREETING: "hello", PWD: "/work" },
      input: "from the parent",
    });
  });

  it("copies the workspace in and mirrors it back: writes, removals, no links", async () => {
    const ws = tempDir("clade-sb-ws-");
    mkdirSync(join(ws, "sub"));
    writeFileSync(join(ws, "keep.txt"), "kept");
    writeFileSync(join(ws, "sub", "change.txt"), "before");
    writeFileSync(join(ws, "gone.txt"), "to be removed");
    writeFileSync(join(ws, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
    symlinkSync("/etc/passwd", join(ws, "host-link"));
    const result = await node(
      `const fs = require("fs");
       console.log(JSON.stringify({ files: fs.readdirSync(".").sort(),
         change: fs.readFileSync("sub/change.txt", "utf8"),
         exec: (fs.statSync("run.sh").mode & 0o111) !== 0 }));
       fs.writeFileSync("sub/change.txt", "after");
       fs.unlinkSync("gone.txt");
       fs.mkdirSync("new/deeper", { recursive: true });
       fs.writeFileSync("new/deeper/made.txt", "made inside");
       fs.symlinkSync("/etc/shadow", "link-out");`,
      { workspace: ws },
    );
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout.text)).toEqual({
      files: ["keep.txt", "run.sh", "gone.txt", "sub"].sort(),
      change: "before",
      exec: true,
    });
    expect(readFileSync(join(ws, "keep.txt"), "utf8")).toBe("kept");
    expect(readFileSync(join(ws, "sub", "change.txt"), "utf8")).toBe("after");
    expect(readFileSync(join(ws, "new", "deeper", "made.txt"), "utf8")).toBe("made inside");
    expect(existsSync(join(ws, "gone.txt"))).toBe(false);
    // Links are never copied either way: the host's one is dropped, the sandbox's ignored.
    expect(readdirSync(ws).sort()).toEqual(["keep.txt", "new", "run.sh", "sub"]);
    expect(result.workspace).toMatchObject({ written: 2, skipped: 1 });
  });

  it("refuses a workspace larger than the sandbox's", async () => {
    const ws = tempDir("clade-sb-big-");
    writeFileSync(join(ws, "big.bin"), Buffer.alloc(2 * 1024 * 1024));
    await expect(
      node("0", { workspace: ws, limits: { workspaceBytes: 1024 * 1024 } }),
    ).rejects.toThrow(/more than the sandbox's workspace size/);
  });

  it("runs TypeScript with tsx bound read-only at /node_modules", async () => {
    const ws = tempDir("clade-sb-ts-");
    writeFileSync(join(ws, "hello.ts"), 'const n: number = 41;\nconsole.log("TS", n + 1);\n');
    const binds = packageBinds(["tsx"], REPO);
    expect(binds.map((b) => b.target)).toContain("/node_modules/tsx");
    const result = await runSandboxed({
      command: process.execPath,
      args: ["--import", "tsx", "hello.ts"],
      workspace: ws,
      binds,
      limits: { wallMs: 20_000 },
    });
    expect(result.stderr.text).toBe("");
    expect(result.stdout.text).toBe("TS 42\n");
    // Read-only: the package cannot be changed from inside.
    const tamper = await node(
      `try { require("fs").writeFileSync("/node_modules/tsx/package.json", "{}"); console.log("WROTE"); }
       catch (e) { console.log(e.code); }`,
      { binds },
    );
    expect(tamper.stdout.text.trim()).toBe("EROFS");
  });

  it("refuses binds that would expose host sockets, homes or system folders", async () => {
    for (const source of ["/", "/run", "/var/run/x", "/tmp", tmpdir(), "/home", "/root", "/proc"]) {
      await expect(node("0", { binds: [{ source, target: "/data" }] }), source).rejects.toThrow(
        /refusing to bind/,
      );
    }
    await expect(node("0", { binds: [{ source: REPO, target: "/work/x" }] })).rejects.toThrow(
      /the sandbox owns it/,
    );
  });

  it("binds a folder of the caller's inside the shared /tmp, unless it holds a Unix socket", async () => {
    // A checkout in /tmp (as CI clones often are) is the caller's own files.
    const mine = mkdtempSync(join(tmpdir(), "clade-bind-"));
    chmodSync(mine, 0o755); // readable by the sandbox's uid, as a checkout is
    mkdirSync(join(mine, "lib"));
    writeFileSync(join(mine, "lib", "value.txt"), "42");
    const read = await node(
      `console.log(require("fs").readFileSync("/data/lib/value.txt", "utf8"))`,
      {
        binds: [{ source: mine, target: "/data" }],
      },
    );
    expect(read.stdout.text.trim()).toBe("42");
    // The same kind of folder with a listening socket deep inside is refused.
    const sockets = mkdtempSync(join(tmpdir(), "clade-bind-sock-"));
    mkdirSync(join(sockets, "a", "b"), { recursive: true });
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(sockets, "a", "b", "s.sock"), resolve));
    try {
      await expect(node("0", { binds: [{ source: sockets, target: "/data" }] })).rejects.toThrow(
        /refusing to bind/,
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(mine, { recursive: true, force: true });
      rmSync(sockets, { recursive: true, force: true });
    }
  });
});

describe("sandbox: limits and how they are reported", () => {
  it("kills at the wall clock, with everything inside", async () => {
    const started = Date.now();
    const result = await node("setInterval(() => {}, 1000)", { limits: { wallMs: 500 } });
    expect(result).toMatchObject({ timedOut: true, killedBy: "wall", exitCode: null });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("reports a CPU-time kill", async () => {
    const result = await node("for (;;) {}", { limits: { cpuSeconds: 1, wallMs: 10_000 } });
    expect(result).toMatchObject({ killedBy: "cpu", signal: "SIGXCPU", timedOut: false });
    expect(result.durationMs).toBeLessThan(5000);
  });

  it("reports a file-size kill (RLIMIT_FSIZE) and Node's EFBIG", async () => {
    const shell = await runSandboxed({
      command: "/bin/sh",
      args: ["-c", "while :; do echo 0123456789abcdef0123456789abcdef; done > big.txt"],
      limits: { fileBytes: 64 * 1024, wallMs: 5000 },
    });
    expect(shell).toMatchObject({ killedBy: "fsize", signal: "SIGXFSZ" });
    const viaNode = await node(
      `try { require("fs").writeFileSync("big", Buffer.alloc(2e6)); } catch (e) { console.log(e.code); }
       console.log(require("fs").statSync("big").size);`,
      { limits: { fileBytes: 1e6 } },
    );
    expect(viaNode.stdout.text).toBe("EFBIG\n1000000\n");
  });

  it("reports a memory kill, from the resident-memory watchdog or the heap", async () => {
    const watched = await node(
      `const keep = []; setInterval(() => keep.push(Buffer.alloc(16 * 1024 * 1024, 1)), 10);`,
      { limits: { residentBytes: 200 * 1024 * 1024, memoryBytes: 1024 * 1024 * 1024 } },
    );
    expect(watched).toMatchObject({ killedBy: "memory", timedOut: false });
    const heap = await node(`const a = []; for (;;) a.push(new Array(1e5).fill(Math.random()));`, {
      limits: { memoryBytes: 256 * 1024 * 1024 },
    });
    expect(heap.killedBy).toBe("memory");
    expect(heap.exitCode).not.toBe(0);
  });

  it("kills a run that prints too much", async () => {
    const result = await node(
      `const b = "x".repeat(65536); for (;;) require("fs").writeSync(1, b);`,
      {
        limits: { outputBytes: 1024 * 1024 },
        outputKeepChars: 100,
      },
    );
    expect(result.killedBy).toBe("output");
    expect(result.stdout.text).toHaveLength(100);
    expect(result.stdout.dropped).toBeGreaterThan(0);
  });

  it("an abort kills the run, which still resolves", async () => {
    const controller = new AbortController();
    const running = node("setInterval(() => {}, 1000)", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stop")), 300);
    expect(await running).toMatchObject({ killedBy: "abort", exitCode: null });
    const reason = new Error("already");
    await expect(node("0", { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it("rejects bad limits and unknown commands before starting anything", async () => {
    await expect(node("0", { limits: { wallMs: -1 } })).rejects.toBeInstanceOf(SandboxError);
    await expect(runSandboxed({ command: "/nonexistent/prog" })).rejects.toThrow(
      /not an executable file/,
    );
  });
});

describe("sandbox: the channel to the parent and the key canary", () => {
  const CANARY_NAME = "CLADE_TEST_CANARY_API_KEY";
  const CANARY = `sk-canary-${Math.random().toString(36).slice(2)}-CLADECANARY`;
  afterEach(() => {
    delete process.env[CANARY_NAME];
  });

  it("serves requests and notifications; secrets never reach the child", async () => {
    process.env[CANARY_NAME] = CANARY;
    expect(secretValues()).toContain(CANARY);
    const seen: unknown[] = [];
    // A handler that holds the key, as a model client would, and even tries to leak it.
    const handler = async (message: unknown) => {
      seen.push(message);
      const request = message as { id?: number; method?: string };
      if (request.method === "model") {
        return { content: `answer to ${request.id}`, usedKey: process.env[CANARY_NAME] };
      }
      if (request.method === "fail")
        throw new Error(`provider rejected ${process.env[CANARY_NAME]}`);
      return undefined;
    };
    const ws = tempDir("clade-sb-canary-");
    const script = `
      const fs = require("fs"), net = require("net");
      const found = [];
      const look = (path, text) => { let at = text.indexOf("CLADECANARY");
        while (at >= 0) { found.push(path + ": " + text.slice(Math.max(0, at - 60), at + 20)); at = text.indexOf("CLADECANARY", at + 1); } };
      const walk = (dir, depth) => {
        let entries; try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
        for (const e of entries) {
          const path = (dir === "/" ? "" : dir) + "/" + e.name;
          if (path === "/proc" || path === "/dev") continue;
          if (e.isDirectory() && depth < 20) walk(path, depth + 1);
          else if (e.isFile()) { try { if (fs.statSync(path).size < 8e6) look(path, fs.readFileSync(path, "latin1")); } catch {} }
        }
      };
      walk("/", 0);
      for (const pid of fs.readdirSync("/proc").filter((p) => /^\\d+$/.test(p)))
        for (const f of ["environ", "cmdline"]) { try { look("/proc/" + pid + "/" + f, fs.readFileSync("/proc/" + pid + "/" + f, "latin1")); } catch {} }
      look("env", JSON.stringify(process.env));
      fs.writeFileSync("found.json", JSON.stringify(found));
      const s = new net.Socket({ fd: 3 });
      const replies = [];
      let buffer = "";
      s.on("data", (d) => {
        buffer += d;
        for (let i = buffer.indexOf("\\n"); i >= 0; i = buffer.indexOf("\\n")) {
          replies.push(JSON.parse(buffer.slice(0, i))); buffer = buffer.slice(i + 1);
          if (replies.length === 3) { console.log(JSON.stringify({ found, replies })); s.end(); }
        }
      });
      s.write(JSON.stringify({ note: "starting" }) + "\\n");
      s.write(JSON.stringify({ id: 1, method: "model", messages: [{ role: "user", content: "hi" }] }) + "\\n");
      s.write(JSON.stringify({ id: "two", method: "fail" }) + "\\n");
      s.write("not json\\n");
      s.write(JSON.stringify({ id: 3, method: "noop" }) + "\\n");`;
    const result = await node(script, { workspace: ws, onMessage: handler });
    expect(result.exitCode).toBe(0);
    const out = JSON.parse(result.stdout.text);
    // The search found only its own source text (the marker without the secret around it).
    for (const hit of out.found as string[]) expect(hit).not.toContain(CANARY.slice(0, 20));
    expect(out.replies).toEqual(
      expect.arrayContaining([
        { id: 1, result: { content: "answer to 1", usedKey: "***" } },
        { id: "two", error: "provider rejected ***" },
        { id: 3 },
      ]),
    );
    expect(seen).toHaveLength(4);
    expect(seen[0]).toEqual({ note: "starting" });
    expect(result.messages).toEqual({ received: 4, replied: 3, dropped: 1 });
    // Nothing the child produced holds the key: output, messages, files.
    const everything = [
      result.stdout.text,
      result.stderr.text,
      JSON.stringify(seen),
      ...readdirSync(ws).map((f) => readFileSync(join(ws, f), "utf8")),
    ].join("\n");
    expect(everything).not.toContain(CANARY);
  });

  it("refuses to pass a secret value in the environment or on stdin", async () => {
    process.env[CANARY_NAME] = CANARY;
    await expect(node("0", { env: { LEAK: `x${CANARY}` } })).rejects.toThrow(
      /refusing to pass LEAK into the sandbox/,
    );
    await expect(node("0", { stdin: `key=${CANARY}` })).rejects.toThrow(/refusing to send stdin/);
  });
});

describe("sandbox: modes and availability", () => {
  afterEach(() => {
    delete process.env.CLADE_BWRAP;
    delete process.env.CLADE_SANDBOX;
    resetSandboxCheck();
  });

  it("probes bubblewrap once and reports what it found", async () => {
    const host = await checkSandbox();
    expect(host.bwrap).toMatch(/bwrap$/);
    expect(await checkSandbox()).toBe(host);
  });

  it("without bubblewrap: one line saying how to install it, and nothing runs", async () => {
    process.env.CLADE_BWRAP = "/nonexistent/bwrap";
    resetSandboxCheck();
    const error = await node("0").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as Error).message).toMatch(/apt-get install bubblewrap/);
    expect((error as Error).message).not.toContain("\n");
  });

  it("mode none must be explicit: a plain child process in the host workspace", async () => {
    process.env.CLADE_BWRAP = "/nonexistent/bwrap";
    resetSandboxCheck();
    const ws = tempDir("clade-sb-none-");
    const explicit = await node(
      `require("fs").writeFileSync("out.txt", "x"); console.log(JSON.stringify(process.env), process.cwd())`,
      { mode: "none", workspace: ws, env: { ONLY: "this" } },
    );
    expect(explicit).toMatchObject({ mode: "none", exitCode: 0 });
    expect(explicit.stdout.text).toBe(`{"ONLY":"this"} ${ws}\n`);
    expect(existsSync(join(ws, "out.txt"))).toBe(true);
    process.env.CLADE_SANDBOX = "none";
    expect((await node("0")).mode).toBe("none");
  });
});

describe("sandbox: workspaces left by a killed process", () => {
  function exited(child: ChildProcess): Promise<void> {
    return new Promise((resolve) => child.once("exit", () => resolve()));
  }

  /** Host processes whose command line holds `marker`. */
  function processesWith(marker: string): number[] {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(marker);
        } catch {
          return false;
        }
      })
      .map(Number);
  }

  it("kill -9 of the parent kills the sandbox; the next start removes the leftovers", async () => {
    const marker = `clade-hold-${process.pid}-${Date.now()}`;
    const holder = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "fixtures", "hold-sandbox.ts"), marker],
      { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    holder.stdout?.on("data", (d) => {
      out += d;
    });
    holder.stderr?.on("data", (d) => {
      out += d;
    });
    const deadline = Date.now() + 20_000;
    while (!out.includes("RUNNING") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(out).toContain("RUNNING");
    const workspace = /WORKSPACE (\S+)/.exec(out)?.[1] as string;
    expect(existsSync(workspace)).toBe(true);
    expect(processesWith(marker).length).toBeGreaterThan(0);
    holder.kill("SIGKILL");
    await exited(holder);
    // --die-with-parent: bwrap and everything inside go with it.
    for (let i = 0; i < 40 && processesWith(marker).length > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(processesWith(marker)).toEqual([]);
    // Left behind (no exit hook ran), bounded, and removed by the next process's sweep.
    expect(existsSync(workspace)).toBe(true);
    const removed = cleanupStaleWorkspaces();
    expect(removed.some((dir) => workspace.startsWith(`${dir}/`))).toBe(true);
    expect(existsSync(workspace)).toBe(false);
  });

  it("keeps each process's workspaces in a private clade-owned folder", () => {
    const ws = createWorkspace("t-");
    expect(ws.startsWith(`${workspacesBase()}/${process.pid}-`)).toBe(true);
    const stale = join(workspacesBase(), "999999999-1");
    mkdirSync(join(stale, "ws-x"), { recursive: true });
    expect(cleanupStaleWorkspaces()).toContain(stale);
    expect(existsSync(ws)).toBe(true);
    rmSync(ws, { recursive: true, force: true });
  });
});
