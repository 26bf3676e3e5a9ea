/** The `clade` command line. */
import { Command, CommanderError, Option } from "commander";
import { UnknownAgentError } from "../agent/registry.js";
import { UnknownEnvError } from "../env/registry.js";
import { RemoteEnvError } from "../env/remote/index.js";
import { TaskRangeError } from "../eval/task-range.js";
import { ConfigError } from "../model/config.js";
import { MissingKeyError } from "../model/resolve.js";
import { ModelSpecError } from "../model/spec.js";
import { StoreError } from "../store/database.js";
import { compareCommand } from "./commands/compare.js";
import { costCommand } from "./commands/cost.js";
import { demoCommand } from "./commands/demo.js";
import { envsCommand } from "./commands/envs.js";
import { evalCommand } from "./commands/eval.js";
import { exportCommand } from "./commands/export.js";
import { modelsCommand } from "./commands/models.js";
import { runsCommand, showCommand } from "./commands/runs.js";
import { serveEnvCommand } from "./commands/serve-env.js";
import { type CliIo, processIo, UsageError } from "./io.js";
import { DEFAULT_DB } from "./options.js";

/** Errors caused by what the user asked for: one line, exit code 2. */
const USER_ERRORS = [
  UsageError,
  StoreError,
  UnknownEnvError,
  UnknownAgentError,
  TaskRangeError,
  ConfigError,
  ModelSpecError,
  MissingKeyError,
  RemoteEnvError,
];

