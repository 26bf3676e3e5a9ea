/**
 * Env-server load on loopback: 256 concurrent maze instances, each created, reset and stepped a
 * fixed number of times through AgentGym's "id" API. Requests/s, p50 and p99 latency and errors,
 * with requests/s as a ratio of a bare node:http server answering a constant JSON under the same
 * load in the same run. Target (issue 4): ratio ≥ 0.5 with 0 errors. Each server runs in its own
 * child process; the load generator is this process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";

const INSTANCES = 256;
const STEPS_PER_INSTANCE = 40;
const TARGET_RATIO = 0.5;
const MOVES = ["move up", "move down", "move left", "move right"];

const BARE_SERVER = `
  import http from "node:http";
  const body = JSON.stringify({ observation: "You moved up.", reward: 0, done: false });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.stdout.write("http://127.0.0.1:" + server.address().port + "\\n"));
`;

const CLADE_SERVER = `
  import { findEnv, startEnvServer } from "${new URL("../dist/index.js", import.meta.url).href}";
  const running = await startEnvServer(findEnv("maze"), { maxInstances: 100000, keepAliveTimeoutMs: 60000 });
  process.stdout.write(running.url + "\\n");
`;

function startChild(script: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.once("data", (data: Buffer) => resolve({ child, url: data.toString().trim() }));
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: INSTANCES });

function post(
  url: string,
  path: string,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}${path}`,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) },
      },
      (response) => {
        let data = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => {
          data += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, json: JSON.parse(data) }),
        );
      },
    );
    request.on("error", reject);
    request.end(text);
  });
}

interface LoadResult {
  requests: number;
  seconds: number;
  latencies: number[];
  errors: number;
}

/** Each of INSTANCES clients: create, reset, then STEPS_PER_INSTANCE steps, one at a time. */
async function load(url: string): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const timed = async (path: string, body: unknown) => {
    const start = performance.now();
    try {
      const { status, json } = await post(url, path, body);
      if (status !== 200 || (json && typeof json === "object" && "error" in json)) errors++;
      return json as Record<string, unknown>;
    } catch {
      errors++;
      return {};
    } finally {
      latencies.push(performance.now() - start);
    }
  };
  const start = performance.now();
  await Promise.all(
    Array.from({ length: INSTANCES }, async (_, client) => {
      const created = await timed("/create", {});
      const id = created.id ?? 0;
      await timed("/reset", { id, data_idx: client % 100 });
      for (let step = 0; step < STEPS_PER_INSTANCE; step++) {
        const result = await timed("/step", { id, action: MOVES[(client + step) % 4] });
        // An episode that ended (goal or step limit) starts again, as a trainer would.
        if (result.done === true) await timed("/reset", { id, data_idx: client % 100 });
      }
      await timed("/close", { id });
    }),
  );
  return {
    requests: latencies.length,
    seconds: (performance.now() - start) / 1000,
    latencies,
    errors,
  };
}

/** CPU seconds a process has used so far (Linux /proc, in clock ticks of 10 ms). */
function cpuSeconds(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One load run, with the server's CPU time per request (what the server itself costs). */
async function measure(server: { child: ChildProcess; url: string }) {
  const before = cpuSeconds(server.child.pid);
  const result = await load(server.url);
  const cpuPerRequestUs = ((cpuSeconds(server.child.pid) - before) * 1e6) / result.requests;
  return { ...result, cpuPerRequestUs };
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

const bare = await startChild(BARE_SERVER);
const clade = await startChild(CLADE_SERVER);
try {
  await load(bare.url); // warm-up: connections, JIT
  await load(clade.url);
  const baseline = await measure(bare);
  const measured = await measure(clade);
  const baselineRate = baseline.requests / baseline.seconds;
  const rate = measured.requests / measured.seconds;
  const line = (figure: Record<string, unknown>) =>
    process.stdout.write(`${JSON.stringify(figure)}\n`);
  const common = {
    baseline: Math.round(baselineRate),
    baseline_unit: "requests/s, bare node:http",
  };
  line({
    name: "env_server_requests_per_second",
    value: Math.round(rate),
    unit: "requests/s",
    ratio: Number((rate / baselineRate).toFixed(3)),
    ...common,
    target: `ratio >= ${TARGET_RATIO}, 0 errors`,
    pass: rate / baselineRate >= TARGET_RATIO && measured.errors === 0,
  });
  for (const [name, q] of [
    ["p50", 0.5],
    ["p99", 0.99],
  ] as const) {
    const value = percentile(measured.latencies, q);
    const base = percentile(baseline.latencies, q);
    line({
      name: `env_server_latency_${name}`,
      value: Number(value.toFixed(2)),
      unit: "ms",
      ratio: Number((value / base).toFixed(3)),
      baseline: Number(base.toFixed(2)),
      baseline_unit: `ms, bare node:http ${name}`,
    });
  }
  // With both servers in reach of the load generator's limit, requests/s says little about the
  // server; its CPU per request does.
  line({
    name: "env_server_cpu_per_request",
    value: Math.round(measured.cpuPerRequestUs),
    unit: "µs CPU per request (server process)",
    ratio: Number((measured.cpuPerRequestUs / baseline.cpuPerRequestUs).toFixed(3)),
    baseline: Math.round(baseline.cpuPerRequestUs),
    baseline_unit: "µs CPU per request, bare node:http",
  });
  line({
    name: "env_server_errors",
    value: measured.errors,
    unit: "requests",
    ratio: 0,
    baseline: baseline.errors,
    baseline_unit: "errors, bare node:http",
    target: "0",
    pass: measured.errors === 0,
  });
} finally {
  bare.child.kill();
  clade.child.kill();
  agent.destroy();
}
