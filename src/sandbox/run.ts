/**
 * The one sandbox for untrusted code in clade: bubblewrap (bwrap).
 *
 * A run gets new user, PID, network, IPC, UTS and cgroup namespaces and a root that holds only
 * what it needs, read-only: the command's binary and its shared libraries, `/bin/sh` and
 * `prlimit` with theirs, /dev/{null,zero,random,urandom}, a new /proc, and the caller's binds
 * (e.g. the node_modules packages it needs). The only writable places are /work, a tmpfs of
 * `workspaceBytes` holding a copy of the caller's workspace, and /tmp, a tmpfs of `tmpBytes`.
 * No /home, /root, /run or host /tmp: no host Unix socket is reachable (the network namespace
 * isolates abstract ones). The environment is empty but for what the caller passes. The code
 * runs as uid/gid 65534 inside; when clade runs as root, bwrap itself runs as host uid 65534
 * too, so that RLIMIT_NPROC applies (the kernel never enforces it for host root). Its own session
 * (--new-session), so it cannot inject keystrokes into clade's terminal; it dies with its parent
 * (--die-with-parent); no further user namespaces inside (--disable-userns, bwrap >= 0.8). Only
 * stdio and the channel (fd 3) pass in: descriptors clade inherited without close-on-exec are
 * replaced by /dev/null in the child.
 *
 * Limits: `/bin/sh` starts inside, tells the parent it is ready (so the parent can open /work
 * from outside and hold it open to copy it back later), waits for the go, then execs `prlimit`,
 * which sets RLIMIT_CPU, RLIMIT_DATA, RLIMIT_NPROC, RLIMIT_FSIZE, RLIMIT_NOFILE and
 * RLIMIT_CORE = 0 and execs the command. Setting them there, after bwrap has made the user
 * namespace, makes RLIMIT_NPROC count the processes of that namespace alone (Linux >= 5.14), so
 * concurrent runs do not share one count, and leaves bwrap itself unlimited. The parent adds the
 * wall clock (SIGKILL to the namespace's init, which takes every process inside with it), an
 * optional resident-memory watchdog and an output cap.
 *
 * Mode "none" (explicit only) runs the command as a plain child process in the host workspace,
 * with an empty environment and the same rlimits but RLIMIT_NPROC: no namespaces, no isolation.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  constants,
  type Dirent,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  statfsSync,
} from "node:fs";
import { constants as osConstants, tmpdir } from "node:os";
import { isAbsolute, normalize } from "node:path";
import type { Duplex, Readable } from "node:stream";
import {
  type ChannelLimits,
  MessageChannel,
  type MessageHandler,
  secretValues,
} from "./channel.js";
import { SandboxError, SandboxUnavailableError } from "./errors.js";
import {
  bwrapVersion,
  findExecutable,
  firstLine,
  inheritableFds,
  librariesOf,
  realPathOf,
} from "./host.js";
import { defaultSandboxMode, SANDBOX_MODE_VARIABLE, type SandboxMode } from "./mode.js";
import { listWorkspace, type SyncReport, syncBack } from "./workspaces.js";

/** Where the workspace is inside the sandbox (the command's working directory). */
export const SANDBOX_WORKDIR = "/work";
/** The uid and gid code runs as inside the sandbox (and bwrap on the host, when clade is root). */
export const SANDBOX_UID = 65534;

/** The line shown when bubblewrap is missing. */
export const INSTALL_HINT =
  "install it with `apt-get install bubblewrap` (or pass --sandbox none, or set " +
  "CLADE_SANDBOX=none, to run untrusted code without any sandbox, explicitly)";

