/** Plain, borderless text tables for terminals (cli-table3 with a light frame). */
import Table from "cli-table3";

export type Cell = string | number;

const LIGHT_FRAME = {
  top: "",
  "top-mid": "",
  "top-left": "",
  "top-right": "",
  bottom: "",
  "bottom-mid": "",
  "bottom-left": "",
  "bottom-right": "",
  left: "",
  "left-mid": "",
  mid: "",
  "mid-mid": "",
  right: "",
  "right-mid": "",
  middle: "  ",
};

export function renderTable(head: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const table = new Table({
    head: [...head],
    chars: LIGHT_FRAME,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
  });
  for (const row of rows) table.push(row.map((cell) => String(cell)));
  const text = table.toString();
  // Rule under the header row, as wide as the table.
  const lines = text.split("\n");
  const width = Math.max(...lines.map((l) => l.trimEnd().length));
  return [lines[0]?.trimEnd(), "-".repeat(width), ...lines.slice(1).map((l) => l.trimEnd())]
    .join("\n")
    .concat("\n");
}

/** A number as a fixed-precision string; NaN or null (no data) prints as "n/a". */
export function formatRate(value: number | null, digits = 3): string {
  return value === null || Number.isNaN(value) ? "n/a" : value.toFixed(digits);
}

/** A percentage with its sign, one decimal by default; NaN (no data) prints as "n/a". */
export function formatPercent(value: number, digits = 1): string {
  return Number.isNaN(value) ? "n/a" : `${value.toFixed(digits)}%`;
}

export function formatInterval(interval: { low: number; high: number }, digits = 3): string {
  if (Number.isNaN(interval.low)) return "n/a";
  return `[${interval.low.toFixed(digits)}, ${interval.high.toFixed(digits)}]`;
}
