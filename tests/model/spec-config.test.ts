import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseConfig } from "../../src/model/config.js";
import { checkKey, resolveModel } from "../../src/model/resolve.js";
import { ModelSpecError, parseModelSpec } from "../../src/model/spec.js";

describe("model specs", () => {
  it("parses the three provider forms", () => {
    expect(parseModelSpec("openai:gpt-4o-mini")).toEqual({
      provider: "openai",
      model: "gpt-4o-mini",
    });
    expect(parseModelSpec("anthropic:claude-sonnet-4-5")).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
    });
    expect(
      parseModelSpec("openai-compatible:http://127.0.0.1:8000/v1/#Qwen2.5-7B-Instruct"),
    ).toEqual({
      provider: "openai-compatible",
      model: "Qwen2.5-7B-Instruct",
      baseUrl: "http://127.0.0.1:8000/v1",
    });
  });

  it("rejects malformed specs with a message that shows the right form", () => {
    expect(() => parseModelSpec("gpt-4o")).toThrow(ModelSpecError);
    expect(() => parseModelSpec("azure:gpt-4o")).toThrow(/openai:MODEL/);
    expect(() => parseModelSpec("openai:")).toThrow(/model name is missing/);
    expect(() => parseModelSpec("openai-compatible:http://127.0.0.1:8000/v1")).toThrow(/URL#MODEL/);
    expect(() => parseModelSpec("openai-compatible:ftp://x/v1#m")).toThrow(/http or https/);
    expect(() => parseModelSpec("openai-compatible:not a url#m")).toThrow(/not a URL/);
    // A key in the query string would be stored with the run: refused, and not echoed.
    const query = () => parseModelSpec("openai-compatible:http://h/v1?api_key=SECRET-1#m");
    expect(query).toThrow(/must not carry a query/);
    expect(query).not.toThrow(/SECRET-1/);
  });
});

describe("config", () => {
  const dir = () => mkdtempSync(join(tmpdir(), "clade-config-"));

  it("validates entries and names the offending field", () => {
    expect(() => parseConfig({ models: { q: { model: "openai:x", temperature: 2 } } })).toThrow(
      /models\.q: Unrecognized key/,
    );
    expect(() =>
      parseConfig({ models: { q: { model: "openai:x", params: { temperature: 5 } } } }),
    ).toThrow(/models\.q\.params\.temperature/);
    expect(() => parseConfig({ modles: {} })).toThrow(ConfigError);
  });

  it("loads clade.config.json and clade.config.ts", async () => {
    const a = dir();
    writeFileSync(
      join(a, "clade.config.json"),
      JSON.stringify({ models: { m: { model: "openai:gpt-4o-mini" } } }),
    );
    expect((await loadConfig(undefined, a)).config.models.m?.model).toBe("openai:gpt-4o-mini");
    const b = dir();
    writeFileSync(
      join(b, "clade.config.ts"),
      `const temperature: number = 0.3;\nexport default { models: { q: { model: "anthropic:claude-haiku-4-5", params: { temperature } } } };\n`,
    );
    expect((await loadConfig(undefined, b)).config.models.q?.params?.temperature).toBe(0.3);
  });

  it("reports a broken or missing config file in one line", async () => {
    const a = dir();
    writeFileSync(join(a, "clade.config.json"), "{ models: ");
    await expect(loadConfig(undefined, a)).rejects.toThrow(/clade\.config\.json: /);
    await expect(loadConfig("nope.json", a)).rejects.toThrow(/no config file at nope\.json/);
    expect((await loadConfig(undefined, dir())).config.models).toEqual({});
  });
});

describe("resolveModel", () => {
  const config = parseConfig({
    models: {
      qwen: {
        model: "openai-compatible:http://127.0.0.1:8000/v1#Qwen",
        apiKeyEnv: "VLLM_KEY",
        params: { temperature: 0.7 },
        price: { inputPerMTok: 0.1, outputPerMTok: 0.2 },
        maxConcurrency: 4,
      },
    },
    prices: { "openai:gpt-4o-mini": { inputPerMTok: 1, outputPerMTok: 2 } },
    defaults: { params: { maxTokens: 256, temperature: 0 } },
  });

  it("uses the provider's key variable, or the one the config names", () => {
    const openai = resolveModel("openai:gpt-4o", config, { OPENAI_API_KEY: "sk-a" });
    expect(openai.apiKey).toBe("sk-a");
    const anthropic = resolveModel("anthropic:claude-haiku-4-5", config, {
      OPENAI_API_KEY: "sk-a",
    });
    expect(anthropic.apiKey).toBeUndefined();
    expect(() => checkKey(anthropic)).toThrow(/set ANTHROPIC_API_KEY/);
    const qwen = resolveModel("qwen", config, { VLLM_KEY: "v", OPENAI_API_KEY: "sk-a" });
    expect(qwen.apiKey).toBe("v");
  });

  it("lets a local server run without a key", () => {
    const local = resolveModel("openai-compatible:http://127.0.0.1:9/v1#m", config, {});
    expect(() => checkKey(local)).not.toThrow();
  });

  it("merges parameters and finds prices: entry, then config table, then built-in", () => {
    const qwen = resolveModel("qwen", config, {});
    expect(qwen.params).toEqual({ maxTokens: 256, temperature: 0.7 });
    expect(qwen.price).toEqual({ inputPerMTok: 0.1, outputPerMTok: 0.2 });
    expect(qwen.maxConcurrency).toBe(4);
    expect(resolveModel("openai:gpt-4o-mini", config, {}).price).toEqual({
      inputPerMTok: 1,
      outputPerMTok: 2,
    });
    expect(resolveModel("anthropic:claude-sonnet-4-5", config, {}).price?.inputPerMTok).toBe(3);
    expect(resolveModel("openai:my-finetune", config, {}).price).toBeUndefined();
  });

  it("names configured models when an unknown name is given", () => {
    expect(() => resolveModel("qwne", config, {})).toThrow(
      /unknown model "qwne" \(configured: qwen\)/,
    );
  });
});