export interface SandboxLimits {
  /** Wall clock from the start of bwrap; then every process inside is killed. */
  wallMs: number;
  /** RLIMIT_CPU per process: SIGXCPU at this many seconds, SIGKILL one second later. */
  cpuSeconds: number;
  /** RLIMIT_DATA: heap, anonymous mappings and stacks of each process. */
  memoryBytes: number;
  /** Optional: kill when the sandbox's processes together hold more resident memory (sampled). */
  residentBytes?: number;
  /** RLIMIT_NPROC: processes and threads inside (Node itself uses about ten threads). */
  processes: number;
  /** RLIMIT_FSIZE: the largest file a process may write. */
  fileBytes: number;
  /** Size of /work (a tmpfs); the workspace must fit in it. */
  workspaceBytes: number;
  /** Size of /tmp (a tmpfs). */
  tmpBytes: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** Bytes of stdout and stderr together past which the run is killed. */
  outputBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = {
  wallMs: 30_000,
  cpuSeconds: 30,
  memoryBytes: 1024 * 1024 * 1024,
  processes: 128,
  fileBytes: 64 * 1024 * 1024,
  workspaceBytes: 128 * 1024 * 1024,
  tmpBytes: 64 * 1024 * 1024,
  openFiles: 256,
  outputBytes: 8 * 1024 * 1024,
};

/** A read-only bind: a host file or folder visible at `target` (default: the same path). */
export interface SandboxBind {
  source: string;
  target?: string;
}

export interface SandboxRequest {
  /** The program: an absolute host path, or a name found on PATH; bound read-only. */
  command: string;
  args?: readonly string[];
  /**
   * A host folder copied into /work before the run and mirrored back after it (regular files
   * and folders only). Without one, /work starts empty and is discarded.
   */
  workspace?: string;
  /** More read-only binds (e.g. node_modules packages); see `packageBinds`. */
  binds?: readonly (string | SandboxBind)[];
  /** The command's whole environment. Values of the parent's secrets are refused. */
  env?: Readonly<Record<string, string>>;
  stdin?: string | Buffer;
  limits?: Partial<SandboxLimits>;
  /** Serves the channel on fd 3 (requests and notifications, see channel.ts). */
  onMessage?: MessageHandler;
  channelLimits?: Partial<ChannelLimits>;
  /** Aborting kills the run; it still resolves, with killedBy "abort". */
  signal?: AbortSignal;
  /** "bwrap" unless said otherwise (see mode.ts): "none" must be asked for. */
  mode?: SandboxMode;
  /** Characters of stdout and of stderr kept in the result (default 64 KiB each). */
  outputKeepChars?: number;
}

export type SandboxKill = "wall" | "cpu" | "memory" | "fsize" | "output" | "abort";

export interface CappedText {
  text: string;
  /** Characters received beyond `text`. */
  dropped: number;
}

export interface SandboxResult {
  mode: SandboxMode;
  /** The command's exit code; null when it ended by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: CappedText;
  stderr: CappedText;
  /** Killed by the wall clock. */
  timedOut: boolean;
  /** Why the run was stopped or failed by a limit, when it was. */
  killedBy: SandboxKill | null;
  /** /work had no space left at the end (a write past workspaceBytes failed with ENOSPC). */
  workspaceFull: boolean;
  /** What was copied back into the host workspace. */
  workspace: SyncReport | undefined;
  messages: { received: number; replied: number; dropped: number };
  durationMs: number;
}

const OUTPUT_KEEP_CHARS = 64 * 1024;
const MEMORY_CHECK_MS = 50;
const TMPFS_MAGIC = 0x01021994;
/** Paths a bind may not expose: where host sockets, homes and kernel interfaces live. */
const FORBIDDEN_BIND_SOURCES = ["/", "/run", "/var/run", "/dev", "/proc", "/sys"];
const FORBIDDEN_BIND_EXACT = ["/home", "/root", "/etc", "/usr", "/var"];
/**
 * Shared temporary folders: never bound whole (other programs keep their sockets there), but a
 * folder of the caller's inside them (a checkout in /tmp) may be, once it holds no socket.
 */
const SHARED_TMP_ROOTS = ["/tmp", "/var/tmp"];
/** Most entries looked at for sockets in one bind under a shared temporary folder. */
const SOCKET_SCAN_LIMIT = 100_000;
const socketFree = new Map<string, boolean>();

/** Whether a tree holds no Unix socket (checked once per path per process, bounded). */
function holdsNoSocket(root: string): boolean {
  const known = socketFree.get(root);
  if (known !== undefined) return known;
  let seen = 0;
  const walk = (dir: string): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return true; // unreadable here is unreadable inside too
    }
    for (const entry of entries) {
      if (++seen > SOCKET_SCAN_LIMIT || entry.isSocket()) return false;
      if (entry.isDirectory() && !walk(`${dir}/${entry.name}`)) return false;
    }
    return true;
  };
  let result: boolean;
  try {
    result = lstatSync(root).isDirectory() ? walk(root) : !lstatSync(root).isSocket();
  } catch {
    result = true;
  }
  socketFree.set(root, result);
  return result;
}
/** Targets the sandbox owns. */
const RESERVED_TARGETS = ["/work", "/tmp", "/proc", "/dev"];
const DEVICES = ["null", "zero", "random", "urandom"];

