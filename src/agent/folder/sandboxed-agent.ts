/**
 * An agent folder as a clade agent: each episode runs the folder's code in its own sandbox
 * (src/sandbox), driven turn by turn over the channel by the harness (harness.ts). Agent folders
 * are untrusted (a model may have written them), so there is no way to run one in-process: mode
 * "none" is the only weaker option, and only when asked for.
 *
 * The parent keeps everything that matters: the environment and its rewards, the keys, and the
 * model client (retries, limits, cache, budget, accounting). The agent's model calls come over
 * the channel and are recorded with the turn that made them, as an in-process agent's are.
 */
import { z } from "zod";
import { CallRecorder } from "../../model/call-record.js";
import type { Model, ModelRequest } from "../../model/types.js";
import {
  createWorkspace,
  defaultSandboxMode,
  removeWorkspace,
  runSandboxed,
  type SandboxLimits,
  type SandboxMode,
  type SandboxResult,
} from "../../sandbox/index.js";
import type { AgentFactory } from "../registry.js";
import type { Agent, AgentReply, AgentState, EpisodeContext } from "../types.js";
import { type AgentFiles, agentFilesHash, agentManifest, writeFilesInto } from "./files.js";
import { HARNESS_FILE, HARNESS_SOURCE } from "./harness.js";
import { tsxImport } from "./packages.js";
import { withAgentApi } from "./template.js";

/**
 * The sandbox of one episode. The episode's own timeout (the rollout's) ends it first; the wall
 * clock here only backs that up.
 */
export const FOLDER_AGENT_LIMITS: Readonly<Partial<SandboxLimits>> = {
  wallMs: 15 * 60_000,
  cpuSeconds: 10 * 60,
  memoryBytes: 1024 * 1024 * 1024,
  residentBytes: 512 * 1024 * 1024,
  processes: 64,
  fileBytes: 16 * 1024 * 1024,
  workspaceBytes: 32 * 1024 * 1024,
  tmpBytes: 16 * 1024 * 1024,
};

/** How long close() waits for the harness to leave on its own before killing it. */
const CLOSE_GRACE_MS = 2000;
/** Characters of the sandbox's stderr quoted when the agent's process dies. */
const STDERR_TAIL_CHARS = 600;

export interface FolderAgentOptions {
  /** The agent folder's files (readAgentFolder, or a node of a search materialised). */
  files: AgentFiles;
  /** The run's model, served to the agent over the channel; the agent gets none without it. */
  model?: Model;
  /** Default: the sandbox's default mode (bwrap unless CLADE_SANDBOX=none or --sandbox none). */
  mode?: SandboxMode;
  limits?: Partial<SandboxLimits>;
}

/** A folder agent factory; `identity` holds the folder's hash and the sandbox mode. */
export interface FolderAgentFactory extends AgentFactory {
  /** sha256 over the folder's paths and contents. */
  sha256: string;
  mode: SandboxMode;
}

const replySchema = z.object({
  action: z.string({ error: "the agent's reply has no action string" }).max(100_000),
  message: z.string().max(1_000_000).optional(),
  parseErrors: z.number().int().min(0).max(1_000).optional(),
});

const messageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string(),
    toolCalls: z
      .array(z.object({ id: z.string(), name: z.string(), arguments: z.string() }))
      .optional(),
  }),
  z.object({ role: z.literal("tool"), toolCallId: z.string(), content: z.string() }),
]);

const modelRequestSchema = z.object({
  messages: z.array(messageSchema).min(1),
  tools: z
    .array(
      z.object({
        name: z.string(),
        description: z.string(),
        parameters: z.record(z.string(), z.unknown()),
      }),
    )
    .optional(),
  params: z
    .object({
      temperature: z.number().optional(),
      maxTokens: z.number().int().positive().optional(),
      seed: z.number().int().optional(),
      stop: z.array(z.string()).optional(),
      topP: z.number().optional(),
    })
    .optional(),
});

const requestSchema = z.object({ id: z.union([z.number(), z.string()]), op: z.string() });

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join(".") || "request"}: ${issue?.message ?? "invalid"}`;
}

/** Why the sandbox's process ended before the episode did. */
function exitReason(result: SandboxResult): string {
  const how = result.killedBy
    ? `killed (${result.killedBy} limit)`
    : result.signal
      ? `ended by ${result.signal}`
      : `exited with code ${result.exitCode}`;
  const tail = result.stderr.text.trim().slice(-STDERR_TAIL_CHARS);
  return `the agent's sandbox ${how} before the episode ended${tail ? `: ${tail}` : ""}`;
}

/** One episode's agent: a sandbox started at the first act(), stopped by close(). */
class FolderAgent implements Agent {
  private readonly recorder: CallRecorder | undefined;
  private readonly controller = new AbortController();
  private run: Promise<SandboxResult | Error> | undefined;
  private workspace: string | undefined;
  /** The harness's pending "next" request, waiting for a state (or the end). */
  private nextRequest: ((answer: { state: AgentState } | { end: true }) => void) | undefined;
  /** A state given before the harness asked for it. */
  private queued: { state: AgentState } | { end: true } | undefined;
  /** The act() waiting for the harness's reply. */
  private pendingAct:
    | { resolve: (reply: AgentReply) => void; reject: (error: Error) => void }
    | undefined;
  private ended: Error | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** The harness holds a state it has not answered: at close, it is stuck in the agent's code. */
  private busy = false;

  constructor(
    private readonly options: FolderAgentOptions,
    private readonly entry: string,
    private readonly context: EpisodeContext,
    private readonly mode: SandboxMode,
  ) {
    this.recorder = options.model ? new CallRecorder(options.model) : undefined;
  }

