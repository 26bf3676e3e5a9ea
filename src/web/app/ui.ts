/** Small pieces every page uses: tables, loading and error lines, pagers, numbers. */
import type { ComponentChildren } from "preact";
import { html } from "./html.js";

export function Loading() {
  return html`<p class="muted" data-testid="loading">loading…</p>`;
}

export function ErrorLine({ message }: { message: string }) {
  return html`<p class="error" role="alert">${message}</p>`;
}

/** Renders children once data is there; loading and error lines before that. */
export function Loaded<T>({
  state,
  children,
}: {
  state: { data: T | undefined; error: string | undefined };
  children: (data: T) => ComponentChildren;
}) {
  if (state.error !== undefined && state.data === undefined)
    return html`<${ErrorLine} message=${state.error} />`;
  if (state.data === undefined) return html`<${Loading} />`;
  return html`${children(state.data)}`;
}

export interface Column<Row> {
  label: string;
  /** Shown as the column header's tooltip: what the figure means. */
  title?: string;
  cell: (row: Row) => ComponentChildren;
  numeric?: boolean;
}

export function Table<Row>({
  rows,
  columns,
  rowKey,
  testId,
  empty = "nothing here",
}: {
  rows: readonly Row[];
  columns: readonly Column<Row>[];
  rowKey: (row: Row) => string | number;
  testId?: string;
  empty?: string;
}) {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table data-testid=${testId}>
    <thead><tr>${columns.map((c) => html`<th title=${c.title} class=${c.numeric ? "num" : ""}>${c.label}</th>`)}</tr></thead>
    <tbody>${rows.map(
      (row) =>
        html`<tr key=${rowKey(row)}>${columns.map(
          (c) => html`<td class=${c.numeric ? "num" : ""}>${c.cell(row)}</td>`,
        )}</tr>`,
    )}</tbody>
  </table>`;
}

/** "More" for keyset pages: the caller keeps the cursors it has followed. */
export function MoreButton({
  next,
  onMore,
  testId,
}: {
  next: string | null;
  onMore: (cursor: string) => void;
  testId?: string;
}) {
  if (next === null) return null;
  return html`<button class="more" data-testid=${testId} onClick=${() => onMore(next)}>more</button>`;
}

export function rate(value: number | null | undefined, digits = 3): string {
  return value === null || value === undefined || Number.isNaN(value)
    ? "n/a"
    : value.toFixed(digits);
}

export function interval(value: { low: number; high: number } | null | undefined): string {
  return value ? `[${rate(value.low)}, ${rate(value.high)}]` : "";
}

export function cost(usd: number | null | undefined, unpriced?: boolean): string {
  if (usd === null || usd === undefined) return unpriced ? "unpriced" : "–";
  return `$${usd < 0.01 && usd > 0 ? usd.toFixed(4) : usd.toFixed(2)}${unpriced ? "+" : ""}`;
}

export function when(iso: string | null | undefined): string {
  return iso ? iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "") : "";
}

/**
 * A status with the reason it stopped, if it has one: "stopped budget", or with `brackets`
 * "stopped (budget)".
 */
export function statusText(
  item: { status: string; stopReason: string | null },
  brackets = false,
): string {
  if (!item.stopReason) return item.status;
  return brackets ? `${item.status} (${item.stopReason})` : `${item.status} ${item.stopReason}`;
}

/** A status as a badge: running, complete, killed (resumable), interrupted, stopped. */
export function Status({ status }: { status: string }) {
  const kind = status.split(" ")[0];
  return html`<span class=${`badge status-${kind}`} data-status=${status}>${status}</span>`;
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return html`<section><h2>${title}</h2>${children}</section>`;
}

/** A figure on a card: its value, and under it what it is. */
export function Card({
  label,
  value,
  testId,
  title,
}: {
  label: string;
  value: ComponentChildren;
  testId?: string;
  title?: string;
}) {
  return html`<div class="card" data-testid=${testId} title=${title}><div class="value">${value}</div><div class="label">${label}</div></div>`;
}