/** What the sandbox found on this machine (see checkSandbox). */
export interface SandboxHost {
  bwrap: string;
  version: string;
  sh: string;
  prlimit: string;
  /** --disable-userns is used (bubblewrap >= 0.8). */
  disableUserns: boolean;
  /** The host uid bwrap runs as when clade is root; undefined otherwise. */
  hostUid: number | undefined;
}

function resolveLimits(given: Partial<SandboxLimits> | undefined): SandboxLimits {
  const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS };
  for (const [key, value] of Object.entries(given ?? {})) {
    if (value === undefined) continue;
    if (!(typeof value === "number" && Number.isFinite(value) && value > 0)) {
      throw new SandboxError(`the sandbox limit ${key} must be a positive number, got ${value}`);
    }
    (limits as unknown as Record<string, number>)[key] = Math.ceil(value);
  }
  return limits;
}

/** Refuses to pass any of the parent's secret values into the sandbox (env or stdin). */
function refuseSecrets(request: SandboxRequest, secrets: readonly string[]): void {
  for (const [name, value] of Object.entries(request.env ?? {})) {
    if (secrets.some((secret) => value.includes(secret))) {
      throw new SandboxError(
        `refusing to pass ${name} into the sandbox: it holds the value of one of this ` +
          "process's secret environment variables (the parent keeps the keys)",
      );
    }
  }
  const stdin = request.stdin === undefined ? "" : request.stdin.toString();
  if (secrets.some((secret) => stdin.includes(secret))) {
    throw new SandboxError(
      "refusing to send stdin into the sandbox: it holds the value of one of this process's " +
        "secret environment variables",
    );
  }
}

function normalizeBinds(binds: SandboxRequest["binds"]): Required<SandboxBind>[] {
  return (binds ?? []).map((bind) => {
    const { source, target = source } = typeof bind === "string" ? { source: bind } : bind;
    if (!isAbsolute(source) || !isAbsolute(target)) {
      throw new SandboxError(`sandbox binds need absolute paths, got ${source} -> ${target}`);
    }
    const src = normalize(source).replace(/\/+$/, "") || "/";
    const dst = normalize(target).replace(/\/+$/, "") || "/";
    if (dst === "/" || RESERVED_TARGETS.some((t) => dst === t || dst.startsWith(`${t}/`))) {
      throw new SandboxError(`a sandbox bind cannot target ${target}: the sandbox owns it`);
    }
    const real = realPathOf(src);
    const hostTmp = realPathOf(tmpdir());
    for (const path of new Set([src, real])) {
      const inSharedTmp = [...SHARED_TMP_ROOTS, hostTmp].some((root) =>
        path.startsWith(`${root}/`),
      );
      const forbidden =
        FORBIDDEN_BIND_EXACT.includes(path) ||
        FORBIDDEN_BIND_SOURCES.some((root) =>
          root === "/" ? path === "/" : path === root || path.startsWith(`${root}/`),
        ) ||
        SHARED_TMP_ROOTS.includes(path) ||
        path === hostTmp ||
        (inSharedTmp && !holdsNoSocket(real));
      if (forbidden) {
        throw new SandboxError(
          `refusing to bind ${source} into the sandbox: it would expose host sockets, homes or ` +
            "system folders; bind the files the code needs instead",
        );
      }
    }
    return { source: src, target: dst };
  });
}

