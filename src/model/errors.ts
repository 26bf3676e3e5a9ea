/** clade.config's error, in a module of its own so that code reporting it need not load zod. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
