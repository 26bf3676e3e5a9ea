/**
 * Hostile code in the sandbox: each attempt is blocked (the error the code saw is checked) or
 * killed (the reason is checked), and the parent is unaffected: this process, and a host
 * process running under the same host uid as the sandbox, are still alive with their priority
 * unchanged at the end. Every run is bounded to a few seconds.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { getPriority, networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed, SANDBOX_UID, type SandboxRequest } from "../../src/sandbox/index.js";

const isRoot = process.getuid?.() === 0;
const scratch = mkdtempSync(join(tmpdir(), "clade-hostile-"));
/** A host process under the sandbox's host uid (65534 when this runs as root, else ours). */
let bystander: ChildProcess;
let ownPriority: number;

/** The nice value of a host process, from /proc. */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

beforeAll(() => {
  bystander = spawn("sleep", ["600"], {
    stdio: "ignore",
    ...(isRoot ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
  });
  ownPriority = getPriority();
});

afterAll(() => {
  // The parent is unaffected: alive, same priority; so is the host process of the sandbox's uid.
  expect(bystander.exitCode).toBeNull();
  expect(bystander.signalCode).toBeNull();
  expect(niceOf(bystander.pid as number)).toBe(0);
  expect(getPriority()).toBe(ownPriority);
  bystander.kill("SIGKILL");
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs an ES-module Node script in the sandbox; its last line of output is parsed as JSON. */
async function hostile(script: string, options: Partial<SandboxRequest> = {}) {
  const result = await runSandboxed({
    command: process.execPath,
    args: ["--input-type=module", "-e", script],
    ...options,
    limits: { wallMs: 5000, ...options.limits },
  });
  const lines = result.stdout.text.trim().split("\n");
  let seen: Record<string, unknown> = {};
  try {
    seen = JSON.parse(lines.at(-1) ?? "{}");
  } catch {
    // Killed before it could say anything.
  }
  return { result, seen };
}

/** The error code of a synchronous attempt, or "allowed". */
const TRY = `const attempt = (f) => { try { f(); return "allowed"; } catch (e) { return e.code ?? String(e); } };`;

describe("hostile code: secrets and files of the host", () => {
  it("cannot read ~/.ssh: a canary key in a home folder outside the workspace", async () => {
    const home = join(scratch, "home");
    mkdirSync(join(home, ".ssh"), { recursive: true });
    const canary = `-----BEGIN OPENSSH PRIVATE KEY----- canary-${Date.now()}`;
    writeFileSync(join(home, ".ssh", "id_ed25519"), canary, { mode: 0o600 });
    const { result, seen } = await hostile(
      `import fs from "node:fs"; import os from "node:os"; ${TRY}
       console.log(JSON.stringify({
         home: attempt(() => fs.readFileSync(process.env.HOME + "/.ssh/id_ed25519", "utf8")),
         homedir: attempt(() => fs.readdirSync(os.homedir() + "/.ssh")),
         root: attempt(() => fs.readdirSync("/root")),
         homes: attempt(() => fs.readdirSync("/home")),
       }));`,
      { env: { HOME: home } },
    );
    expect(seen).toEqual({ home: "ENOENT", homedir: "ENOENT", root: "ENOENT", homes: "ENOENT" });
    expect(result.stdout.text + result.stderr.text).not.toContain("canary-");
  });

  it("cannot read /etc/shadow (nor any of /etc)", async () => {
    const { seen } = await hostile(
      `import fs from "node:fs"; ${TRY}
       console.log(JSON.stringify({
         shadow: attempt(() => fs.readFileSync("/etc/shadow")),
         passwd: attempt(() => fs.readFileSync("/etc/passwd")),
       }));`,
    );
    expect(seen).toEqual({ shadow: "ENOENT", passwd: "ENOENT" });
  });

  it("cannot read the parent's environment, directly or through /proc", async () => {
    const name = "CLADE_HOSTILE_PLAIN_CANARY";
    const canary = `plain-canary-${Date.now()}`;
    process.env[name] = canary;
    try {
      const { result, seen } = await hostile(
        `import fs from "node:fs"; ${TRY}
         const read = (p) => { try { return fs.readFileSync(p, "latin1"); } catch (e) { return e.code; } };
         const pids = fs.readdirSync("/proc").filter((p) => /^\\d+$/.test(p));
         console.log(JSON.stringify({
           env: process.env, pids, ppid: process.ppid,
           environs: pids.map((p) => read("/proc/" + p + "/environ")),
           hostPid: attempt(() => fs.readFileSync("/proc/${process.pid}/environ")),
         }));`,
      );
      expect(seen.env).toEqual({});
      // Only the sandbox's own two processes: bwrap's init and the command.
      expect(seen.pids).toEqual(["1", "2"]);
      expect(seen.ppid).toBe(1);
      expect(seen.environs).toEqual(["", ""]);
      expect(seen.hostPid).toBe("ENOENT");
      expect(result.stdout.text).not.toContain(canary);
    } finally {
      delete process.env[name];
    }
  });

  it("cannot write outside the workspace (read-only root, no host paths)", async () => {
    const { seen } = await hostile(
      `import fs from "node:fs"; ${TRY}
       const out = {};
       for (const p of ["/x", "/etc/x", "/usr/x", "/bin/x", "/lib/x", "/proc/x", "/dev/x",
                        "/node_modules", ${JSON.stringify(join(scratch, "escaped"))}])
         out[p] = attempt(() => fs.writeFileSync(p, "x"));
       out.tmp = attempt(() => fs.writeFileSync("/tmp/ok", "x"));
       out.work = attempt(() => fs.writeFileSync("/work/ok", "x"));
       console.log(JSON.stringify(out));`,
    );
    for (const [path, code] of Object.entries(seen)) {
      if (path === "tmp" || path === "work") expect(code, path).toBe("allowed");
      else expect(["EROFS", "ENOENT", "EACCES"], `${path}: ${code}`).toContain(code);
    }
    expect(existsSync(join(scratch, "escaped"))).toBe(false);
  });
});

describe("hostile code: the network and host sockets", () => {
  const servers: Server[] = [];
  let connections = 0;
  const listen = (server: Server, ...args: unknown[]) =>
    new Promise<void>((resolve) => (server.listen as (...a: unknown[]) => void)(...args, resolve));
  afterAll(() => {
    for (const server of servers) server.close();
  });

  it("cannot connect to the host's loopback, its other addresses, Unix or abstract sockets", async () => {
    const make = () => {
      const server = createServer((socket) => {
        connections++;
        socket.end("reached");
      });
      servers.push(server);
      return server;
    };
    const tcp = make();
    await listen(tcp, 0, "0.0.0.0");
    const port = (tcp.address() as { port: number }).port;
    const path = join(scratch, "host.sock");
    await listen(make(), path);
    const abstract = `\0clade-hostile-${process.pid}`;
    await listen(make(), abstract);
    const hostAddresses = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === "IPv4" && !a.internal)
      .map((a) => a?.address as string);
    const targets = [
      { host: "127.0.0.1", port },
      ...hostAddresses.map((host) => ({ host, port })),
      { path },
      { path: abstract },
    ];
    const { seen } = await hostile(
      `import net from "node:net";
       const targets = ${JSON.stringify(targets)};
       const out = [];
       for (const t of targets) out.push(await new Promise((resolve) => {
         const s = net.connect(t);
         s.setTimeout(1000, () => { s.destroy(); resolve("timeout"); });
         s.on("data", () => resolve("REACHED"));
         s.on("error", (e) => resolve(e.code));
       }));
       console.log(JSON.stringify({ out }));`,
    );
    const out = seen.out as string[];
    expect(out).toHaveLength(targets.length);
    expect(out[0]).toBe("ECONNREFUSED"); // the sandbox's own, empty loopback
    for (const code of out.slice(1, -2)) expect(["ENETUNREACH", "EHOSTUNREACH"]).toContain(code);
    expect(out.at(-2)).toBe("ENOENT"); // the socket file is not in the sandbox
    expect(out.at(-1)).toBe("ECONNREFUSED"); // abstract names belong to the network namespace
    expect(connections).toBe(0);
  });
});

describe("hostile code: descriptors", () => {
  const bash = ["/bin/bash", "/usr/bin/bash"].find((path) => existsSync(path));
  it.skipIf(bash === undefined)(
    "cannot use a descriptor that clade itself inherited (it is /dev/null inside)",
    async () => {
      // bash moves the test's pipe to fd 250 without close-on-exec, then runs the fixture.
      const fixture = join(import.meta.dirname, "fixtures", "leaked-fd.ts");
      const child = spawn(
        bash as string,
        ["-c", 'exec 250>&7 7>&-; exec "$0" --import tsx "$1"', process.execPath, fixture],
        {
          cwd: join(import.meta.dirname, "..", ".."),
          stdio: ["ignore", "pipe", "pipe", "ignore", "ignore", "ignore", "ignore", "pipe"],
        },
      );
      let out = "";
      let leaked = "";
      child.stdout?.on("data", (d) => {
        out += d;
      });
      (child.stdio as unknown as (Readable | null)[])[7]?.on("data", (d) => {
        leaked += d;
      });
      await new Promise((resolve) => child.on("close", resolve));
      expect(JSON.parse(out.trim().split("\n").at(-1) ?? "{}")).toEqual({
        target: "/dev/null",
        wrote: "EBADF",
      });
      expect(leaked).toBe("");
    },
  );
});

describe("hostile code: resources", () => {
  /** Host processes whose command line holds `marker`. */
  function processesWith(marker: string): number {
    return readdirSync("/proc").filter((pid) => {
      try {
        return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(marker);
      } catch {
        return false;
      }
    }).length;
  }

  it("a fork bomb hits the process limit and dies with the sandbox", async () => {
    const marker = `forkbomb-${Date.now()}`;
    const result = await runSandboxed({
      command: "/bin/sh",
      args: ["-c", "bomb() { bomb | bomb; }; bomb", marker],
      limits: { processes: 32, wallMs: 2000 },
    });
    // Every shell waits for its pipeline, so the outermost one ends only when a fork fails below
    // it (dash says "Cannot fork" and exits 2) or the wall clock ends it on a loaded machine. A
    // bomb that backgrounds itself would let the outermost shell exit 0 at once, before any limit.
    const limited =
      result.killedBy === "wall" ||
      (result.exitCode !== null &&
        result.exitCode !== 0 &&
        result.stderr.text.includes("Cannot fork"));
    expect(
      limited,
      `exit ${result.exitCode}, signal ${result.signal}, killedBy ${result.killedBy}, ${result.durationMs} ms, stderr: ${result.stderr.text.slice(0, 300)}`,
    ).toBe(true);
    expect(result.killedBy === null || result.killedBy === "wall").toBe(true);
    expect(result.durationMs).toBeLessThan(3000);
    expect(processesWith(marker)).toBe(0);
  });

  it("spawning processes in a loop stops at RLIMIT_NPROC, and nothing is left behind", async () => {
    const marker = `spawnloop-${Date.now()}`;
    const { result, seen } = await hostile(
      `import { spawn } from "node:child_process";
       let n = 0, error = "";
       while (n < 1000) {
         const c = spawn("/bin/sh", ["-c", "sleep 30", "${marker}"], { stdio: "ignore" });
         const code = await new Promise((resolve) => { c.on("spawn", () => resolve("")); c.on("error", (e) => resolve(e.code)); });
         if (code) { error = code; break; }
         n++;
       }
       console.log(JSON.stringify({ n, error }));
       setInterval(() => {}, 1000);`,
      { limits: { processes: 32, wallMs: 2500 } },
    );
    expect(seen.error).toBe("EAGAIN");
    expect(seen.n as number).toBeLessThan(32);
    expect(result.killedBy).toBe("wall");
    expect(processesWith(marker)).toBe(0);
  });

  it("an infinite loop is killed for CPU time; an idle one by the wall clock", async () => {
    const busy = await hostile("for (;;) {}", { limits: { cpuSeconds: 1, wallMs: 5000 } });
    expect(busy.result).toMatchObject({ killedBy: "cpu", signal: "SIGXCPU" });
    const idle = await hostile("setInterval(() => {}, 1000)", { limits: { wallMs: 800 } });
    expect(idle.result).toMatchObject({ killedBy: "wall", timedOut: true });
  });

  it("cannot allocate 4 GB", async () => {
    const { seen } = await hostile(
      `let one = "allowed"; try { Buffer.alloc(4 * 1024 ** 3, 1); } catch (e) { one = e.name + ": " + e.message; }
       const chunks = []; let got = 0;
       try { for (; got < 4096; got += 64) chunks.push(Buffer.alloc(64 * 1024 * 1024, 1)); } catch (e) {}
       console.log(JSON.stringify({ one, got }));`,
      { limits: { memoryBytes: 512 * 1024 * 1024 } },
    );
    expect(seen.one).toMatch(/RangeError|allocation failed/i);
    expect(seen.got as number).toBeLessThanOrEqual(512);
    const heap = await hostile(`const a = []; for (;;) a.push(new Array(1e5).fill(1.5));`, {
      limits: { memoryBytes: 512 * 1024 * 1024 },
    });
    expect(heap.result.killedBy).toBe("memory");
  });

  it("cannot write a file past the size limit", async () => {
    const { result, seen } = await hostile(
      `import fs from "node:fs";
       let code = "allowed"; try { fs.writeFileSync("big.bin", Buffer.alloc(4 * 1024 * 1024)); } catch (e) { code = e.code; }
       console.log(JSON.stringify({ code, size: fs.statSync("big.bin").size }));`,
      { limits: { fileBytes: 1024 * 1024 } },
    );
    expect(seen).toEqual({ code: "EFBIG", size: 1024 * 1024 });
    const shell = await runSandboxed({
      command: "/bin/sh",
      args: ["-c", "while :; do echo 0123456789abcdef0123456789abcdef; done > big.txt"],
      limits: { fileBytes: 64 * 1024, wallMs: 5000 },
    });
    expect(shell.killedBy).toBe("fsize");
    expect(result.exitCode).toBe(0);
  });

  it("cannot fill the workspace past its size, and the host copy stays bounded", async () => {
    const workspace = join(scratch, "fill");
    mkdirSync(workspace);
    const { result, seen } = await hostile(
      `import fs from "node:fs";
       let written = 0, code = "";
       try { for (let i = 0; i < 1000; i++) { fs.writeFileSync("f" + i, Buffer.alloc(1024 * 1024, 7)); written++; } }
       catch (e) { code = e.code; }
       let tmp = ""; try { fs.writeFileSync("/tmp/t", Buffer.alloc(16 * 1024 * 1024)); } catch (e) { tmp = e.code; }
       console.log(JSON.stringify({ written, code, tmp }));`,
      { workspace, limits: { workspaceBytes: 8 * 1024 * 1024, tmpBytes: 4 * 1024 * 1024 } },
    );
    expect(seen.code).toBe("ENOSPC");
    expect(seen.tmp).toBe("ENOSPC");
    expect(seen.written as number).toBeLessThanOrEqual(8);
    expect(result.workspaceFull).toBe(true);
    const bytes = readdirSync(workspace).reduce((n, f) => n + statSync(join(workspace, f)).size, 0);
    expect(bytes).toBeLessThanOrEqual(8 * 1024 * 1024);
  });
});

describe("hostile code: the parent process", () => {
  it("cannot signal the parent: its pid is not visible, and kill -1 reaches only the sandbox", async () => {
    const targets = [process.pid, bystander.pid as number];
    const { result, seen } = await hostile(
      `import { spawn } from "node:child_process";
       const sibling = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
       await new Promise((resolve) => sibling.on("spawn", resolve));
       const out = {};
       for (const pid of ${JSON.stringify(targets)}) {
         try { process.kill(pid, "SIGKILL"); out[pid] = "SIGNALLED"; } catch (e) { out[pid] = e.code; }
       }
       try { process.kill(-1, "SIGKILL"); out.all = "sent"; } catch (e) { out.all = e.code; }
       out.sibling = await new Promise((resolve) => sibling.on("exit", (code, signal) => resolve(signal)));
       console.log(JSON.stringify(out));`,
    );
    expect(seen[String(process.pid)]).toBe("ESRCH");
    expect(seen[String(bystander.pid)]).toBe("ESRCH");
    // kill -1 reached the sandbox's own processes (its sibling), nothing outside.
    expect(seen.all).toBe("sent");
    expect(seen.sibling).toBe("SIGKILL");
    expect(result.exitCode).toBe(0);
    expect(bystander.exitCode).toBeNull();
    expect(bystander.signalCode).toBeNull();
  });

  it("cannot renice the parent", async () => {
    const targets = [process.pid, bystander.pid as number];
    const { seen } = await hostile(
      `import os from "node:os";
       const out = {};
       for (const pid of ${JSON.stringify(targets)}) {
         try { os.setPriority(pid, 19); out[pid] = "RENICED"; } catch (e) { out[pid] = e.message; }
       }
       console.log(JSON.stringify(out));`,
    );
    for (const pid of targets) expect(String(seen[String(pid)])).toMatch(/ESRCH/);
    expect(getPriority()).toBe(ownPriority);
    expect(niceOf(bystander.pid as number)).toBe(0);
  });
});
