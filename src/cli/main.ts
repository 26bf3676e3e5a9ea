/**
 * The `clade` command line. Its static imports stay light (commander and a few error classes):
 * each command's module, and with it SQLite, zod, the environments or the model SDKs, is
 * imported when that command runs, so `clade envs` or `clade --help` start in well under 300 ms
 * (bench/startup.ts measures it).
 */
import { Command, CommanderError, Option } from "commander";
import { UnknownAgentError } from "../agent/errors.js";
import { UnknownEnvError } from "../env/errors.js";
import { TaskRangeError } from "../eval/task-range.js";
import { ConfigError } from "../model/errors.js";
import { MissingKeyError } from "../model/resolve.js";
import { ModelSpecError } from "../model/spec.js";
import { StoreError } from "../store/errors.js";
import { type CliIo, DEFAULT_DB, errorJson, processIo, UsageError, wantsJson } from "./io.js";

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
];

/**
 * Whether an error is the user's to fix. RemoteEnvError's module loads node:http and the blade
 * errors' modules zod and csv-parse, so they are only imported when an error needs classifying
 * (a command that throws one has loaded it already).
 */
async function isUserError(error: unknown): Promise<boolean> {
  if (USER_ERRORS.some((type) => error instanceof type)) return true;
  const { RemoteEnvError } = await import("../env/remote/errors.js");
  if (error instanceof RemoteEnvError) return true;
  const { BLADE_INPUT_ERRORS } = await import("../env/blade/errors.js");
  return BLADE_INPUT_ERRORS.some((type) => error instanceof type);
}

