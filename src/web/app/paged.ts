/**
 * The app's one list over a keyset-paged API address: the first page, then each page "more"
 * asks for, all in one table. Every page is its own live request (useApi), so a page already
 * shown updates by itself while a job runs. Header cells may sort: the page keeps the sort in
 * its address, so this only reports the click.
 */
import { useEffect, useState } from "preact/hooks";
import { apiPath, type QueryValue } from "./api.js";
import { html } from "./html.js";
import { useApi } from "./live.js";
import { type Route, withQuery } from "./router.js";
import { type Column, Loading, MoreButton } from "./ui.js";

export interface PagedColumn<Row> extends Column<Row> {
  /** The API's sort key for this column, when it can sort. */
  sort?: string;
}

interface Sorting {
  key: string;
  dir: "asc" | "desc";
  onSort: (key: string) => void;
}

/**
 * The sort a page keeps in its address (`sort`, `dir`), `fallback` without one. A click on the
 * sorted column flips its direction; on another column it sorts by it, descending (the
 * fallback's own direction for the fallback's column). The fallback leaves the address bare.
 */
export function routeSorting(route: Route, fallback: Omit<Sorting, "onSort">): Sorting {
  const key = route.query.sort ?? fallback.key;
  const asked = route.query.dir;
  const dir = asked === "asc" || asked === "desc" ? asked : fallback.dir;
  const onSort = (next: string) => {
    const nextDir =
      next === key
        ? dir === "desc"
          ? "asc"
          : "desc"
        : next === fallback.key
          ? fallback.dir
          : "desc";
    const isDefault = next === fallback.key && nextDir === fallback.dir;
    withQuery(route, { sort: isDefault ? undefined : next, dir: isDefault ? undefined : nextDir });
  };
  return { key, dir, onSort };
}

interface PageOf<Row> {
  items: Row[];
  nextCursor: string | null;
}

/** Attributes of a row's `<tr>`: its class, its data-testid, data-* for tests and styles. */
type RowAttributes = Record<string, string | number | undefined>;

interface PagedProps<Row> {
  /** The list's API path and query; a page's address adds its cursor (apiPath). */
  path: string;
  query?: Record<string, QueryValue>;
  columns: readonly PagedColumn<Row>[];
  rowKey: (row: Row) => string | number;
  rowAttrs?: (row: Row) => RowAttributes;
  /** The table's data-testid; `<testId>-empty` and `<testId>-more` name its message and button. */
  testId: string;
  /** The table's class. */
  tableClass?: string;
  /** Said under the header when the first page is empty. */
  empty?: string;
  sorting?: Sorting;
}

function Chunk<Row>({
  address,
  columns,
  rowKey,
  rowAttrs,
  onLoaded,
}: {
  address: string;
  columns: readonly PagedColumn<Row>[];
  rowKey: (row: Row) => string | number;
  rowAttrs?: (row: Row) => RowAttributes;
  /** Told the page once it is there (again on every refresh), or null when it failed instead. */
  onLoaded: (page: PageOf<Row> | null) => void;
}) {
  const state = useApi<PageOf<Row>>(address);
  useEffect(() => {
    if (state.data) onLoaded(state.data);
    else if (state.error !== undefined) onLoaded(null);
  }, [state.data, state.error, onLoaded]);
  if (state.data === undefined) {
    const text = state.error ?? "loading…";
    return html`<tbody><tr><td colspan=${columns.length} class=${state.error ? "error" : "muted"}>${text}</td></tr></tbody>`;
  }
  return html`<tbody>${state.data.items.map(
    (row) =>
      html`<tr key=${rowKey(row)} ...${rowAttrs?.(row) ?? {}}>${columns.map(
        (c) => html`<td class=${c.numeric ? "num" : ""}>${c.cell(row)}</td>`,
      )}</tr>`,
  )}</tbody>`;
}

/** Another path or query (a new filter, a new sort) starts again from the first page. */
export function PagedTable<Row>(props: PagedProps<Row>) {
  return html`<${Pages} key=${apiPath(props.path, props.query)} ...${props} />`;
}

function Pages<Row>(props: PagedProps<Row>) {
  const { path, query, columns, rowKey, rowAttrs, testId, tableClass, sorting } = props;
  const { empty = "nothing here" } = props;
  const [cursors, setCursors] = useState<string[]>([]);
  const [pages, setPages] = useState<Record<number, PageOf<Row> | null>>({});
  // One stable callback per page, so a page's effect does not run again on every render.
  const [handlers] = useState(() => new Map<number, (page: PageOf<Row> | null) => void>());
  const handler = (index: number) => {
    let onLoaded = handlers.get(index);
    if (onLoaded === undefined) {
      onLoaded = (page) => setPages((all) => ({ ...all, [index]: page }));
      handlers.set(index, onLoaded);
    }
    return onLoaded;
  };
  const last = pages[cursors.length];
  // Until the first page is there (or failed), a loading line stands in for the table.
  const waiting = pages[0] === undefined;
  const firstEmpty = pages[0]?.items.length === 0;
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
    ${waiting ? html`<${Loading} />` : null}
    <table data-testid=${testId} class=${tableClass} hidden=${waiting}>
      <thead><tr>${columns.map(header)}</tr></thead>
      ${[undefined, ...cursors].map(
        (cursor, index) =>
          html`<${Chunk} key=${cursor ?? "first"} address=${apiPath(path, { ...query, cursor })} columns=${columns}
            rowKey=${rowKey} rowAttrs=${rowAttrs} onLoaded=${handler(index)} />`,
      )}
    </table>
    ${firstEmpty ? html`<p class="muted" data-testid=${`${testId}-empty`}>${empty}</p>` : null}
    <${MoreButton} next=${last?.nextCursor ?? null} testId=${`${testId}-more`}
      onMore=${(next: string) => setCursors((list) => [...list, next])} />
  </div>`;
}
