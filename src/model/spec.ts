/**
 * Model specs as strings:
 *   openai:gpt-4o-mini
 *   anthropic:claude-sonnet-4-5
 *   openai-compatible:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct
 */

export type Provider = "openai" | "anthropic" | "openai-compatible";

export interface ModelSpec {
  provider: Provider;
  model: string;
  /** Only for openai-compatible: the server's base URL (up to and including /v1). */
  baseUrl?: string;
}

export class ModelSpecError extends Error {
  override name = "ModelSpecError";
}

const PROVIDERS: readonly Provider[] = ["openai", "anthropic", "openai-compatible"];

export function parseModelSpec(text: string): ModelSpec {
  const colon = text.indexOf(":");
  const provider = text.slice(0, colon) as Provider;
  if (colon <= 0 || !PROVIDERS.includes(provider)) {
    throw new ModelSpecError(
      `bad model "${text}": use openai:MODEL, anthropic:MODEL or openai-compatible:URL#MODEL` +
        " (or a model name from clade.config)",
    );
  }
  const rest = text.slice(colon + 1).trim();
  if (provider !== "openai-compatible") {
    if (!rest) throw new ModelSpecError(`bad model "${text}": the model name is missing`);
    return { provider, model: rest };
  }
  const hash = rest.lastIndexOf("#");
  const baseUrl = hash < 0 ? "" : rest.slice(0, hash);
  const model = hash < 0 ? "" : rest.slice(hash + 1).trim();
  if (!baseUrl || !model) {
    throw new ModelSpecError(
      `bad model "${text}": openai-compatible needs URL#MODEL, e.g. openai-compatible:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct`,
    );
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ModelSpecError(`bad model "${text}": "${baseUrl}" is not a URL`);
  }
  if (url.search) {
    throw new ModelSpecError(
      `bad model "${text.replace(/\?.*#/, "?…#")}": the base URL must not carry a query; ` +
        "put keys in OPENAI_API_KEY or a config entry's apiKeyEnv",
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ModelSpecError(`bad model "${text}": the base URL must be http or https`);
  }
  return { provider, model, baseUrl: baseUrl.replace(/\/+$/, "") };
}

export function formatModelSpec(spec: ModelSpec): string {
  return spec.provider === "openai-compatible"
    ? `${spec.provider}:${spec.baseUrl}#${spec.model}`
    : `${spec.provider}:${spec.model}`;
}

/** The environment variable that holds the key for a provider, unless the config names another. */
export function defaultKeyVariable(provider: Provider): string {
  return provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}