/** The shell run first inside the sandbox: ready, wait for the go, then exec prlimit. */
function startScript(keepPwd: boolean): string {
  return `printf R >&4 && read -r _ <&4 && exec 4>&- && ${keepPwd ? "" : "unset PWD && "}exec "$@"`;
}

function prlimitArgs(limits: SandboxLimits, withProcesses: boolean): string[] {
  const pair = (value: number) => `${value}:${value}`;
  return [
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--data=${pair(limits.memoryBytes)}`,
    ...(withProcesses ? [`--nproc=${pair(limits.processes)}`] : []),
    `--fsize=${pair(limits.fileBytes)}`,
    `--nofile=${pair(limits.openFiles)}`,
    "--core=0:0",
  ];
}

/** Every file and folder bound read-only, in order, with the caller's binds first. */
function systemBinds(host: SandboxHost, command: string): [string, string][] {
  const files: [string, string][] = [
    [host.sh, "/bin/sh"],
    [host.prlimit, host.prlimit],
    [command, command],
  ];
  for (const binary of [host.sh, host.prlimit, command]) {
    for (const library of librariesOf(binary)) files.push([library, library]);
  }
  return files;
}

interface SpawnPlan {
  mode: SandboxMode;
  command: string;
  args: string[];
  uid: number | undefined;
  /** Open descriptors of the workspace's files, passed as fd 6 onwards and copied by bwrap. */
  files: number[];
}

function bwrapPlan(
  host: SandboxHost,
  request: SandboxRequest,
  command: string,
  limits: SandboxLimits,
): SpawnPlan {
  const env = request.env ?? {};
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(host.disableUserns ? ["--disable-userns"] : []),
    "--uid",
    String(SANDBOX_UID),
    "--gid",
    String(SANDBOX_UID),
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
  ];
  for (const [name, value] of Object.entries(env)) {
    if (name === "" || name.includes("=")) throw new SandboxError(`bad variable name ${name}`);
    args.push("--setenv", name, value);
  }
  args.push("--info-fd", "5");
  const userBinds = normalizeBinds(request.binds);
  const covered = (path: string) =>
    userBinds.some(
      (b) => b.source === b.target && (path === b.target || path.startsWith(`${b.target}/`)),
    );
  const seen = new Set<string>();
  for (const bind of userBinds) {
    if (seen.has(bind.target)) continue;
    seen.add(bind.target);
    args.push("--ro-bind", bind.source, bind.target);
  }
  for (const [source, target] of systemBinds(host, command)) {
    if (seen.has(target) || covered(target)) continue;
    seen.add(target);
    args.push("--ro-bind", source, target);
  }
  for (const device of DEVICES) args.push("--dev-bind-try", `/dev/${device}`, `/dev/${device}`);
  args.push("--symlink", "/proc/self/fd", "/dev/fd");
  for (const [fd, name] of ["stdin", "stdout", "stderr"].entries()) {
    args.push("--symlink", `/proc/self/fd/${fd}`, `/dev/${name}`);
  }
  args.push("--proc", "/proc");
  args.push("--size", String(limits.tmpBytes), "--tmpfs", "/tmp");
  args.push("--size", String(limits.workspaceBytes), "--tmpfs", SANDBOX_WORKDIR);
  const files: number[] = [];
  if (request.workspace !== undefined) {
    if (!isDirectory(request.workspace)) {
      throw new SandboxError(`the workspace ${request.workspace} is not a folder`);
    }
    // bwrap reads each file from a descriptor opened here: no copy through this process, and
    // it works whatever the file's permissions for the sandbox's host uid.
    const listing = listWorkspace(request.workspace, limits.workspaceBytes);
    for (const dir of listing.dirs) args.push("--dir", `${SANDBOX_WORKDIR}/${dir}`);
    for (const file of listing.files) {
      args.push(
        "--perms",
        file.mode.toString(8).padStart(4, "0"),
        "--file",
        String(6 + files.length),
        `${SANDBOX_WORKDIR}/${file.path}`,
      );
      files.push(file.fd);
    }
  }
  args.push("--remount-ro", "/", "--chdir", SANDBOX_WORKDIR, "--");
  args.push("/bin/sh", "-c", startScript("PWD" in env), "sh");
  args.push(host.prlimit, ...prlimitArgs(limits, true), "--", command, ...(request.args ?? []));
  return { mode: "bwrap", command: host.bwrap, args, uid: host.hostUid, files };
}

/** The parent pid of a process (from /proc), or undefined when it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function signalQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

class TextCollector {
  private kept = "";
  private dropped = 0;
  constructor(private readonly keep: number) {}
  add(chunk: string): void {
    const room = this.keep - this.kept.length;
    if (room > 0) this.kept += chunk.slice(0, room);
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }
  result(): CappedText {
    return { text: this.kept, dropped: this.dropped };
  }
}

/** Resident bytes of a process and its descendants (Linux /proc; 0 where unreadable). */
export function residentBytes(pid: number, depth = 0): number {
  if (depth > 64) return 0;
  let total = 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    total += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    for (const child of children ? children.split(/\s+/) : []) {
      total += residentBytes(Number(child), depth + 1);
    }
  } catch {
    // The process ended: nothing to add.
  }
  return total;
}

function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

/**
 * Opens the sandbox's /work from outside while the sandbox waits for the go: through the root of
 * its init (or of the shell, for a parent without CAP_SYS_PTRACE), checked to be the tmpfs of
 * the requested size, so a recycled pid can never make it some other folder.
 */
function openSandboxWorkdir(childPid: number, workspaceBytes: number): number {
  const candidates = [childPid, ...childrenOf(childPid)];
  let lastError: unknown;
  for (const pid of candidates) {
    let fd: number | undefined;
    try {
      fd = openSync(
        `/proc/${pid}/root${SANDBOX_WORKDIR}`,
        constants.O_RDONLY | constants.O_DIRECTORY,
      );
      const stats = statfsSync(`/proc/self/fd/${fd}`);
      const size = stats.blocks * stats.bsize;
      const page = 64 * 1024;
      if (stats.type !== TMPFS_MAGIC || Math.abs(size - workspaceBytes) > page) {
        throw new SandboxError("the sandbox's /work is not the tmpfs it should be");
      }
      return fd;
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      lastError = error;
    }
  }
  throw new SandboxError(
    `could not open the sandbox's workspace from outside: ${String((lastError as Error)?.message ?? lastError)}`,
  );
}

