/**
 * Keyset cursors for the API's pages: the last row's sort key, as base64url JSON. A page after a
 * cursor starts strictly after that key, so pages stay stable while a run adds episodes (OFFSET
 * would shift them and costs a scan of the rows it skips).
 */
import { z } from "zod";

export type CursorKey = readonly (string | number | null)[];

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

const KEY = z.array(z.union([z.string(), z.number(), z.null()])).max(8);

/** The key a cursor holds, or undefined when it is not one this server wrote. */
export function decodeCursor(cursor: string, length: number): CursorKey | undefined {
  try {
    const key = KEY.safeParse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
    return key.success && key.data.length === length ? key.data : undefined;
  } catch {
    return undefined;
  }
}

/** One page of rows: `limit` of them, and the cursor after the last when more follow. */
export function page<Row>(
  rows: readonly Row[],
  limit: number,
  key: (row: Row) => CursorKey,
): { items: Row[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(key(last)) : null,
  };
}
