/**
 * SQLite connections for the shipped databases. A database is built once into a serialized
 * image, and every connection that queries it is opened from that image: in the query pool's
 * children (which so need neither the data generators nor their CPU time to start) and in-process
 * for tests. This module imports nothing of the generators on purpose.
 */
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import type { DatabaseContent } from "./catalog.js";

/** Largest blob randomblob() and zeroblob() may build (SQLite's own allow a gigabyte). */
export const MAX_BLOB_BYTES = 10_000;

/** The database's tables and rows as a serialized SQLite database. */
export function buildImage(content: DatabaseContent): Buffer {
  const connection = new Database(":memory:");
  try {
    connection.transaction(() => {
      for (const table of content.tables) {
        connection.exec(table.ddl);
        const first = table.rows[0];
        if (!first) continue;
        const columns = Object.keys(first);
        const insert = connection.prepare(
          `INSERT INTO ${table.name} (${columns.join(", ")}) ` +
            `VALUES (${columns.map((c) => `@${c}`).join(", ")})`,
        );
        for (const row of table.rows) insert.run(row);
      }
    })();
    return connection.serialize();
  } finally {
    connection.close();
  }
}

/** A read-only in-memory connection to a copy of the image, with capped blob functions. */
export function openImage(image: Uint8Array): Database.Database {
  const bytes = Buffer.from(image.buffer, image.byteOffset, image.byteLength);
  const connection = new Database(bytes);
  capBlobFunctions(connection);
  connection.pragma("query_only = ON");
  return connection;
}

/**
 * randomblob(n) and zeroblob(n) build large values out of nothing: one call per row can take
 * gigabytes and seconds before the query pool's deadline and memory limit stop the query.
 * Capped versions replace SQLite's built-ins on the shared connections, so such queries fail at
 * once with a clear message.
 */
function capBlobFunctions(connection: Database.Database): void {
  const size = (n: unknown): number => {
    const bytes = Math.max(0, Math.floor(Number(n) || 0));
    if (bytes > MAX_BLOB_BYTES)
      throw new Error(`blobs are limited to ${MAX_BLOB_BYTES} bytes here`);
    return bytes;
  };
  connection.function("randomblob", { deterministic: false }, (n: unknown) =>
    randomBytes(Math.max(1, size(n))),
  );
  connection.function("zeroblob", { deterministic: true }, (n: unknown) => Buffer.alloc(size(n)));
}