function signalName(code: number): NodeJS.Signals | null {
  for (const [name, number] of Object.entries(osConstants.signals)) {
    if (number === code) return name as NodeJS.Signals;
  }
  return null;
}

const MEMORY_FAILURE =
  /JavaScript heap out of memory|Allocation failed|Reached heap limit|Cannot allocate memory|std::bad_alloc|out of memory/i;

/**
 * Runs a command inside the sandbox and resolves with what happened. Rejects only when the run
 * could not be set up: SandboxUnavailableError (no usable bubblewrap), SandboxError (a bad
 * request, a setup failure), or the abort reason of a signal aborted before the start.
 */
export async function runSandboxed(request: SandboxRequest): Promise<SandboxResult> {
  if (request.signal?.aborted) throw request.signal.reason;
  const mode = request.mode ?? defaultSandboxMode();
  const limits = resolveLimits(request.limits);
  const secrets = secretValues();
  refuseSecrets(request, secrets);
  const command = findExecutable(request.command);
  if (command === undefined) {
    throw new SandboxError(`${request.command} is not an executable file on this machine`);
  }
  if (mode === "none") {
    return execute(unsandboxedPlan(request, command, limits), request, limits, secrets);
  }
  const host = await checkSandbox();
  return execute(bwrapPlan(host, request, command, limits), request, limits, secrets);
}

