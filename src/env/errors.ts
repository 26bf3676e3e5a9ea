/**
 * The registry's error, in a module of its own so that code reporting it (the CLI) need not load
 * every environment.
 */
export class UnknownEnvError extends Error {
  override name = "UnknownEnvError";
}