function buildProgram(io: CliIo, setExit: (code: number) => void, json: boolean): Command {
  const program = new Command()
    .name("clade")
    .description("Environments, agents, evaluation and improvement for LLM agents")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      // Commander's own usage errors read like ours: "clade: error: ...". With --json, main()
      // writes them as one clade.error/1 line instead.
      outputError: (text, write) => {
        if (!json) write(`clade: ${text}`);
      },
    })
    .showSuggestionAfterError();
  const dbOption = () =>
    new Option("--db <path>", "SQLite store").default(process.env.CLADE_DB ?? DEFAULT_DB);

  program
    .command("envs")
    .description("list the built-in environments")
    .option("--json", "machine-readable output")
    .action(async (opts) => {
      const { envsCommand } = await import("./commands/envs.js");
      setExit(envsCommand(opts, io));
    });

  program
    .command("doctor")
    .description("check what this machine can run: the sandbox and the blade runtimes")
    .option("--json", "machine-readable output")
    .action(async (opts) => {
      const { doctorCommand } = await import("./commands/doctor.js");
      setExit(await doctorCommand(opts, io));
    });

  program
    .command("eval")
    .description(
      "evaluate an agent on an environment, or run named evals from clade.config (resumable)",
    )
    .argument("[evals...]", "names of evals in clade.config (instead of --env)")
    .option("--env <name|path>", "environment: a name (see: clade envs) or a module (./my-env.ts)")
    .option(
      "--agent <name|path>",
      "agent: reference | random | react | tools, a module (./my-agent.ts) or folder, or a trained policy (policy:FILE.safetensors) (default: react with --model, else reference)",
    )
    .option("--tasks <range>", 'task indices, e.g. 0-99, 0-9,20, "test" or "train" (default: test)')
    .option("--limit <n>", "only the first N tasks of the selection")
    .option("--samples <k>", "samples per task (default: 1)")
    .option("--concurrency <n>", "episodes in flight at once (default: 8)")
    .option("--max-turns <n>", "turn limit per episode (default: the env's step limit)")
    .option("--timeout <seconds>", "wall-clock limit per episode (default: 300)")
    .option("--seed <n>", "seed passed to every reset; agents derive theirs from it (default: 0)")
    .option("--run-id <id>", "name of the run; reuse it to resume (with eval names: the id prefix)")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .option("--quiet", "no progress bar")
    .option(
      "--model <spec>",
      "model for react/tools or an agent module: openai:NAME, anthropic:NAME, openai-compatible:URL#NAME, or a clade.config name",
    )
    .option(
      "--user-model <spec>",
      "helpdesk only: a model phrases the simulated employee's messages (spec as for --model); its calls count toward the run's cost",
    )
    .option(
      "--blade-dir <dir>",
      "blade only: a checkout of BLADE's datasets (one folder each with data.csv, info.json, annotations.csv)",
    )
    .option(
      "--runtime <name>",
      "blade only: where analyses run: sql (embedded DuckDB) | python (pandas, statsmodels) (default: sql for clade's datasets, python for --blade-dir)",
    )
    .option("--config <path>", "config file (default: clade.config.json or .ts here)")
    .option("--cache <mode>", "response cache: off | read | write | rw (default: rw)")
    .option("--budget-usd <dollars>", "stop starting episodes once this much is spent")
    .option(
      "--sandbox <mode>",
      "where untrusted code (agent folders, the coding env's tests) runs: bwrap (default) | " +
        "none (no sandbox; recorded in the run)",
    )
    .option(
      "--fail-on-error <n>",
      "stop the run once N episodes in a row end in the same error; 0 = never (default: 5)",
    )
    .option("--temperature <t>", "sampling temperature")
    .option("--max-tokens <n>", "reply length limit")
    .option("--history <turns>", "past turns kept in the prompt (default: all)")
    .option("--system-prompt <text>", "system prompt for the LLM agent")
    .option(
      "--env-url <url>",
      "evaluate an environment served over HTTP (clade serve-env or AgentGym)",
    )
    .option("--dialect <dialect>", "protocol of --env-url: id | env_idx | clade (default: id)")
    .option(
      "--env-path <prefix>",
      "path of the environment on the server, e.g. /maze (default: the root)",
    )
    .option(
      "--task-field <name>",
      "field that carries the task index on reset (AgentGym Maze: game, Wordle: seed)",
    )
    .option("--create-body <json>", "extra JSON fields sent to /create")
    .option(
      "--send <what>",
      "what the react agent passes to the env: action (the text after Action:) | reply (the whole reply, which AgentGym's tool servers parse) (default: reply for AgentGym's tool servers under --dialect env_idx, else action)",
    )
    .addHelpText(
      "after",
      "\nWith names (clade eval NAME...), the named evals of clade.config run, each env x model a\n" +
        "run of its own (id NAME-ENV-MODEL), then a combined table; options given here override\n" +
        "the eval's values. --config PATH says which config file.\n",
    )
    .action(async (evals, opts) => {
      const { evalCommand } = await import("./commands/eval.js");
      setExit(await evalCommand(evals, opts, io));
    });

  program
    .command("runs")
    .description("list stored runs")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action(async (opts) => {
      const { runsCommand } = await import("./commands/runs.js");
      setExit(runsCommand(opts, io));
    });

  program
    .command("show")
    .description("metrics of one run")
    .argument("<run>", "run id")
    .addOption(dbOption())
    .option("--episodes", "list every episode too")
    .option("--episode <n>", "one episode turn by turn: TASK/SAMPLE (e.g. 3/0) or its id")
    .option("--json", "machine-readable output")
    .action(async (run, opts) => {
      const { showCommand } = await import("./commands/runs.js");
      setExit(await showCommand(run, opts, io));
    });

  program
    .command("compare")
    .description("two runs side by side: metrics, B - A over shared tasks, tasks that changed")
    .argument("<run-a>", "run id (A, the baseline)")
    .argument("<run-b>", "run id (B)")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action(async (a, b, opts) => {
      const { compareCommand } = await import("./commands/compare.js");
      setExit(compareCommand(a, b, opts, io));
    });

  program
    .command("export")
    .description("export a run's trajectories (errored episodes are left out)")
    .argument("<run>", "run id")
    .requiredOption("--format <format>", "agenttraj | chat")
    .option("--out <file>", "write to a file instead of stdout")
    .option("--success-only", "only successful episodes")
    .option(
      "--item-ids <style>",
      "agenttraj item ids: agentgym (AgentGym's task names: lmrlgym_maze_3, sqlgym_3, babyai_3) | clade (maze_3) (default: agentgym)",
    )
    .addOption(dbOption())
    .action(async (run, opts) => {
      const { exportCommand } = await import("./commands/export.js");
      setExit(exportCommand(run, opts, io));
    });

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
    .option("--idle-timeout <seconds>", "close instances unused this long", "86400")
    .option(
      "--evict-idle-after <seconds>",
      "when /create needs room, close the least recently used instance unused this long " +
        "(a finished episode's after 1 s)",
      "60",
    )
    .addHelpText(
      "after",
      "\nInstance ids are random integers in [2^31, 2^53), unguessable: holding an id is what\n" +
        "lets a client use its instance. A client is a remote address (all local processes are\n" +
        "one). /create answers 503 + Retry-After when the server is full and 429 + Retry-After\n" +
        "when the client holds its share and no instance can be evicted; clade's and\n" +
        "AgentGym-RL's clients retry both. AgentGym clients: use <url>/<AgentGym task name>\n" +
        "(babyai, textcraft, maze, wordle, sqlgym, todo; see docs/agentgym.md).\n",
    )
    .action(async (opts) => {
      const { serveEnvCommand } = await import("./commands/serve-env.js");
      setExit(await serveEnvCommand(opts, io));
    });

  program
    .command("models")
    .description("configured models and whether their API keys are set")
    .option("--config <path>", "config file (default: clade.config.json or .ts here)")
    .option("--json", "machine-readable output")
    .action(async (opts) => {
      const { modelsCommand } = await import("./commands/models.js");
      setExit(await modelsCommand(opts, io));
    });

  program
    .command("cost")
    .description("tokens, cost and latency of a run's model calls, by model")
    .argument("<run>", "run id")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action(async (run, opts) => {
      const { costCommand } = await import("./commands/cost.js");
      setExit(costCommand(run, opts, io));
    });

  program
    .command("demo")
    .description("offline demo: reference and random agents on every built-in environment")
    .option("--db <path>", "keep the demo runs in this store (default: a temporary one)")
    .option("--json", "machine-readable output")
    .action(async (opts) => {
      const { demoCommand } = await import("./commands/demo.js");
      setExit(await demoCommand(opts, io));
    });

  program
    .command("init-agent")
    .description("write a starting agent folder (a ReAct agent in TypeScript) into DIR")
    .argument("<dir>", "the folder to create (it must not exist or be empty)")
    .option("--name <name>", "the agent's name (default: the folder's name)")
    .option("--json", "machine-readable output")
    .action(async (dir, opts) => {
      const { initAgentCommand } = await import("./commands/init-agent.js");
      setExit(initAgentCommand(dir, opts, io));
    });

  program
    .command("train")
    .description("train the embedded policy by multi-turn RL (resumable; clade curves RUN)")
    .requiredOption("--env <name>", "the environment (its train split is trained on)")
    .option("--algo <name>", "ppo (default), grpo, rloo, reinforce++ or remax")
    .option(
      "--schedule <spec>",
      "horizons: fixed:H, scaling:10,20,30@100, custom:5x40,10x60,20 (default: scaling:16,32,64@15)",
    )
    .option("--steps <n>", "training steps (default: 100)")
    .option("--group <n>", "samples per task (default: 8)")
    .option("--batch <n>", "tasks per step (default: 16)")
    .option("--epochs <n>", "passes over each step's batch (default: 2)")
    .option("--lr <x>", "Adam's step size (default: 0.003)")
    .option(
      "--novelty-bonus <x>",
      "intrinsic reward per newly seen state in a failed episode, 0 to turn off (default: 0.02)",
    )
    .option("--seed <n>", "fixes the weights, the batches and every sampled action (default: 0)")
    .option("--checkpoint-every <k>", "steps between checkpoints (default: 10)")
    .option(
      "--eval-every <k>",
      "greedy evaluation on the test split every K steps (default: never)",
    )
    .requiredOption("--run-id <id>", "the run's id; the same command resumes it")
    .option("--dir <dir>", "checkpoints and the final policy (default: .clade/train/<run-id>)")
    .option("--out <file>", "also write the final policy to this safetensors file")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .option("--quiet", "no progress lines")
    .action(async (opts) => {
      const { trainCommand } = await import("./commands/train.js");
      setExit(await trainCommand(opts, io));
    });

  program
    .command("rollouts")
    .description(
      "collect RL rollouts with a trained policy and write them with their advantages for an outside trainer",
    )
    .requiredOption("--env <name>", "the environment")
    .option("--policy <file>", "the policy (safetensors) to play, as written by clade train")
    .option("--model <spec>", "or an LLM (e.g. openai:NAME with OPENAI_BASE_URL at a vLLM server)")
    .option("--config <file>", "clade.config with the model's settings (--model)")
    .option("--temperature <t>", "the LLM's sampling temperature (default: 1)")
    .option("--token-ids", "ask a vLLM server for token ids too (--model)")
    .option(
      "--tasks <range>",
      "task indices, e.g. 0-15 or 1,2,3 (default: the train split's first 16)",
    )
    .option("--group <n>", "samples per task (default: 8)")
    .option("--horizon <n>", "agent turns per sample at most (default: the env's step limit)")
    .option("--algo <name>", "whose advantages: grpo, ppo (default), rloo, reinforce++ or remax")
    .option("--seed <n>", "fixes every sampled action (default: 0)")
    .requiredOption("--format <format>", "agenttraj | chat")
    .requiredOption("--out <file>", "the file to write (whole or not at all)")
    .option("--item-ids <style>", "agenttraj item ids: agentgym (default) | clade")
    .option("--novelty-bonus <x>", "the trainer's novelty bonus in the advantages (default: 0)")
    .option("--json", "machine-readable output")
    .action(async (opts) => {
      const { rolloutsCommand } = await import("./commands/rollouts.js");
      setExit(await rolloutsCommand(opts, io));
    });

  program
    .command("evolve")
    .description(
      "self-improvement search (HGM, DGM, greedy, random) over an agent folder, training branches of a policy, or a simulation",
    )
    .option(
      "--simulate <scenario>",
      "a simulated process: trap, mismatch-mild, mismatch, mismatch-strong, steady, or a JSON file",
    )
    .option(
      "--method <list>",
      "hgm, dgm, greedy, random, comma-separated (default: all four; hgm with --run-id)",
    )
    .option("--seeds <n>", "compare over seeds 0..N-1 (default: 100)")
    .option("--budget <T>", "evaluations of non-root agents (default: 800)")
    .option("--workers <W>", "work in flight at once (default: 1)")
    .option("--run-id <id>", "store one search under this id; the same command resumes it")
    .option("--seed <n>", "with --run-id: the search's seed (default: 0)")
    .option("--budget-usd <dollars>", "with --run-id: stop dispatching once this much is spent")
    .option("--latency-ms <ms>", "with --run-id: real time each simulated piece of work takes")
    .option(
      "--agent <dir>",
      "search over this agent folder's self-modifications (clade init-agent)",
    )
    .option(
      "--policy <file>",
      "search over training branches of this policy (safetensors, as clade train writes it)",
    )
    .option(
      "--dir <dir>",
      "with --policy: where the branches' weights go (default: .clade/evolve/<run-id>, beside the store)",
    )
    .option("--env <name>", "with --agent or --policy: the environment agents are evaluated on")
    .option(
      "--tasks <spec>",
      "with --agent or --policy: the tasks evaluations draw from (default: test)",
    )
    .option("--model <spec>", "with --agent: the model the agents use")
    .option("--modify-model <spec>", "with --agent: the model that diagnoses and writes patches")
    .option("--max-turns <n>", "with --agent: turn limit per episode (default: the env's)")
    .option("--timeout <seconds>", "with --agent: wall-clock limit per episode (default: 300)")
    .option("--sandbox <mode>", "with --agent: bwrap (default) or none (no isolation, explicit)")
    .option("--config <path>", "with --agent: clade.config file (models, prices)")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .option("--quiet", "no progress lines")
    .action(async (opts) => {
      const { evolveCommand } = await import("./commands/evolve.js");
      setExit(await evolveCommand(opts, io));
    });

  program
    .command("tree")
    .description("a stored search's tree: counts, CMP estimates, status and cost of every agent")
    .argument("<run>", "search id (evolve --run-id)")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action(async (run, opts) => {
      const { treeCommand } = await import("./commands/search-tree.js");
      setExit(treeCommand(run, opts, io));
    });

  program
    .command("best")
    .description("a stored search's final choice: its counts, score and path from the root")
    .argument("<run>", "search id (evolve --run-id)")
    .addOption(dbOption())
    .option(
      "--out <path>",
      "write the chosen agent's folder (agent searches) or policy file (training branches)",
    )
    .option("--json", "machine-readable output")
    .action(async (run, opts) => {
      const { bestCommand } = await import("./commands/search-tree.js");
      setExit(bestCommand(run, opts, io));
    });

  program
    .command("qd")
    .description(
      "CycleQD: quality-diversity, one archive per task, the quality task cycling, over embedded policies or, with --agent-config, over LLM agent configurations (resumable; clade archive RUN)",
    )
    .requiredOption(
      "--tasks <list>",
      "K ≥ 2 tasks: environments, each optionally with its train tasks, e.g. maze,textcraft,gridworld or maze:100-299,gridworld",
    )
    .option(
      "--variant <name>",
      "paper (elite sampling; policies: SVD mutation; default) or released (uniform sampling; policies: Gaussian noise); with --agent-config it changes only the parent sampling",
    )
    .option("--generations <n>", "generations after the experts (default: 100)")
    .requiredOption("--run-id <id>", "the run's id; the same command resumes it")
    .option(
      "--agent-config <task=file>",
      "LLM agent configurations instead of policies: a task's seed configuration, JSON (repeatable, at least one; needs --model)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      "--model <spec>",
      "with --agent-config: the model the configured agents call (openai:NAME, openai-compatible:URL#NAME, or a clade.config name)",
    )
    .option(
      "--mutator-model <spec>",
      "with --agent-config: the model that rewrites prompt parts; without it the rewrite mutation never applies",
    )
    .option(
      "--pool <file>",
      "with --agent-config: few-shot examples and tools that mutations may add (JSON)",
    )
    .option("--samples <n>", "with --agent-config: episodes per task index (default: 1)")
    .option("--max-turns <n>", "with --agent-config: turn limit per episode (default: the env's)")
    .option(
      "--timeout <seconds>",
      "with --agent-config: wall-clock limit per episode (default: 300)",
    )
    .option("--config <path>", "with --agent-config: clade.config file (models, prices)")
    .option(
      "--expert <task=file>",
      "policies: a task's expert policy instead of training one (repeatable; needs --base)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      "--base <file>",
      "policies: the experts' base policy (safetensors) instead of training one",
    )
    .option(
      "--base-steps <n>",
      "policies: training steps of the base on all tasks, mixed (default: 30)",
    )
    .option(
      "--expert-steps <n>",
      "policies: training steps of each expert on its task, from the base (default: 30)",
    )
    .option("--batch <n>", "policies: tasks per training step (default: 16)")
    .option("--group <n>", "policies: samples per task in a training step (default: 8)")
    .option(
      "--search-tasks <n>",
      "train tasks per task that genomes are scored on in the search (default: 20)",
    )
    .option(
      "--test-tasks <n>",
      "held-out test tasks per task for the final comparison, 0 to skip (default: 50)",
    )
    .option("--bins <n>", "bins per task score (default: 15)")
    .option(
      "--ranges <list>",
      "each task's score range MIN:MAX, comma-separated (default: 0:1 each)",
    )
    .option(
      "--seed <n>",
      "fixes training, parents, merges and mutations, and the models' request seeds (default: 0)",
    )
    .option(
      "--dir <dir>",
      "training checkpoints, elites and finalists (default: .clade/qd/<run-id>)",
    )
    .option(
      "--out <file>",
      "also write the best-mean finalist here (safetensors; with --agent-config, JSON)",
    )
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .option("--quiet", "no progress lines")
    .addHelpText(
      "after",
      "\nTwo paths (docs/qd.md):\n" +
        "  embedded policies (default): the base and one expert per task are trained (or given with\n" +
        "    --base/--expert); children merge task vectors and mutate along the expert's SVD\n" +
        "    (paper) or with Gaussian noise (released); finalists: final-best-mean.safetensors and\n" +
        "    final-merge.safetensors, beside the base and the experts on the test tasks.\n" +
        "  LLM agent configurations (--agent-config TASK=FILE --model SPEC): the given configs are\n" +
        "    the experts; children come from the genome's operators (crossover, jitter, examples,\n" +
        "    tools, kind, and the rewrite by --mutator-model); finalists: final-best-mean.json and\n" +
        "    final-task-K.json (each archive's best; configurations are not merged), the best-mean\n" +
        "    config beside the given ones on the test tasks.\n",
    )
    .action(async (opts) => {
      const { qdCommand } = await import("./commands/qd.js");
      setExit(await qdCommand(opts, io));
    });

  program
    .command("archive")
    .description("a CycleQD run's archives as heat maps, at the last or any generation")
    .argument("<run>", "CycleQD run id")
    .option("--task <task>", "only this task's archive (its label or index)")
    .option("--generation <g>", "the archives after generation G (default: the last)")
    .addOption(dbOption())
    .option("--json", "machine-readable output (every cell)")
    .action(async (run, opts) => {
      const { archiveCommand } = await import("./commands/archive.js");
      setExit(archiveCommand(run, opts, io));
    });

  program
    .command("curves")
    .description("a training run's metrics step by step: a table, and on a terminal plots")
    .argument("<run>", "training run id")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action(async (run, opts) => {
      const { curvesCommand } = await import("./commands/curves.js");
      setExit(curvesCommand(run, opts, io));
    });

  const goals = program
    .command("goals")
    .description(
      "goal-oriented evaluation of conversations: GSR, root causes, teacher-judge ensembles (docs/goals.md)",
    )
    .addHelpText(
      "after",
      "\n`clade goals SOURCE ...` is short for `clade goals judge SOURCE ...` (a file named like a\ncommand: ./report).\n",
    );
  goals
    .command("judge", { isDefault: true })
    .description(
      "score conversations by goal: from their own labels, or judged by an ensemble of teacher models (stored, resumable)",
    )
    .argument(
      "<source>",
      "a conversation file (chat JSONL, tau-bench results, dialogues JSON) or, with --format run, a clade run id",
    )
    .option("--format <format>", "run, chat, tau or dialogues (default: detected from the file)")
    .option(
      "--judges <specs>",
      "teacher models, comma-separated (three for the 2-of-3 vote; any mix of providers or clade.config names)",
    )
    .option(
      "--rubric <name|file>",
      "goal catalogue and quality standards: generic, helpdesk, or a JSON/Markdown file (default: generic)",
    )
    .option(
      "--taxonomy <name|file>",
      "root causes: rcof (default), tau, mast, a name in clade.config's taxonomies, or a JSON file",
    )
    .option(
      "--run-id <id>",
      "store the evaluation under this id (needed with --judges; the same command resumes it)",
    )
    .option(
      "--concurrency <n>",
      "judge calls in flight at most: concurrency ÷ judges conversations at once (default: 24)",
    )
    .option("--budget-usd <usd>", "stop starting conversations once the judges' spend reaches this")
    .option("--cache <mode>", "response cache: rw (default), read, write or off")
    .option(
      "--answer-attempts <n>",
      "answers asked of a judge before its judgement errors (default: 3)",
    )
    .option("--seed <n>", "bootstrap intervals' seed (default: 0)")
    .option("--config <path>", "clade.config file (models, prices)")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .option("--quiet", "no progress lines")
    .action(async (source, opts) => {
      const { goalsCommand } = await import("./commands/goals.js");
      setExit(await goalsCommand(source, opts, io));
    });
  goals
    .command("report")
    .description(
      "a stored goal evaluation: GSR overall and multi-turn, root causes, agreement, the review queue",
    )
    .argument("<run>", "goal evaluation id")
    .option("--seed <n>", "bootstrap intervals' seed (default: 0)")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action(async (run, opts) => {
      const { goalsReportCommand } = await import("./commands/goals.js");
      setExit(goalsReportCommand(run, opts, io));
    });

  goals
    .command("list")
    .description("the stored goal evaluations: status, conversations judged and errored, judges")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action(async (opts) => {
      const { goalsListCommand } = await import("./commands/goals.js");
      setExit(goalsListCommand(opts, io));
    });

  const blade = program
    .command("blade")
    .description(
      "BLADE: score data analyses against expert ground truth, report blade runs, hash columns (docs/blade.md)",
    );
  blade
    .command("report")
    .description(
      "a stored blade run: hit rate, coverage@k and F1 per category with intervals, matched and unmatched decisions",
    )
    .argument("<run>", "run id")
    .option("--k <n>", "analyses per dataset pooled for coverage (default: 10)")
    .option("--resamples <n>", "bootstrap resamples (default: 1000)")
    .option("--seed <n>", "bootstrap seed (default: 0)")
    .option(
      "--judge <spec>",
      "score the run's analyses again with a model for BLADE's model roles (variables, undecided models, splitting Python code)",
    )
    .option("--config <path>", "clade.config file (models, prices)")
    .addOption(dbOption())
    .option("--json", "machine-readable output")
    .action(async (run, opts) => {
      const { bladeReportCommand } = await import("./commands/blade.js");
      setExit(await bladeReportCommand(run, opts, io));
    });
  blade
    .command("score")
    .description(
      "score analyses produced elsewhere (BLADE's submission JSON) against a dataset's experts",
    )
    .argument("<file>", "a DatasetSubmission JSON ({dataset_name, analyses}) or a list of analyses")
    .option("--dataset <name>", "the dataset (default: the file's dataset_name)")
    .option("--blade-dir <dir>", "a folder of BLADE datasets (default: clade's own)")
    .option(
      "--runtime <name>",
      "sql or python (default: sql for clade's datasets, python for BLADE's)",
    )
    .option(
      "--judge <spec>",
      "a model for BLADE's model roles: matching variables, models the rules leave undecided, splitting Python code (default: offline rules)",
    )
    .option("--config <path>", "clade.config file (models, prices)")
    .option("--k <n>", "analyses pooled for coverage (default: 10)")
    .option("--resamples <n>", "bootstrap resamples (default: 1000)")
    .option("--seed <n>", "bootstrap seed (default: 0)")
    .option("--json", "machine-readable output")
    .action(async (file, opts) => {
      const { bladeScoreCommand } = await import("./commands/blade.js");
      setExit(await bladeScoreCommand(file, opts, io));
    });
  blade
    .command("hash")
    .description(
      "each column's value hash and categorical hash, as BLADE computes them on pandas' read_csv frame",
    )
    .argument("<csv>", "a CSV file")
    .option("--pandas", "read it with pandas itself (in the sandbox) instead of clade's reader")
    .option("--json", "machine-readable output")
    .action(async (file, opts) => {
      const { bladeHashCommand } = await import("./commands/blade.js");
      setExit(await bladeHashCommand(file, opts, io));
    });

  program
    .command("review")
    .description(
      "review the turns a goal evaluation's judges disagreed on: their labels and rationales side by side, your label stored with who and when",
    )
    .argument("<run>", "goal evaluation id")
    .option("--reviewer <name>", "who is reviewing (default: the login name)")
    .option("--all", "with --json: every queued field, reviewed ones included")
    .addOption(dbOption())
    .option("--json", "export the open queue as JSON instead of reviewing")
    .action(async (run, opts) => {
      const { reviewCommand } = await import("./commands/review.js");
      setExit(await reviewCommand(run, opts, io));
    });

  program
    .command("view")
    .description(
      "the web viewer: runs, episodes, search trees, learning curves, archives, goal reviews and analyses",
    )
    .addOption(dbOption())
    .option(
      "--host <host>",
      "address to bind (loopback unless told otherwise: then a token is needed)",
      "127.0.0.1",
    )
    .option("--port <port>", "port (0 = any free port)", "7575")
    .option("--token <token>", "the token to require (default: a random one, printed)")
    .option("--bundle <dir>", "write a static copy that opens without a server, then exit")
    .option(
      "--run <id>",
      "with --bundle: a run, search, training run, CycleQD run or goal evaluation to include (repeat; default all)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--json", "with --bundle: what was written, as JSON")
    .action(async (opts) => {
      const { viewCommand } = await import("./commands/view.js");
      setExit(await viewCommand(opts, io));
    });

  return program;
}

