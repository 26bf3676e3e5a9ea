/** `clade models`: configured models and whether their keys are set (never the keys). */
import { loadConfig } from "../../model/config.js";
import { keyRequired, resolveModel } from "../../model/resolve.js";
import type { CliIo } from "../io.js";
import { renderTable } from "../table.js";

export async function modelsCommand(
  options: { config?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  const { config, path } = await loadConfig(options.config);
  const rows = Object.keys(config.models).map((name) => {
    const model = resolveModel(name, config);
    return {
      name,
      model: config.models[name]?.model ?? "",
      keyVariable: model.keyVariable ?? "",
      key: model.apiKey ? "set" : keyRequired(model.spec) ? "MISSING" : "not needed",
      price: model.price
        ? `$${model.price.inputPerMTok}/$${model.price.outputPerMTok} per Mtok`
        : "unpriced",
    };
  });
  if (options.json) {
    io.stdout(
      `${JSON.stringify({ schema: "clade.models/1", config: path ?? null, models: rows })}\n`,
    );
    return 0;
  }
  if (rows.length === 0) {
    io.stdout(
      `no models configured${path ? ` in ${path}` : " (no clade.config.json or .ts here)"}; ` +
        "specs work without one, e.g. --model openai:gpt-4o-mini\n",
    );
    return 0;
  }
  io.stdout(`${path}\n\n`);
  io.stdout(
    renderTable(
      ["name", "model", "key from", "key", "price"],
      rows.map((r) => [r.name, r.model, r.keyVariable, r.key, r.price]),
    ),
  );
  return 0;
}
