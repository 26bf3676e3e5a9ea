/**
 * The self-modifying improver: the engine's `Improver` for agents that are folders of TypeScript.
 * One improvement of a parent (hgm.md, "How a self-modification is made"):
 *   1. choose what to fix (target.ts): a failed task or a theme; nothing → no child;
 *   2. diagnose it (plan.ts): a JSON plan; none → no child;
 *   3. implement the plan (implementer.ts) on a copy of the parent's files;
 *   4. diff the result against the parent (patch.ts): an empty patch → no child;
 *   5. validate the child: it typechecks, its own tests pass, and one episode runs (DGM's first
 *      stage); any failure → no child, with the reason in one line.
 * The child's record is its patch against the parent, so a node is a chain of patches from the
 * root. Everything that runs code (checks, the smoke episode) and everything stored (files,
 * evaluations) comes in as functions, so this module runs nothing itself.
 */
import type { AgentFiles } from "../../agent/folder/files.js";
import { mixSeeds } from "../../env/rng.js";
import type { Model } from "../../model/types.js";
import type { WorkUsage } from "../../store/search-log.js";
import type { ImprovementResult, Improver, WorkContext } from "../search/engine.js";
import type { SearchNode } from "../search/tree.js";
import {
  type AgentChecks,
  type ImplementLimits,
  type ImplementStopReason,
  implement,
} from "./implementer.js";
import { applyPatch, diffFiles } from "./patch.js";
import { DEFAULT_DIAGNOSE_ATTEMPTS, DEFAULT_LOG_CHARS, diagnose, type Plan } from "./plan.js";
import { chooseTarget, type NodeEvaluation, type Target, type Theme } from "./target.js";
import { addUsage } from "./usage.js";

/** How long a reason may be: it is one line of a log and a report. */
const MAX_REASON_CHARS = 300;

export interface ImproverLimits extends ImplementLimits {
  /** Diagnosis attempts before giving up on a plan. */
  diagnoseAttempts: number;
  /** Characters of the failed episode's log the diagnosis sees (head and tail). */
  logChars: number;
}

/** The typecheck and unit tests the improver (and its coding agent) run, in the sandbox. */
export type ImproverChecks = AgentChecks;

export interface SmokeResult {
  ok: boolean;
  reason?: string;
  /** What the episode's model calls cost: part of the improvement's cost. */
  usage?: WorkUsage;
}

export interface AgentImproverDeps {
  /** The model that diagnoses and implements (a strong one). */
  modifyModel: Model;
  /** A node's files (the root's, with its chain of patches applied). */
  nodeFiles(node: SearchNode): Promise<AgentFiles>;
  /** A node's finished evaluations, with their logs. */
  evaluationsOf(node: SearchNode): Promise<NodeEvaluation[]>;
  /** Typecheck and unit tests of an agent, in the sandbox. */
  checks: ImproverChecks;
  /** One episode of the agent, in the sandbox: it must run and give an answer. */
  smoke(files: AgentFiles, signal: AbortSignal): Promise<SmokeResult>;
  /** Fixes which target each improvement chooses. */
  seed: number;
  limits?: Partial<ImproverLimits>;
}

/** What a child's `data` holds: how it was made, and the patch that makes it from its parent. */
export type ChildRecord = {
  /** Unified diff from the parent's files to the child's. */
  patch: string;
  plan: Plan;
  target: { kind: "task"; task: number } | { kind: "theme"; theme: Theme };
  /** The coding agent's summary of its change. */
  summary: string;
  stopReason: ImplementStopReason;
  /** The coding agent's model calls. */
  steps: number;
};

/** What marks the line of a check's output that says what failed, strongest first. */
const ERROR_LINE_PATTERNS = [
  /\berror TS\d+/, // tsc
  /^not ok\b|✖/, // node:test (TAP, spec)
  /\berror\b|\bfail(?:ed|ure)?\b/i,
];

/** The first line of a check's output that names an error, else its first line. */
export function firstErrorLine(output: string): string {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  for (const pattern of ERROR_LINE_PATTERNS) {
    const line = lines.find((l) => pattern.test(l));
    if (line !== undefined) return line;
  }
  return lines[0] ?? "(no output)";
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS - 1)}…` : line;
}

function targetRecord(target: Target): ChildRecord["target"] {
  return target.kind === "task"
    ? { kind: "task", task: target.task }
    : { kind: "theme", theme: target.theme };
}

export function createAgentImprover(deps: AgentImproverDeps): Improver {
  const limits = deps.limits ?? {};
  return {
    async improve(
      parent: SearchNode,
      { ordinal, signal }: WorkContext & { ordinal: number },
    ): Promise<ImprovementResult> {
      signal.throwIfAborted();
      const evaluations = await deps.evaluationsOf(parent);
      const target = chooseTarget(evaluations, { seed: mixSeeds(deps.seed, parent.id), ordinal });
      if (target === null) return { child: null, reason: "nothing to fix" };

      const files = await deps.nodeFiles(parent);
      signal.throwIfAborted();
      const diagnosis = await diagnose({
        model: deps.modifyModel,
        files,
        target,
        signal,
        maxAttempts: limits.diagnoseAttempts ?? DEFAULT_DIAGNOSE_ATTEMPTS,
        logChars: limits.logChars ?? DEFAULT_LOG_CHARS,
      });
      if (diagnosis.plan === null) {
        return {
          child: null,
          reason: oneLine(`diagnosis failed: ${diagnosis.reason}`),
          usage: diagnosis.usage,
        };
      }

      const implementation = await implement({
        model: deps.modifyModel,
        files,
        plan: diagnosis.plan,
        target,
        checks: deps.checks,
        signal,
        ...(limits.maxSteps !== undefined ? { maxSteps: limits.maxSteps } : {}),
        ...(limits.maxTokens !== undefined ? { maxTokens: limits.maxTokens } : {}),
        ...(limits.maxMs !== undefined ? { maxMs: limits.maxMs } : {}),
      });
      let usage = addUsage(diagnosis.usage, implementation.usage);
      signal.throwIfAborted();

      const patch = diffFiles(files, implementation.files);
      if (patch === "") {
        return {
          child: null,
          reason: `empty patch (the coding agent stopped: ${implementation.stopReason})`,
          usage,
        };
      }
      // Validate what the chain will rebuild: the parent's files with the patch applied.
      const child = applyPatch(files, patch);
      const noChild = (reason: string): ImprovementResult => ({
        child: null,
        reason: oneLine(reason),
        usage,
      });
      const typecheck = await deps.checks.typecheck(child, signal);
      if (!typecheck.ok) return noChild(`typecheck failed: ${firstErrorLine(typecheck.output)}`);
      signal.throwIfAborted();
      const tests = await deps.checks.tests(child, signal);
      if (!tests.ok) return noChild(`tests failed: ${firstErrorLine(tests.output)}`);
      signal.throwIfAborted();
      const smoke = await deps.smoke(child, signal);
      if (smoke.usage) usage = addUsage(usage, smoke.usage);
      if (!smoke.ok) return noChild(`smoke episode failed: ${smoke.reason ?? "no reason given"}`);
      signal.throwIfAborted();

      const record: ChildRecord = {
        patch,
        plan: diagnosis.plan,
        target: targetRecord(target),
        summary: implementation.summary,
        stopReason: implementation.stopReason,
        steps: implementation.steps,
      };
      return { child: { data: record }, usage };
    },
  };
}