/** Runs the CLI and returns the exit code (never calls process.exit). */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let code = 0;
  // Known before parsing, so that commander's own errors (unknown option, missing required
  // option) come out as JSON too.
  const json = wantsJson(argv);
  const program = buildProgram(
    io,
    (c) => {
      code = c;
    },
    json,
  );
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; commander has already printed its one-line usage error
      // (without --json).
      if (error.exitCode === 0) return 0;
      if (json) io.stderr(errorJson("usage", error.code, commanderMessage(error)));
      return 2;
    }
    if (await isUserError(error)) {
      const { name, message } = error as Error;
      io.stderr(json ? errorJson("usage", name, message) : `clade: error: ${message}\n`);
      return 2;
    }
    // A bug of clade's, still one line unless asked for the stack (CLADE_DEBUG=1).
    const debug = Boolean(process.env.CLADE_DEBUG);
    if (json) {
      const name = error instanceof Error ? error.name : "Error";
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      const stack = debug && error instanceof Error ? error.stack : undefined;
      io.stderr(errorJson("internal", name, message ?? "", stack));
      return 1;
    }
    const detail =
      error instanceof Error
        ? debug
          ? (error.stack ?? error.message)
          : `${error.message.split("\n")[0]} (CLADE_DEBUG=1 shows the stack)`
        : String(error);
    io.stderr(`clade: internal error: ${detail}\n`);
    return 1;
  }
}

/** Commander's message as one line, without its "error: " prefix. */
function commanderMessage(error: CommanderError): string {
  // Missing command: commander has printed the help (on stderr) and says only "(outputHelp)".
  if (error.code === "commander.help") return "a command is required (see: clade --help)";
  return error.message
    .replace(/^error: /, "")
    .replace(/\s*\n\s*/g, " ")
    .trim();
}
