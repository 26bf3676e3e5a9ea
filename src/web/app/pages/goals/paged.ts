/**
 * A keyset-paged list as table bodies: the first page, then one more for every cursor the
 * reader followed with "more". Each page is its own live request (useApi), so a page already
 * shown updates by itself while a job runs. Give the component a `key` that changes with the
 * list's filters, so that following starts again from the first page.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { html } from "../../html.js";
import { useApi } from "../../live.js";
import { ErrorLine, Loading, MoreButton } from "../../ui.js";

interface PageOf<Item> {
  items: Item[];
  nextCursor: string | null;
}

export function PagedTable<Item>({
  address,
  head,
  row,
  columns,
  empty,
  testId,
}: {
  address: (cursor: string | undefined) => string;
  head: ComponentChildren;
  row: (item: Item) => ComponentChildren;
  columns: number;
  empty: string;
  testId?: string;
}) {
  const [cursors, setCursors] = useState<string[]>([]);
  const pages = [undefined, ...cursors];
  return html`<table data-testid=${testId}>
    <thead>${head}</thead>
    ${pages.map(
      (cursor, i) =>
        html`<${PageBody}
          key=${cursor ?? "first"}
          address=${address(cursor)}
          row=${row}
          columns=${columns}
          empty=${i === 0 ? empty : undefined}
          onMore=${i === pages.length - 1 ? (next: string) => setCursors([...cursors, next]) : undefined}
        />`,
    )}
  </table>`;
}

function PageBody<Item>({
  address,
  row,
  columns,
  empty,
  onMore,
}: {
  address: string;
  row: (item: Item) => ComponentChildren;
  columns: number;
  empty: string | undefined;
  onMore: ((cursor: string) => void) | undefined;
}) {
  const state = useApi<PageOf<Item>>(address);
  const whole = (children: ComponentChildren) =>
    html`<tbody><tr><td colspan=${columns}>${children}</td></tr></tbody>`;
  if (state.data === undefined) {
    return whole(
      state.error ? html`<${ErrorLine} message=${state.error} />` : html`<${Loading} />`,
    );
  }
  const { items, nextCursor } = state.data;
  if (items.length === 0 && empty) return whole(html`<span class="muted">${empty}</span>`);
  return html`<tbody>${items.map(row)}</tbody>${
    onMore && nextCursor ? whole(html`<${MoreButton} next=${nextCursor} onMore=${onMore} />`) : ""
  }`;
}
