/** The shape of a shipped database: tables with their DDL and rows, and its question templates. */

/** A value as stored in the databases (no blobs). */
export type SqlValue = string | number | null;

export interface TableSpec {
  name: string;
  /** The CREATE TABLE statement, shown to the agent as the schema. */
  ddl: string;
  /** One object per row, keyed by column name. */
  rows: readonly Record<string, SqlValue>[];
}

/** One question instance: its phrasings (the first is the default) and its gold query. */
export interface QuestionSpec {
  /** The template it came from, e.g. "shop.revenue-in-month". */
  template: string;
  texts: readonly string[];
  sql: string;
}

export interface DatabaseContent {
  tables: readonly TableSpec[];
  questions: readonly QuestionSpec[];
}

export interface DatabaseSpec {
  name: string;
  /** One line on what the database holds, shown with the schema. */
  description: string;
  /** Deterministic: the same records and questions on every call. */
  generate(): DatabaseContent;
}

/** Question instances of one template: one per parameter value. */
export function ask<P>(
  template: string,
  params: readonly P[],
  texts: ReadonlyArray<(param: P) => string>,
  sql: (param: P) => string,
): QuestionSpec[] {
  return params.map((param) => ({
    template,
    texts: texts.map((text) => text(param)),
    sql: sql(param),
  }));
}