function unsandboxedPlan(
  request: SandboxRequest,
  command: string,
  limits: SandboxLimits,
): SpawnPlan {
  const prlimit = findExecutable("prlimit", ["/usr/bin", "/bin"]);
  const args = [...(request.args ?? [])];
  return prlimit === undefined
    ? { mode: "none", command, args, uid: undefined, files: [] }
    : {
        mode: "none",
        command: prlimit,
        // No RLIMIT_NPROC: on the host it counts every process of the user.
        args: [...prlimitArgs(limits, false), "--", command, ...args],
        uid: undefined,
        files: [],
      };
}

function execute(
  plan: SpawnPlan,
  request: SandboxRequest,
  limits: SandboxLimits,
  secrets: readonly string[],
): Promise<SandboxResult> {
  const sandboxed = plan.mode === "bwrap";
  const started = performance.now();
  const stdio: ("pipe" | "ignore" | number)[] = sandboxed
    ? ["pipe", "pipe", "pipe", "pipe", "pipe", "pipe", ...plan.files]
    : ["pipe", "pipe", "pipe", "pipe"];
  // Descriptors this process inherited without close-on-exec would reach the code inside:
  // each becomes /dev/null in the child instead.
  const leaked = inheritableFds().filter((fd) => fd >= stdio.length);
  let devNull: number | undefined;
  if (leaked.length > 0) {
    devNull = openSync("/dev/null", "r");
    const last = Math.max(...leaked);
    for (let fd = stdio.length; fd <= last; fd++) {
      stdio.push(leaked.includes(fd) ? devNull : "ignore");
    }
  }
  let child: ChildProcess;
  try {
    child = spawn(plan.command, plan.args, {
      cwd: sandboxed ? "/" : (request.workspace ?? tmpdir()),
      env: sandboxed ? {} : { ...request.env },
      stdio,
      // Its own process group, so a kill reaches everything it started.
      detached: true,
      windowsHide: true,
      ...(plan.uid === undefined ? {} : { uid: plan.uid, gid: plan.uid }),
    });
  } catch (error) {
    return Promise.reject(new SandboxError(`could not start ${plan.command}: ${String(error)}`));
  } finally {
    if (devNull !== undefined) closeSync(devNull);
    // The child has its own copies of the workspace's descriptors.
    for (const fd of plan.files) closeSync(fd);
  }

  return new Promise((resolve, reject) => {
    const keep = request.outputKeepChars ?? OUTPUT_KEEP_CHARS;
    const stdout = new TextCollector(keep);
    const stderr = new TextCollector(keep);
    let outputBytes = 0;
    let killedBy: SandboxKill | null = null;
    let go = !sandboxed; // the command has been let run
    let setupError: Error | undefined;
    let childPid: number | undefined;
    let workdirFd: number | undefined;
    let settled = false;

    let exited = false;
    child.once("exit", () => {
      exited = true;
    });
    const kill = (reason: SandboxKill | null) => {
      if (killedBy === null && reason !== null) killedBy = reason;
      // Once bwrap is gone, so is everything inside, and its pids may be someone else's.
      if (exited) return;
      const monitor = child.pid;
      // The namespace's init first (still bwrap's child, not a recycled pid): every process
      // inside dies with it. Then bwrap's process group.
      if (childPid !== undefined && monitor !== undefined && parentOf(childPid) === monitor) {
        signalQuietly(childPid);
      }
      if (monitor !== undefined) signalQuietly(-monitor);
      else child.kill("SIGKILL");
    };

    const wall = setTimeout(() => kill("wall"), limits.wallMs);
    const onAbort = () => kill("abort");
    request.signal?.addEventListener("abort", onAbort, { once: true });
    const memoryWatch =
      limits.residentBytes === undefined
        ? undefined
        : setInterval(() => {
            if (child.pid !== undefined && residentBytes(child.pid) > (limits.residentBytes ?? 0)) {
              kill("memory");
            }
          }, MEMORY_CHECK_MS);

    const onOutput = (collector: TextCollector) => (chunk: string) => {
      outputBytes += Buffer.byteLength(chunk);
      collector.add(chunk);
      if (outputBytes > limits.outputBytes) kill("output");
    };
    child.stdout?.setEncoding("utf8").on("data", onOutput(stdout));
    child.stderr?.setEncoding("utf8").on("data", onOutput(stderr));
    child.stdin?.on("error", () => {});
    child.stdin?.end(request.stdin ?? "");

    const channelSocket = child.stdio[3] as Duplex | null;
    channelSocket?.on("error", () => {});
    const channel = channelSocket
      ? new MessageChannel(channelSocket, request.onMessage, secrets, request.channelLimits)
      : undefined;

    if (sandboxed) {
      const pipes = child.stdio as unknown as (Duplex | null)[];
      const control = pipes[4] as Duplex;
      const info = pipes[5] as Readable;
      control.on("error", () => {});
      info.on("error", () => {});
      let infoText = "";
      info.setEncoding("utf8");
      info.on("data", (chunk: string) => {
        infoText += chunk;
      });
      // bwrap writes {"child-pid": N} (the host pid of the namespace's init), then closes it.
      const infoDone = new Promise<void>((done) => {
        const parse = () => {
          try {
            const pid = Number((JSON.parse(infoText) as { "child-pid"?: unknown })["child-pid"]);
            if (Number.isInteger(pid) && pid > 0) childPid = pid;
          } catch {
            // No pid: the setup failed, and the close says why.
          }
          done();
        };
        info.on("end", parse);
        info.on("close", parse);
      });
      let ready = false;
      control.on("data", async (chunk: Buffer) => {
        if (ready || !chunk.includes("R")) return;
        ready = true;
        await infoDone;
        // Killed (or gone) meanwhile: nothing to open, nothing to let run.
        if (settled || killedBy !== null) return;
        try {
          if (childPid === undefined) throw new SandboxError("bwrap gave no child pid");
          workdirFd = openSandboxWorkdir(childPid, limits.workspaceBytes);
          go = true;
          control.write("G\n");
        } catch (error) {
          setupError = error instanceof Error ? error : new SandboxError(String(error));
          kill(null);
        }
      });
    }

    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(wall);
      if (memoryWatch) clearInterval(memoryWatch);
      request.signal?.removeEventListener("abort", onAbort);
      channel?.close();
      let workspaceFull = false;
      let workspace: SyncReport | undefined;
      try {
        if (workdirFd !== undefined) {
          const path = `/proc/self/fd/${workdirFd}`;
          const stats = statfsSync(path);
          workspaceFull = stats.bavail === 0;
          if (request.workspace !== undefined) {
            workspace = syncBack(path, request.workspace, limits.workspaceBytes);
          }
        }
      } catch (error) {
        setupError ??= new SandboxError(
          `could not copy the sandbox's workspace back: ${String(error)}`,
        );
      } finally {
        if (workdirFd !== undefined) closeSync(workdirFd);
      }
      const err = stderr.result();
      if (!go && killedBy === null) {
        const reason = setupError?.message ?? (firstLine(err.text) || `exit code ${code}`);
        reject(
          setupError instanceof SandboxError && setupError.message === reason
            ? setupError
            : new SandboxError(`the sandbox did not start: ${reason}`),
        );
        return;
      }
      if (setupError) {
        reject(setupError);
        return;
      }
      let exitCode = code;
      let exitSignal = signal;
      // bwrap reports a command killed by signal N as exit code 128 + N.
      if (sandboxed && code !== null && code > 128 && code <= 128 + 64) {
        const name = signalName(code - 128);
        if (name) {
          exitCode = null;
          exitSignal = name;
        }
      }
      if (killedBy === null) {
        if (exitSignal === "SIGXCPU") killedBy = "cpu";
        else if (exitSignal === "SIGXFSZ") killedBy = "fsize";
        else if ((exitCode !== 0 || exitSignal !== null) && MEMORY_FAILURE.test(err.text)) {
          killedBy = "memory";
        }
      }
      resolve({
        mode: plan.mode,
        exitCode,
        signal: exitSignal,
        stdout: stdout.result(),
        stderr: err,
        timedOut: killedBy === "wall",
        killedBy,
        workspaceFull,
        workspace,
        messages: channel ? { ...channel.stats } : { received: 0, replied: 0, dropped: 0 },
        durationMs: Math.round(performance.now() - started),
      });
    };
    // "close" comes after every stdio stream has ended, so all output and messages are in.
    child.on("close", (code, signal) => finish(code, signal));
    child.on("error", (error) => {
      setupError = new SandboxError(`could not start ${plan.command}: ${error.message}`);
      finish(null, null);
    });
  });
}

