/**
 * The fake model server in a child process, for the benchmarks that measure a client: the server's
 * work then does not share the measured thread. `rule` is the source text of a FakeRule (it runs
 * in the child), `latencyMs` the fixed delay before every reply.
 */
import { type ChildProcess, spawn } from "node:child_process";

export function startFakeServerChild(
  latencyMs: number,
  rule: string,
): Promise<{ child: ChildProcess; baseUrl: string }> {
  const script = `
    import { startFakeModelServer } from "${new URL("../dist/testing/index.js", import.meta.url).href}";
    const server = await startFakeModelServer({ latencyMs: ${latencyMs}, rule: ${rule} });
    process.stdout.write(server.openaiBaseUrl + "\\n");
    process.on("SIGTERM", async () => { await server.close(); process.exit(0); });
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.once("data", (data: Buffer) =>
      resolve({ child, baseUrl: data.toString().trim() }),
    );
    child.once("exit", (code) => reject(new Error(`fake server exited with ${code}`)));
  });
}
