/**
 * `clade view --bundle DIR`: a static copy of chosen runs that opens from the file system with no
 * server. The chosen items are copied into a private store (everything else deleted from the
 * copy), the viewer's own API is asked, in memory, for every address its pages use, and each
 * response is written as a classic script that hands it to the page (`data/<hash>.js`, see
 * api-path.ts): a page opened as a file may not fetch, nor load module scripts. The folder is
 * written beside its destination and renamed into place, so it is whole or absent.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type Database from "better-sqlite3";
import { openDatabase } from "../store/database.js";
import { StoreError } from "../store/errors.js";
import type { MetaResponse } from "./api/meta.js";
import { BUNDLE_CALLBACK, bundleFile, canonicalPath } from "./api-path.js";
import { API_MODULES, askApi, assetsDir, createViewApp } from "./server.js";
import { StoreView } from "./store-view.js";

export interface BundleOptions {
  db: string;
  dir: string;
  /** Ids of runs, searches, training runs, CycleQD runs or goal evaluations; empty = all. */
  ids: readonly string[];
}

export interface BundleWritten {
  dir: string;
  index: string;
  files: number;
  bytes: number;
  items: { kind: string; id: string }[];
}

/** The tables of things a bundle can be made of, and what each is called for people. */
const KINDS = [
  { table: "runs", kind: "run" },
  { table: "searches", kind: "search" },
  { table: "training_runs", kind: "training run" },
  { table: "qd_runs", kind: "CycleQD run" },
  { table: "goal_runs", kind: "goal evaluation" },
] as const;

/** Pages a list may have in a bundle: beyond it the page's "more" says it is not bundled. */
const MAX_PAGES_PER_LIST = 2_000;

export async function writeBundle(options: BundleOptions): Promise<BundleWritten> {
  if (!existsSync(options.db)) throw new StoreError(`no store at ${options.db}`);
  const target = resolve(options.dir);
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new StoreError(`${options.dir} exists and is not empty: give a new folder to --bundle`);
  }
  const assets = assetsDir();
  if (!existsSync(join(assets, "app.js"))) {
    throw new StoreError("the web app is not built: run npm run build");
  }
  const scratch = mkdtempSync(join(tmpdir(), "clade-bundle-"));
  mkdirSync(dirname(target), { recursive: true });
  const staging = mkdtempSync(join(dirname(target), `.${basename(target)}.partial-`));
  try {
    const copy = join(scratch, "store.db");
    const items = await copyChosen(options.db, copy, options.ids);
    const written = await crawl(copy, staging, basename(options.db));
    const assetFiles = readdirSync(assets);
    for (const file of assetFiles) {
      if (file !== "index.html") copyFileSync(join(assets, file), join(staging, file));
    }
    const index = readFileSync(join(assets, "index.html"), "utf8").replace(
      "<head>",
      "<head><script>window.__CLADE_BUNDLE__ = true;</script>",
    );
    writeFileSync(join(staging, "index.html"), index);
    if (existsSync(target)) rmSync(target, { recursive: true });
    renameSync(staging, target);
    return {
      dir: target,
      index: join(target, "index.html"),
      files: written.files + assetFiles.length,
      bytes: written.bytes,
      items,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Copies the store and deletes from the copy everything not chosen (with its rows). */
async function copyChosen(
  source: string,
  copy: string,
  ids: readonly string[],
): Promise<{ kind: string; id: string }[]> {
  const reader = openDatabase(source, { readonly: true });
  try {
    await reader.backup(copy);
  } finally {
    reader.close();
  }
  const db = openDatabase(copy);
  try {
    const found: { kind: string; id: string }[] = [];
    const wanted = new Set(ids);
    const tables = KINDS.map(({ table, kind }) => ({
      table,
      kind,
      ids: db.prepare(`SELECT id FROM ${table}`).pluck().all() as string[],
    }));
    for (const { kind, ids: stored } of tables) {
      for (const id of stored) {
        if (wanted.size === 0 || wanted.has(id)) found.push({ kind, id });
      }
    }
    const missing = ids.filter((id) => !found.some((item) => item.id === id));
    if (missing.length > 0) {
      throw new StoreError(
        `no run, search, training run, CycleQD run or goal evaluation "${missing[0]}" in ${source}`,
      );
    }
    if (wanted.size > 0) {
      // A search's node evaluations are eval runs named <search id>.n<node>: they come with it.
      const keep = (table: string, id: string) =>
        wanted.has(id) ||
        (table === "runs" && [...wanted].some((chosen) => id.startsWith(`${chosen}.n`)));
      db.transaction(() => {
        for (const { table, ids: stored } of tables) {
          const remove = db.prepare(`DELETE FROM ${table} WHERE id = ?`);
          for (const id of stored) {
            if (!keep(table, id)) remove.run(id);
          }
        }
      })();
    }
    return found;
  } finally {
    db.close();
  }
}

/** Asks the viewer's API for every address the pages use and writes each response. */
async function crawl(
  copy: string,
  out: string,
  storeName: string,
): Promise<{ files: number; bytes: number }> {
  const view = new StoreView(copy, { readonly: true });
  const app = createViewApp({ view, token: "bundle", loopback: true });
  const db = view.db as Database.Database;
  mkdirSync(join(out, "data"));
  const done = new Set<string>();
  let bytes = 0;
  const save = (address: string, body: unknown) => {
    const text = `${BUNDLE_CALLBACK}(${JSON.stringify(address)},${JSON.stringify(body)});\n`;
    writeFileSync(join(out, bundleFile(address)), text);
    bytes += text.length;
    done.add(address);
  };
  const get = async (address: string): Promise<unknown> => {
    const response = await askApi(app, address);
    if (!response.ok) return undefined; // an address a page may ask for but that has no data
    return response.json();
  };
  try {
    const meta = (await get("/meta")) as MetaResponse;
    save("/meta", {
      ...meta,
      store: { ...meta.store, path: storeName, live: false, writable: false, readOnlyReason: null },
      bundle: true,
    } satisfies MetaResponse);
    for (const module of API_MODULES) {
      for (const start of module.bundle?.(db, "all") ?? []) {
        let address: string | undefined = canonicalPath(start);
        for (let pages = 0; address !== undefined && pages < MAX_PAGES_PER_LIST; pages++) {
          if (done.has(address)) break;
          const body = await get(address);
          if (body === undefined) break;
          save(address, body);
          const next = (body as { nextCursor?: unknown }).nextCursor;
          address = typeof next === "string" ? canonicalPath(address, { cursor: next }) : undefined;
        }
      }
    }
  } finally {
    view.close();
  }
  return { files: done.size, bytes };
}
