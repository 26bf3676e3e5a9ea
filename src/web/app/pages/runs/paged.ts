/**
 * One table over a keyset-paged API list: the first page, then each page "more" asks for, each
 * fetched (and kept live) on its own, all in one table. Header cells may sort: the page keeps
 * the sort in its address, so this only reports the click.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { html } from "../../html.js";
import { useApi } from "../../live.js";

export interface PagedColumn<Row> {
  label: string;
  /** The column header's tooltip: what the figure means. */
  title?: string;
  cell: (row: Row) => ComponentChildren;
  numeric?: boolean;
  /** The API's sort key for this column, when it can sort. */
  sort?: string;
}

export interface Sorting {
  key: string;
  dir: "asc" | "desc";
  onSort: (key: string) => void;
}

interface PageOf<Row> {
  items: Row[];
  nextCursor: string | null;
}

interface PagedProps<Row> {
  /** The address of the page after a cursor (undefined: the first page). */
  address: (cursor: string | undefined) => string;
  columns: readonly PagedColumn<Row>[];
  rowKey: (row: Row) => string | number;
  rowClass?: (row: Row) => string;
  testId: string;
  empty?: string;
  sorting?: Sorting;
}

function Chunk<Row>({
  address,
  columns,
  rowKey,
  rowClass,
  onLoaded,
}: {
  address: string;
  columns: readonly PagedColumn<Row>[];
  rowKey: (row: Row) => string | number;
  rowClass?: (row: Row) => string;
  onLoaded: (page: PageOf<Row>) => void;
}) {
  const state = useApi<PageOf<Row>>(address);
  useEffect(() => {
    if (state.data) onLoaded(state.data);
  }, [state.data, onLoaded]);
  if (state.data === undefined) {
    const text = state.error ?? "loading…";
    return html`<tbody><tr><td colspan=${columns.length} class=${state.error ? "error" : "muted"}>${text}</td></tr></tbody>`;
  }
  return html`<tbody>${state.data.items.map(
    (row) =>
      html`<tr key=${rowKey(row)} class=${rowClass?.(row) ?? ""}>${columns.map(
        (c) => html`<td class=${c.numeric ? "num" : ""}>${c.cell(row)}</td>`,
      )}</tr>`,
  )}</tbody>`;
}

/** Give it a `key` of its first page's address, so a new filter starts again from page one. */
export function PagedTable<Row>(props: PagedProps<Row>) {
  const { address, columns, rowKey, rowClass, testId, empty = "nothing here", sorting } = props;
  const [cursors, setCursors] = useState<string[]>([]);
  const [pages, setPages] = useState<Record<number, PageOf<Row>>>({});
  // One stable callback per page, so a page's effect does not run again on every render.
  const [handlers] = useState(() => new Map<number, (page: PageOf<Row>) => void>());
  const handler = (index: number) => {
    let onLoaded = handlers.get(index);
    if (onLoaded === undefined) {
      onLoaded = (page) => setPages((all) => ({ ...all, [index]: page }));
      handlers.set(index, onLoaded);
    }
    return onLoaded;
  };
  const last = pages[cursors.length];
  const firstEmpty = pages[0] !== undefined && pages[0].items.length === 0;
  const header = (c: PagedColumn<Row>) => {
    if (!c.sort || !sorting) {
      return html`<th title=${c.title} class=${c.numeric ? "num" : ""}>${c.label}</th>`;
    }
    const active = sorting.key === c.sort;
    const arrow = active ? (sorting.dir === "asc" ? " ▲" : " ▼") : "";
    return html`<th title=${c.title} class=${`sortable ${c.numeric ? "num" : ""} ${active ? "sorted" : ""}`}
      data-sort=${c.sort} aria-sort=${active ? (sorting.dir === "asc" ? "ascending" : "descending") : "none"}
      onClick=${() => sorting.onSort(c.sort as string)}>${c.label}${arrow}</th>`;
  };
  return html`<div class="paged">
    <table data-testid=${testId}>
      <thead><tr>${columns.map(header)}</tr></thead>
      ${[undefined, ...cursors].map(
        (cursor, index) =>
          html`<${Chunk} key=${cursor ?? "first"} address=${address(cursor)} columns=${columns}
            rowKey=${rowKey} rowClass=${rowClass} onLoaded=${handler(index)} />`,
      )}
    </table>
    ${firstEmpty ? html`<p class="muted" data-testid=${`${testId}-empty`}>${empty}</p>` : null}
    ${
      last?.nextCursor
        ? html`<button class="more" data-testid=${`${testId}-more`}
            onClick=${() => setCursors((list) => [...list, last.nextCursor as string])}>more</button>`
        : null
    }
  </div>`;
}
