/** `clade serve-env`: serve a built-in environment over AgentGym's HTTP protocol (and /v1). */
import { z } from "zod";
import { findEnv } from "../../env/registry.js";
import {
  agentgymTasksServedBy,
  defaultMaxInstancesPerClient,
  startEnvServer,
} from "../../serve/index.js";
import { type CliIo, startupUsageError, untilStopped } from "../io.js";
import { integerOption, parseOptions } from "../options.js";

const MAX_INSTANCES_LIMIT = 1_000_000;

const serveOptionsSchema = z
  .object({
    env: z.string().min(1, "is required"),
    host: z.string().min(1, "must not be empty"),
    port: integerOption(0, 65_535),
    maxInstances: integerOption(1, MAX_INSTANCES_LIMIT),
    /** Unset: half of --max-instances (the server's default share). */
    maxInstancesPerClient: integerOption(1, MAX_INSTANCES_LIMIT).optional(),
    idleTimeout: integerOption(1, 7 * 24 * 3600),
    /** Unset (embedding): the server's default. */
    evictIdleAfter: integerOption(0, 7 * 24 * 3600).optional(),
  })
  .superRefine((options, context) => {
    const perClient = options.maxInstancesPerClient;
    if (perClient !== undefined && perClient > options.maxInstances) {
      context.addIssue({
        code: "custom",
        path: ["maxInstancesPerClient"],
        message: `must be at most --max-instances (${options.maxInstances})`,
      });
    }
  });

/** Serves until SIGINT or SIGTERM, then shuts down gracefully. */
export async function serveEnvCommand(
  raw: z.input<typeof serveOptionsSchema>,
  io: CliIo,
): Promise<number> {
  const options = parseOptions(serveOptionsSchema, raw);
  const env = findEnv(options.env);
  let running: Awaited<ReturnType<typeof startEnvServer>>;
  try {
    running = await startEnvServer(env, {
      host: options.host,
      port: options.port,
      maxInstances: options.maxInstances,
      maxInstancesPerClient:
        options.maxInstancesPerClient ?? defaultMaxInstancesPerClient(options.maxInstances),
      idleTimeoutMs: options.idleTimeout * 1000,
      ...(options.evictIdleAfter === undefined
        ? {}
        : { evictIdleAfterMs: options.evictIdleAfter * 1000 }),
      // The server log: which instance was closed without being asked, and why.
      log: (line) => io.stderr(`${new Date().toISOString()} ${line}\n`),
    });
  } catch (error) {
    throw startupUsageError(error);
  }
  io.stderr(
    `serving ${env.info.name} v${env.info.version} at ${running.url} ` +
      `(AgentGym API at /, clade API at /v1); Ctrl-C stops\n`,
  );
  for (const task of agentgymTasksServedBy(env.info.name)) {
    io.stderr(`  AgentGym task "${task.name}" (${task.client}): ${running.url}/${task.name}\n`);
  }
  io.stdout(`${running.url}\n`);
  await untilStopped();
  io.stderr("shutting down: finishing requests in flight and closing instances\n");
  await running.close();
  return 0;
}