  act(state: AgentState, signal: AbortSignal): Promise<AgentReply> {
    if (this.ended) return Promise.reject(this.ended);
    if (this.pendingAct) return Promise.reject(new Error("act() called while a turn is running"));
    this.start();
    return new Promise<AgentReply>((resolve, reject) => {
      const onAbort = () => {
        this.pendingAct = undefined;
        reject(signal.reason);
        void this.close();
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.pendingAct = {
        resolve: (reply) => {
          signal.removeEventListener("abort", onAbort);
          resolve(reply);
        },
        reject: (error) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      this.deliver({ state });
    });
  }

  takeCalls() {
    return this.recorder?.take() ?? [];
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    this.closed = true;
    this.deliver({ end: true });
    if (this.busy) this.controller.abort("closed while the agent was acting");
    if (this.run) {
      const timer = setTimeout(() => this.controller.abort("closed"), CLOSE_GRACE_MS);
      await this.run;
      clearTimeout(timer);
    }
    if (this.workspace) removeWorkspace(this.workspace);
  }

  /** Answers the harness's waiting "next", or keeps the answer for its next one. */
  private deliver(answer: { state: AgentState } | { end: true }): void {
    if ("state" in answer) this.busy = true;
    const waiting = this.nextRequest;
    if (waiting) {
      this.nextRequest = undefined;
      waiting(answer);
    } else {
      this.queued = answer;
    }
  }

  private fail(error: Error): void {
    this.ended ??= error;
    const pending = this.pendingAct;
    this.pendingAct = undefined;
    pending?.reject(error);
  }

  private start(): void {
    if (this.run) return;
    const workspace = createWorkspace("agent-");
    this.workspace = workspace;
    writeFilesInto(workspace, withAgentApi(this.options.files));
    writeFilesInto(workspace, new Map([[HARNESS_FILE, HARNESS_SOURCE]]));
    const tsx = tsxImport(this.mode);
    this.run = runSandboxed({
      command: process.execPath,
      args: ["--import", tsx.specifier, HARNESS_FILE],
      workspace,
      binds: tsx.binds,
      env: { NODE_ENV: "production" },
      limits: { ...FOLDER_AGENT_LIMITS, ...this.options.limits },
      mode: this.mode,
      signal: this.controller.signal,
      onMessage: (message) => this.serve(message),
    }).then(
      (result) => {
        this.fail(new Error(exitReason(result)));
        return result;
      },
      (error: unknown) => {
        const failure = error instanceof Error ? error : new Error(String(error));
        this.fail(failure);
        return failure;
      },
    );
  }

  /** Serves one request of the harness. */
  private serve(message: unknown): unknown {
    const parsed = requestSchema.safeParse(message);
    if (!parsed.success) throw new Error("not a request this channel serves");
    const body = message as Record<string, unknown>;
    switch (parsed.data.op) {
      case "start":
        return {
          entry: this.entry,
          context: {
            env: {
              name: this.context.env.name,
              version: this.context.env.version,
              description: this.context.env.description,
              instruction: this.context.env.instruction,
              successThreshold: this.context.env.successThreshold,
              maxSteps: this.context.env.maxSteps,
            },
            taskIndex: this.context.taskIndex,
            seed: this.context.seed,
            sampleIndex: this.context.sampleIndex,
          },
          model: this.options.model ? this.options.model.id : null,
        };
      case "next":
        return this.next(body);
      case "model":
        return this.complete(body.request);
      default:
        throw new Error(`unknown op ${JSON.stringify(parsed.data.op)}`);
    }
  }

  private next(body: Record<string, unknown>): Promise<{ state: AgentState } | { end: true }> {
    const pending = this.pendingAct;
    if (body.error !== undefined || body.reply !== undefined) this.busy = false;
    if (typeof body.error === "string") {
      this.pendingAct = undefined;
      pending?.reject(new Error(`the agent failed: ${body.error}`));
      if (!pending) this.ended ??= new Error(`the agent failed: ${body.error}`);
    } else if (body.reply !== undefined) {
      this.pendingAct = undefined;
      const reply = replySchema.safeParse(body.reply);
      if (reply.success) pending?.resolve(reply.data);
      else
        pending?.reject(new Error(`the agent's reply is not usable: ${firstIssue(reply.error)}`));
    }
    if (this.queued) {
      const answer = this.queued;
      this.queued = undefined;
      return Promise.resolve(answer);
    }
    if (this.closed) return Promise.resolve({ end: true });
    return new Promise((resolve) => {
      this.nextRequest = resolve;
    });
  }

  private async complete(request: unknown) {
    if (!this.recorder) throw new Error("this run has no model (pass --model)");
    const parsed = modelRequestSchema.safeParse(request);
    if (!parsed.success) throw new Error(`bad model request: ${firstIssue(parsed.error)}`);
    const modelRequest: ModelRequest = {
      ...(parsed.data as ModelRequest),
      sampleIndex: this.context.sampleIndex,
    };
    return this.recorder.complete(modelRequest, this.controller.signal);
  }
}

/**
 * An AgentFactory for an agent folder: every episode in its own sandbox. The folder's manifest is
 * checked here, once; its identity (sha256 of its files, the sandbox mode) goes into the run's
 * configuration, so that resuming with another folder is refused.
 */
export function folderAgentFactory(options: FolderAgentOptions): FolderAgentFactory {
  const manifest = agentManifest(options.files);
  const mode = options.mode ?? defaultSandboxMode();
  const sha256 = agentFilesHash(options.files);
  return {
    name: manifest.name,
    sha256,
    mode,
    identity: { agentFolder: { name: manifest.name, sha256 }, sandbox: mode },
    create: (context) => new FolderAgent(options, manifest.entry, context, mode),
  };
}
