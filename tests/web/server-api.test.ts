/**
 * The viewer's server as a whole: what it tells about the store, a store that appears after it
 * started, the token and origin rules, loopback host names, live change events, the app's page,
 * and the static bundle written from a chosen run.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { RunStore } from "../../src/store/run-store.js";
import type { MetaResponse } from "../../src/web/api/meta.js";
import { apiPath, bundleFile, canonicalPath } from "../../src/web/api-path.js";
import { isLoopbackHost } from "../../src/web/auth.js";
import { writeBundle } from "../../src/web/bundle.js";
import { decodeCursor, encodeCursor, page } from "../../src/web/cursor.js";
import type { ViewServer } from "../../src/web/server.js";
import { api, scratchDir, startViewer } from "./support.js";

const scratch = scratchDir("server");
afterAll(() => scratch.remove());

function addRun(db: string, id: string): void {
  const store = RunStore.open(db);
  store.startRun({ id, env: "maze", envVersion: "1", agent: "reference", config: { id } });
  store.close();
}

/** A raw request, for headers fetch will not send as given (Host, Origin). */
function raw(
  viewer: ViewServer,
  path: string,
  headers: Record<string, string>,
  method = "GET",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: viewer.port, path, method, headers }, (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end(method === "POST" ? "{}" : undefined);
  });
}

