/**
 * `clade doctor`: what this machine can run. The sandbox is needed for every piece of untrusted
 * code; the blade environment's runtimes are the embedded SQL engine (always there after
 * `npm ci`) and Python with pandas and statsmodels (needed for BLADE's own datasets).
 */
import { runtimeAvailability } from "../../env/blade/runtime/availability.js";
import type { CliIo } from "../io.js";
import { renderTable } from "../table.js";

interface Check {
  name: string;
  ok: boolean;
  /** Whether clade can work without it (some capabilities then refuse to start). */
  required: boolean;
  detail: string;
  needed: string;
}

export async function doctorCommand(options: { json?: boolean }, io: CliIo): Promise<number> {
  const runtimes = await runtimeAvailability();
  const [major] = process.versions.node.split(".").map(Number);
  const checks: Check[] = [
    {
      name: "node",
      ok: (major ?? 0) >= 20,
      required: true,
      detail: `Node ${process.versions.node}`,
      needed: "everything (Node 20 or later)",
    },
    {
      name: "sandbox",
      ok: runtimes.sandbox.ok,
      required: true,
      detail: runtimes.sandbox.detail,
      needed: "agent folders, the coding env's tests, search, blade analyses",
    },
    {
      name: "blade sql",
      ok: runtimes.sql.ok,
      required: true,
      detail: runtimes.sql.detail,
      needed: "the blade env on clade's datasets, clade demo",
    },
    {
      name: "blade python",
      ok: runtimes.python.ok,
      required: false,
      detail: runtimes.python.detail,
      needed: "the blade env on BLADE's datasets (--blade-dir), --runtime python",
    },
  ];
  const missing = checks.filter((c) => c.required && !c.ok);
  if (options.json) {
    io.stdout(
      `${JSON.stringify({ schema: "clade.doctor/1", ok: missing.length === 0, checks })}\n`,
    );
  } else {
    io.stdout(
      renderTable(
        ["check", "status", "what it found", "needed for"],
        checks.map((c) => [
          c.name,
          c.ok ? "ok" : c.required ? "MISSING" : "missing",
          c.detail,
          c.needed,
        ]),
      ),
    );
  }
  return missing.length === 0 ? 0 : 1;
}
