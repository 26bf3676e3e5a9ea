/**
 * `npm run bench`: what the sandbox costs per evaluation (issue 10: "sandbox start per
 * evaluation against a plain node child process: ratio ≤ 1.5"). Each figure prints as one JSON
 * line with the median wall-clock time, from spawn to exit, of `node -e 0`:
 *
 * - sandbox_start_ms: inside the sandbox (runSandboxed, default limits, empty /work), against
 *   the baseline, a plain `node -e 0` child process with an empty environment (the parent's
 *   environment would make node load extra CA certificates and cost more: not a fair baseline);
 * - sandbox_start_workspace_ms: the same with a workspace of 20 small files copied in and
 *   mirrored back, as an evaluation of an agent folder would;
 * - sandbox_fixed_cost_ms: `/bin/sh -c "exit 0"` inside the sandbox, against the same outside:
 *   namespaces, mounts, the handshake and prlimit, without node's own start-up.
 *
 * Rounds are interleaved so that drift in machine load affects all alike; warm-up rounds first.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkSandbox, runSandboxed, type SandboxRequest } from "../src/sandbox/index.js";

const ROUNDS = 40;
const WARMUP = 3;
const TARGET_RATIO = 1.5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** Milliseconds from spawn to close of a plain child process. */
function plain(command: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { env: {}, stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.end();
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${command} exited ${code}`));
      else resolve(performance.now() - start);
    });
  });
}

/** Milliseconds of one sandboxed run. */
async function sandboxed(request: SandboxRequest): Promise<number> {
  const start = performance.now();
  const result = await runSandboxed(request);
  const ms = performance.now() - start;
  if (result.exitCode !== 0) {
    throw new Error(`the sandboxed run failed: ${JSON.stringify(result)}`);
  }
  return ms;
}

try {
  await checkSandbox();
} catch (error) {
  process.stderr.write(`bench/sandbox-start: ${(error as Error).message}\n`);
  process.exit(1);
}

const workspace = mkdtempSync(join(tmpdir(), "clade-bench-sandbox-"));
for (let i = 0; i < 20; i++) writeFileSync(join(workspace, `file${i}.ts`), "x".repeat(2000));
const node = process.execPath;
const cases: Record<string, () => Promise<number>> = {
  baseline: () => plain(node, ["-e", "0"]),
  sandbox: () => sandboxed({ command: node, args: ["-e", "0"] }),
  workspace: () => sandboxed({ command: node, args: ["-e", "0"], workspace }),
  shBaseline: () => plain("/bin/sh", ["-c", "exit 0"]),
  sh: () => sandboxed({ command: "/bin/sh", args: ["-c", "exit 0"] }),
};
const samples: Record<string, number[]> = Object.fromEntries(
  Object.keys(cases).map((name) => [name, [] as number[]]),
);
try {
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const [name, run] of Object.entries(cases)) {
      const ms = await run();
      if (round >= WARMUP) samples[name]?.push(ms);
    }
  }
} finally {
  rmSync(workspace, { recursive: true, force: true });
}

const figure = (name: string, what: string, value: number, baseline: number, base: string) => {
  const ratio = value / baseline;
  return {
    name,
    command: what,
    value: Number(value.toFixed(1)),
    unit: "ms, median wall clock",
    ratio: Number(ratio.toFixed(2)),
    baseline: Number(baseline.toFixed(1)),
    baseline_unit: base,
    overhead_ms: Number((value - baseline).toFixed(1)),
    runs: ROUNDS,
  };
};
const m = (name: string) => median(samples[name] ?? []);
const nodeBase = "ms, plain `node -e 0` child process, empty environment";
const start = figure(
  "sandbox_start_ms",
  "node -e 0 in the sandbox",
  m("sandbox"),
  m("baseline"),
  nodeBase,
);
const lines = [
  { ...start, target: `ratio <= ${TARGET_RATIO}`, pass: start.ratio <= TARGET_RATIO },
  figure(
    "sandbox_start_workspace_ms",
    "node -e 0 in the sandbox, 20-file workspace copied in and back",
    m("workspace"),
    m("baseline"),
    nodeBase,
  ),
  figure(
    "sandbox_fixed_cost_ms",
    'sh -c "exit 0" in the sandbox',
    m("sh"),
    m("shBaseline"),
    'ms, plain `sh -c "exit 0"` child process',
  ),
];
for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`);
