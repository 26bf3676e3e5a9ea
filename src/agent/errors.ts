/**
 * The agent registry's error, in a module of its own so that code reporting it (the CLI) need not
 * load every agent.
 */
export class UnknownAgentError extends Error {
  override name = "UnknownAgentError";
}