describe("addresses and cursors", () => {
  it("spells an address one way whatever the order of its parameters", () => {
    expect(apiPath("/runs", { sort: "created", q: "", limit: 50, dir: undefined })).toBe(
      "/runs?limit=50&sort=created",
    );
    expect(canonicalPath("/runs?sort=created&limit=50")).toBe("/runs?limit=50&sort=created");
    expect(bundleFile("/runs?sort=created&limit=50")).toBe(
      bundleFile("/runs?limit=50&sort=created"),
    );
    expect(bundleFile("/runs?limit=51&sort=created")).not.toBe(
      bundleFile("/runs?limit=50&sort=created"),
    );
    expect(bundleFile("/meta")).toMatch(/^data\/[0-9a-f]{16}\.js$/);
  });

  it("pages by key: the next cursor holds the last row's key, and only its own cursors decode", () => {
    const rows = [1, 2, 3, 4, 5].map((n) => ({ n }));
    const first = page(rows.slice(0, 3), 2, (row) => [row.n]);
    expect(first.items).toEqual([{ n: 1 }, { n: 2 }]);
    expect(decodeCursor(first.nextCursor as string, 1)).toEqual([2]);
    expect(page(rows.slice(0, 2), 2, (row) => [row.n]).nextCursor).toBeNull();
    expect(decodeCursor(encodeCursor(["a", 1]), 1)).toBeUndefined();
    expect(decodeCursor("not-a-cursor", 1)).toBeUndefined();
  });

  it("knows loopback host names", () => {
    for (const host of ["127.0.0.1", "127.3.2.1", "localhost", "::1", "[::1]"]) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ["0.0.0.0", "10.0.0.1", "example.com", "::", "localhost.evil.com"]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe("a viewer on loopback", () => {
  const db = join(scratch.dir, "later", "store.db");
  let viewer: ViewServer;
  beforeAll(async () => {
    viewer = await startViewer(db);
  });
  afterAll(() => viewer.close());

  it("shows that there is no store yet, then the store once a run makes it", async () => {
    const before = await api<MetaResponse>(viewer, "/meta");
    expect(before.status).toBe(200);
    expect(before.body.store).toMatchObject({ path: db, exists: false });
    expect(Object.values(before.body.capabilities).every((n) => n === 0)).toBe(true);
    expect(existsSync(db)).toBe(false); // looking does not create it
    mkdirSync(join(scratch.dir, "later"), { recursive: true });
    addRun(db, "first");
    const after = await api<MetaResponse>(viewer, "/meta");
    expect(after.body.store).toMatchObject({ exists: true, live: true, writable: true });
    expect(after.body.capabilities.runs).toBe(1);
  });

  it("serves the app with the token in the page, and nothing outside its folder", async () => {
    const page = await fetch(viewer.url);
    const html = await page.text();
    expect(page.headers.get("access-control-allow-origin")).toBeNull();
    expect(html).toContain(`<meta name="clade-token" content="${viewer.token}">`);
    expect(html).toContain('<script src="app.js">');
    for (const path of ["/../package.json", "/%2e%2e/package.json", "/..%2fpackage.json"]) {
      const response = await raw(viewer, path, {});
      expect(response.body, path).not.toContain('"name": "clade"');
    }
  });

  it("answers unknown API addresses with one error line", async () => {
    const missing = await api<{ error: string }>(viewer, "/nothing/here");
    expect(missing).toEqual({ status: 404, body: { error: "no API at /api/nothing/here" } });
  });

  it("refuses host names that are not loopback (DNS rebinding)", async () => {
    const rebound = await raw(viewer, "/api/meta", { host: `evil.example:${viewer.port}` });
    expect(rebound.status).toBe(403);
    expect((await raw(viewer, "/api/meta", { host: `localhost:${viewer.port}` })).status).toBe(200);
  });

  it("takes writes only with the token, and only from its own page", async () => {
    const host = `127.0.0.1:${viewer.port}`;
    const json = { "content-type": "application/json", host };
    const noToken = await raw(viewer, "/api/meta", json, "POST");
    expect(noToken.status).toBe(401);
    const bearer = { ...json, authorization: `Bearer ${viewer.token}` };
    const wrongToken = await raw(
      viewer,
      "/api/meta",
      { ...bearer, authorization: "Bearer x" },
      "POST",
    );
    expect(wrongToken.status).toBe(401);
    const otherSite = await raw(
      viewer,
      "/api/meta",
      { ...bearer, origin: "http://evil.example" },
      "POST",
    );
    expect(otherSite.status).toBe(403);
    // Past the guard: the address takes no POST, which is the API's own 404.
    const own = await raw(viewer, "/api/meta", { ...bearer, origin: `http://${host}` }, "POST");
    expect(own.status).toBe(404);
  });

  it("tells listening pages when another process commits", async () => {
    const controller = new AbortController();
    const response = await fetch(new URL("api/events", viewer.url), { signal: controller.signal });
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    const readUntil = async (pattern: RegExp) => {
      const deadline = Date.now() + 5_000;
      while (!pattern.test(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
      return pattern.test(text);
    };
    expect(await readUntil(/event: hello/)).toBe(true);
    addRun(db, "second");
    expect(await readUntil(/event: changed\ndata: \{"version":\d+\}/)).toBe(true);
    controller.abort();
  });
});

describe("a store from before the viewer", () => {
  it("is upgraded once when the viewer may write it: the viewer's indexes are added", async () => {
    const db = join(scratch.dir, "old.db");
    const raw = new Database(db);
    raw.pragma("journal_mode = WAL");
    for (const migration of MIGRATIONS.slice(0, 10)) raw.exec(migration);
    raw.pragma("user_version = 10");
    raw
      .prepare(
        `INSERT INTO runs (id, env, env_version, agent, config, status, created_at, updated_at)
         VALUES ('before', 'maze', '1', 'random', '{}', 'complete', 'x', 'x')`,
      )
      .run();
    raw.close();
    const viewer = await startViewer(db);
    try {
      const meta = await api<MetaResponse>(viewer, "/meta");
      expect(meta.body.store).toMatchObject({ live: true, writable: true });
      expect(meta.body.capabilities.runs).toBe(1);
      const check = new Database(db, { readonly: true });
      expect(check.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      const indexes = check
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'episodes'")
        .pluck()
        .all();
      expect(indexes).toEqual(
        expect.arrayContaining(["episodes_by_outcome", "episodes_by_task_outcome"]),
      );
      check.close();
    } finally {
      await viewer.close();
    }
  });
});

describe("a viewer that demands the token (as off loopback)", () => {
  let viewer: ViewServer;
  beforeAll(async () => {
    const db = join(scratch.dir, "token.db");
    addRun(db, "r");
    viewer = await startViewer(db, { requireToken: true });
  });
  afterAll(() => viewer.close());

  it("answers the API only with the token, by header or in the address", async () => {
    expect((await api(viewer, "/meta")).status).toBe(401);
    const header = { headers: { authorization: `Bearer ${viewer.token}` } };
    expect((await api(viewer, "/meta", header)).status).toBe(200);
    expect((await api(viewer, `/meta?token=${viewer.token}`)).status).toBe(200);
    expect(viewer.urlWithToken).toContain(`?token=${viewer.token}`);
  });

  it("does not put the token in the page", async () => {
    const html = await (await fetch(viewer.url)).text();
    expect(html).not.toContain(viewer.token);
  });
});

describe("a static bundle", () => {
  it("holds the chosen run only, as scripts the page loads from the file system", async () => {
    const db = join(scratch.dir, "bundle.db");
    addRun(db, "chosen");
    addRun(db, "other");
    const dir = join(scratch.dir, "out", "bundle");
    const written = await writeBundle({ db, dir, ids: ["chosen"] });
    expect(written.items).toEqual([{ kind: "run", id: "chosen" }]);
    const index = readFileSync(join(dir, "index.html"), "utf8");
    expect(index).toContain("window.__CLADE_BUNDLE__ = true");
    expect(existsSync(join(dir, "app.js"))).toBe(true);
    const meta = readFileSync(join(dir, bundleFile("/meta")), "utf8");
    const payload = JSON.parse(meta.slice(meta.indexOf(",") + 1, meta.lastIndexOf(")")));
    expect(payload).toMatchObject({ bundle: true, capabilities: { runs: 1 } });
    expect(payload.store).toMatchObject({ path: "bundle.db", live: false, writable: false });
    // Nothing half-written beside it, and the store itself untouched.
    expect(readdirSync(join(scratch.dir, "out"))).toEqual(["bundle"]);
    const store = RunStore.open(db, { readonly: true });
    expect(store.getRun("other")).toBeDefined();
    store.close();
  });

  it("refuses an unknown id and a folder that is not empty, writing nothing", async () => {
    const db = join(scratch.dir, "bundle.db");
    const dir = join(scratch.dir, "refused");
    await expect(writeBundle({ db, dir, ids: ["nope"] })).rejects.toThrow(/no run.*"nope"/);
    expect(existsSync(dir)).toBe(false);
    mkdirSync(dir);
    writeFileSync(join(dir, "keep.txt"), "mine");
    await expect(writeBundle({ db, dir, ids: [] })).rejects.toThrow(/not empty/);
    expect(readdirSync(dir)).toEqual(["keep.txt"]);
  });
});
