/**
 * A type-level test, checked by the project's type check (`npm run typecheck`: tsconfig.json
 * includes tests/), not by vitest: the agent API that agent folders are written against
 * (data/agent-api/clade-agent.d.ts, `declare module "clade-agent"`) agrees with clade's own
 * types. What crosses the boundary in both directions must be assignable both ways; what only
 * flows one way (the episode's context in, the agent module out) in that direction.
 */
/// <reference path="../../data/agent-api/clade-agent.d.ts" />
import type * as Api from "clade-agent";
import type { Agent, AgentReply, AgentState, EpisodeContext, Turn } from "../../src/agent/types.js";
import type { AgentModule, AgentSetup } from "../../src/cli/user-modules.js";
import type { EnvInfo, Observation } from "../../src/env/types.js";
import type {
  ChatMessage,
  GenerationParams,
  Model,
  ModelRequest,
  ModelResponse,
  ToolCall,
  ToolSpec,
} from "../../src/model/types.js";

type Extends<A, B> = [A] extends [B] ? true : false;
type Both<A, B> = Extends<A, B> extends true ? Extends<B, A> : false;
type Holds<T extends true> = T;

export type AgentApiAgreesWithClade = [
  // The same shapes on both sides.
  Holds<Both<Api.ToolCall, ToolCall>>,
  Holds<Both<Api.ChatMessage, ChatMessage>>,
  Holds<Both<Api.ToolSpec, ToolSpec>>,
  Holds<Both<Api.GenerationParams, GenerationParams>>,
  Holds<Both<Api.ModelRequest, ModelRequest>>,
  Holds<Both<Api.ModelResponse, ModelResponse>>,
  Holds<Both<Api.Model, Model>>,
  Holds<Both<Api.Observation, Observation>>,
  Holds<Both<Api.Turn, Turn>>,
  Holds<Both<Api.AgentState, AgentState>>,
  Holds<Both<Api.AgentReply, AgentReply>>,
  Holds<Both<Api.Agent, Agent>>,
  Holds<Both<Api.AgentSetup, AgentSetup>>,
  // clade hands these to the agent: the agent's view may leave fields out.
  Holds<Extends<EnvInfo, Api.EnvInfo>>,
  Holds<Extends<EpisodeContext, Api.EpisodeContext>>,
  // The folder's default export is used as clade's agent module.
  Holds<Extends<Api.AgentModule, AgentModule>>,
];
