/**
 * The agent API, as seen from an agent folder. clade writes this file into every agent folder
 * it runs or checks, over whatever is there: the contract is clade's. Import it with
 * `import type { ... } from "clade-agent"` (types only: nothing of clade runs in the sandbox but
 * the harness that loads your entry module).
 */
declare module "clade-agent" {
  export interface ToolCall {
    id: string;
    name: string;
    /** The arguments as the model wrote them (JSON text, possibly malformed). */
    arguments: string;
  }

  export type ChatMessage =
    | { role: "system"; content: string }
    | { role: "user"; content: string }
    | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
    | { role: "tool"; toolCallId: string; content: string };

  /** A function the model may call; `parameters` is a JSON Schema object. */
  export interface ToolSpec {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  }

  export interface GenerationParams {
    temperature?: number;
    maxTokens?: number;
    seed?: number;
    stop?: string[];
    topP?: number;
  }

  export interface ModelRequest {
    messages: ChatMessage[];
    tools?: ToolSpec[];
    params?: GenerationParams;
  }

  export interface ModelResponse {
    content: string;
    toolCalls: ToolCall[];
    usage: { inputTokens: number; outputTokens: number };
    /** "stop", "length", "tool_calls", ... as the provider reported it. */
    finishReason: string;
    model: string;
  }

  /** The run's model, served by clade outside the sandbox (keys, limits, cache, accounting). */
  export interface Model {
    readonly id: string;
    complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse>;
  }

  export interface Observation {
    text: string;
    /** Actions the environment offers right now, when it can enumerate them. */
    availableActions?: string[];
  }

  /** One completed turn of the episode. */
  export interface Turn {
    action: string;
    /** The agent's full reply (thought and action). */
    message: string;
    observation: Observation;
    reward: number;
  }

  export interface AgentState {
    instruction: string;
    /** The latest observation. */
    observation: Observation;
    /** Earlier turns, oldest first. */
    history: readonly Turn[];
  }

  export interface AgentReply {
    /** The action passed to the environment. */
    action: string;
    /** The full reply as it should appear in the trajectory; defaults to the action. */
    message?: string;
    /** Model replies in this turn that had no usable action. */
    parseErrors?: number;
  }

  export interface Agent {
    act(state: AgentState, signal: AbortSignal): Promise<AgentReply>;
  }

  export interface EnvInfo {
    name: string;
    version: string;
    description: string;
    instruction: string;
    successThreshold: number;
    maxSteps: number;
  }

  export interface EpisodeContext {
    env: EnvInfo;
    taskIndex: number;
    seed: number;
    sampleIndex: number;
  }

  export interface AgentSetup {
    /** The run's model (`--model`); undefined when the run has none. */
    model?: Model;
  }

  /** What the entry module's default export must be: a fresh agent per episode. */
  export interface AgentModule {
    name?: string;
    create(context: EpisodeContext, setup: AgentSetup): Agent;
  }
}