let probe: Promise<SandboxHost> | undefined;

/**
 * Finds bubblewrap and what runs inside with it, then starts one sandbox to prove namespaces
 * work here; probes once per process and caches the answer (a failure too). Throws
 * SandboxUnavailableError with one line saying what to do.
 */
export function checkSandbox(): Promise<SandboxHost> {
  probe ??= probeHost();
  return probe;
}

/** Forgets the cached probe (tests, or after installing bubblewrap in a running process). */
export function resetSandboxCheck(): void {
  probe = undefined;
}

async function probeHost(): Promise<SandboxHost> {
  const override = process.env.CLADE_BWRAP;
  const bwrap =
    override !== undefined && override !== ""
      ? findExecutable(override)
      : findExecutable("bwrap", ["/usr/bin", "/usr/local/bin", "/bin"]);
  if (bwrap === undefined) {
    throw new SandboxUnavailableError(
      `clade runs untrusted code only inside bubblewrap (bwrap), which is not installed: ${INSTALL_HINT}`,
    );
  }
  const prlimit = findExecutable("prlimit", ["/usr/bin", "/bin"]);
  if (prlimit === undefined) {
    throw new SandboxUnavailableError(
      "clade's sandbox needs prlimit (util-linux), which is not installed: " +
        "install it with `apt-get install util-linux`",
    );
  }
  const sh = realPathOf("/bin/sh");
  const version = bwrapVersion(bwrap);
  const versionText = version ? version.join(".") : "unknown";
  const atLeast = (major: number, minor: number) =>
    version !== undefined && (version[0] > major || (version[0] === major && version[1] >= minor));
  const host: SandboxHost = {
    bwrap,
    version: versionText,
    sh,
    prlimit: realPathOf(prlimit),
    disableUserns: atLeast(0, 8),
    hostUid:
      typeof process.getuid === "function" && process.getuid() === 0 ? SANDBOX_UID : undefined,
  };
  try {
    const limits: SandboxLimits = {
      ...DEFAULT_SANDBOX_LIMITS,
      wallMs: 10_000,
      workspaceBytes: 1024 * 1024,
      tmpBytes: 1024 * 1024,
    };
    const request: SandboxRequest = { command: sh, args: ["-c", "exit 0"] };
    const result = await execute(bwrapPlan(host, request, sh, limits), request, limits, []);
    if (result.exitCode !== 0) {
      throw new SandboxError(
        firstLine(result.stderr.text) ||
          `the probe exited with ${result.exitCode ?? result.signal}`,
      );
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    let hint =
      "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu " +
      "also kernel.apparmor_restrict_unprivileged_userns=0; in a container, run it with " +
      "--security-opt seccomp=unconfined --security-opt apparmor=unconfined)";
    if (/Unknown option/i.test(message)) {
      hint = `bubblewrap ${versionText} is too old: install 0.6 or later (apt-get install bubblewrap)`;
    } else if (/Can't find source path|Permission denied/i.test(message)) {
      hint =
        `every bound file must be readable by uid ${SANDBOX_UID} when clade runs as root ` +
        "(install node and clade outside /root)";
    }
    throw new SandboxUnavailableError(
      `clade's sandbox (bubblewrap ${versionText}) cannot start here (${message.replace(/^the sandbox did not start: /, "")}): ${hint}; or set ${SANDBOX_MODE_VARIABLE}=none to run untrusted code without any sandbox, explicitly`,
    );
  }
  return host;
}