function buildProgram(io: CliIo, setExit: (code: number) => void): Command {
  const program = new Command()
    .name("clade")
    .description("Environments, agents, evaluation and improvement for LLM agents")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      // Commander's own usage errors read like ours: "clade: error: ...".
      outputError: (text, write) => write(`clade: ${text}`),
    })
    .showSuggestionAfterError();
  const dbOption = () =>
    new Option("--db <path>", "SQLite store").default(process.env.CLADE_DB ?? DEFAULT_DB);

  program
    .command("envs")
    .description("list the built-in environments")
    .option("--json", "machine-readable output")
    .action((opts) => setExit(envsCommand(opts, io)));

  program
    .command("eval")
    .description("evaluate an agent on an environment (resumable with the same --run-id)")
    .requiredOption("--env <name>", "environment (see: clade envs)")
    .option(
      "--agent <name>",
      "agent: reference | random | react | tools (default: react with --model, else reference)",
    )
    .option("--tasks <range>", 'task indices, e.g. 0-99, 0-9,20, "test" or "train"', "test")
    .option("--samples <k>", "samples per task", "1")
    .option("--concurrency <n>", "episodes in flight at once", "8")
    .option("--max-turns <n>", "turn limit per episode (default: the env's step limit)")
    .option("--timeout <seconds>", "wall-clock limit per episode", "300")
    .option("--seed <n>", "seed passed to every reset; agents derive theirs from it", "0")
    .option("--run-id <id>", "name of the run; reuse it to resume")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .option("--quiet", "no progress bar")
    .option(
      "--model <spec>",
      "model for react/tools: openai:NAME, anthropic:NAME, openai-compatible:URL#NAME, or a clade.config name",
    )
    .option("--config <path>", "config file (default: clade.config.json or .ts here)")
    .option("--cache <mode>", "response cache: off | read | write | rw", "rw")
    .option("--budget-usd <dollars>", "stop starting episodes once this much is spent")
    .option("--temperature <t>", "sampling temperature")
    .option("--max-tokens <n>", "reply length limit")
    .option("--history <turns>", "past turns kept in the prompt (default: all)")
    .option("--system-prompt <text>", "system prompt for the LLM agent")
    .option(
      "--env-url <url>",
      "evaluate an environment served over HTTP (clade serve-env or AgentGym)",
    )
    .option("--dialect <dialect>", "protocol of --env-url: id | env_idx | clade", "id")
    .option(
      "--env-path <prefix>",
      "path of the environment on the server, e.g. /maze (default: the root)",
    )
    .option(
      "--task-field <name>",
      "field that carries the task index on reset (AgentGym Maze: game, Wordle: seed)",
    )
    .option("--create-body <json>", "extra JSON fields sent to /create")
    .action(async (opts) => setExit(await evalCommand(opts, io)));

  program
    .command("runs")
    .description("list stored runs")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action((opts) => setExit(runsCommand(opts, io)));

  program
    .command("show")
    .description("metrics of one run")
    .argument("<run>", "run id")
    .addOption(dbOption())
    .option("--episodes", "list every episode too")
    .option("--episode <n>", "one episode turn by turn: TASK/SAMPLE (e.g. 3/0) or its id")
    .option("--json", "machine-readable output")
    .action((run, opts) => setExit(showCommand(run, opts, io)));

  program
    .command("compare")
    .description("two runs side by side: metrics, B - A over shared tasks, tasks that changed")
    .argument("<run-a>", "run id (A, the baseline)")
    .argument("<run-b>", "run id (B)")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action((a, b, opts) => setExit(compareCommand(a, b, opts, io)));

  program
    .command("export")
    .description("export a run's trajectories (errored episodes are left out)")
    .argument("<run>", "run id")
    .requiredOption("--format <format>", "agenttraj | chat")
    .option("--out <file>", "write to a file instead of stdout")
    .option("--success-only", "only successful episodes")
    .addOption(dbOption())
    .action((run, opts) => setExit(exportCommand(run, opts, io)));

  program
    .command("serve-env")
    .description("serve an environment over AgentGym's HTTP protocol (for AgentGym / AgentGym-RL)")
    .requiredOption("--env <name>", "environment (see: clade envs)")
    .option("--host <host>", "address to bind (loopback unless told otherwise)", "127.0.0.1")
    .option("--port <port>", "port (0 = any free port)", "36001")
    .option("--max-instances <n>", "environment instances alive at once", "1024")
    .option(
      "--max-instances-per-client <n>",
      "instances one client (remote address) may hold; beyond it /create answers 429 " +
        "(default: half of --max-instances)",
    )
    .option("--idle-timeout <seconds>", "close instances unused this long", "600")
    .addHelpText(
      "after",
      "\nInstance ids are random integers in [2^31, 2^53), unguessable: holding an id is what\n" +
        "lets a client use its instance. A client is a remote address (all local processes are\n" +
        "one). /create answers 503 + Retry-After when the server is full and 429 + Retry-After\n" +
        "when the client holds its share; clade's and AgentGym-RL's clients retry both.\n",
    )
    .action(async (opts) => setExit(await serveEnvCommand(opts, io)));

  program
    .command("models")
    .description("configured models and whether their API keys are set")
    .option("--config <path>", "config file (default: clade.config.json or .ts here)")
    .option("--json", "machine-readable output")
    .action(async (opts) => setExit(await modelsCommand(opts, io)));

  program
    .command("cost")
    .description("tokens, cost and latency of a run's model calls, by model")
    .argument("<run>", "run id")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action((run, opts) => setExit(costCommand(run, opts, io)));

  program
    .command("demo")
    .description("offline demo: reference and random agents on every built-in environment")
    .option("--db <path>", "keep the demo runs in this store (default: a temporary one)")
    .option("--json", "machine-readable output")
    .action(async (opts) => setExit(await demoCommand(opts, io)));

  return program;
}

/** Runs the CLI and returns the exit code (never calls process.exit). */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let code = 0;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; commander has already printed its one-line usage error.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (USER_ERRORS.some((type) => error instanceof type)) {
      io.stderr(`clade: error: ${(error as Error).message}\n`);
      return 2;
    }
    // A bug of clade's, still one line unless asked for the stack (CLADE_DEBUG=1).
    const detail =
      error instanceof Error
        ? process.env.CLADE_DEBUG
          ? (error.stack ?? error.message)
          : `${error.message.split("\n")[0]} (CLADE_DEBUG=1 shows the stack)`
        : String(error);
    io.stderr(`clade: internal error: ${detail}\n`);
    return 1;
  }
}
