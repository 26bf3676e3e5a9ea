/**
 * `clade view`'s server: the JSON API under /api/ over the store, server-sent events for live
 * pages, and the web app built at `npm run build` (dist/web/public), served from the package with
 * nothing fetched from elsewhere.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { SqliteDatabase } from "../store/database.js";
import { StoreError } from "../store/errors.js";
import { analysesApi } from "./api/analyses.js";
import { episodesApi } from "./api/episodes.js";
import { goalsApi } from "./api/goals.js";
import { metaRoutes } from "./api/meta.js";
import { qdApi } from "./api/qd.js";
import { runsApi } from "./api/runs.js";
import { searchesApi } from "./api/searches.js";
import { trainingApi } from "./api/training.js";
import { guard, isLoopbackHost, newToken } from "./auth.js";
import { ChangeFeed, eventStream } from "./events.js";
import { StoreView } from "./store-view.js";

/** One capability's part of the API, mounted under /api/. */
export interface ApiModule {
  routes: (view: StoreView) => Hono;
  /**
   * For a static bundle (clade view --bundle): the addresses (as apiPath spells them) its pages
   * ask for about the chosen items, which are ids of any kind; a response with a `nextCursor`
   * is followed page by page by the writer. Undefined: nothing of it is bundled.
   */
  bundle?: (db: SqliteDatabase, chosen: Chosen) => string[];
}

/** The ids a bundle is made of ("all": everything in the store). */
export type Chosen = ReadonlySet<string> | "all";

/** Every module of the API (the bundle writer walks them too). */
export const API_MODULES: readonly ApiModule[] = [
  { routes: metaRoutes },
  runsApi,
  episodesApi,
  searchesApi,
  trainingApi,
  qdApi,
  goalsApi,
  analysesApi,
];

/** The built web app: dist/web/public in the package, whether this runs from dist or src. */
export function assetsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return join(dir, "dist", "web", "public");
}

export interface ViewAppOptions {
  view: StoreView;
  token: string;
  /** Trusted as loopback: reads need no token (and the page carries it for writes). */
  loopback: boolean;
  feed?: ChangeFeed;
}

export function createViewApp(options: ViewAppOptions): Hono {
  const { view, token, loopback } = options;
  const feed = options.feed ?? new ChangeFeed(view);
  const app = new Hono();
  app.use("*", guard({ token, loopback }));
  app.onError((error, c) => {
    // hono's own (a body that is not JSON: 400) keep their status; the store's are conflicts.
    const status =
      error instanceof HTTPException ? error.status : error instanceof StoreError ? 409 : 500;
    return c.json({ error: error.message.split("\n")[0] }, status);
  });
  const api = new Hono();
  for (const module of API_MODULES) api.route("/", module.routes(view));
  api.get("/events", (c) => eventStream(c, feed));
  api.all("*", (c) => c.json({ error: `no API at ${c.req.path}` }, 404));
  app.route("/api", api);

  const root = assetsDir();
  const indexFile = join(root, "index.html");
  // On loopback the page carries the token, so its own review form can write; another origin
  // cannot read the page (no CORS). Off loopback the user brings it in the printed address.
  const index = () => {
    if (!existsSync(indexFile)) {
      return `<!doctype html><p>The web app is not built: run <code>npm run build</code>.</p>`;
    }
    const html = readFileSync(indexFile, "utf8");
    return loopback
      ? html.replace("<head>", `<head><meta name="clade-token" content="${token}">`)
      : html;
  };
  app.get("/", (c) => c.html(index()));
  app.get("/index.html", (c) => c.html(index()));
  app.use("/*", serveStatic({ root }));
  app.get("*", (c) => c.html(index()));
  return app;
}

/**
 * Asks the API in memory, as a page on loopback would, with no socket: how the bundle writer,
 * the demo and the benchmark read it.
 */
export function askApi(app: Hono, address: string): Promise<Response> {
  return Promise.resolve(
    app.request(`http://127.0.0.1/api${address}`, { headers: { host: "127.0.0.1" } }),
  );
}

/**
 * An API answer asked in memory (askApi), parsed as JSON; a status other than 2xx throws, saying
 * the status and the address.
 */
export async function askJson<T = unknown>(app: Hono, address: string): Promise<T> {
  const response = await askApi(app, address);
  if (!response.ok) throw new Error(`clade view's API answered ${response.status} for ${address}`);
  return (await response.json()) as T;
}

export interface ViewServerOptions {
  db: string;
  host?: string;
  port?: number;
  token?: string;
  /** Demand the token on loopback too (always so on any other host). */
  requireToken?: boolean;
}

export interface ViewServer {
  url: string;
  /** The address with the token, for hosts other than loopback. */
  urlWithToken: string;
  token: string;
  port: number;
  close(): Promise<void>;
}

export async function startViewServer(options: ViewServerOptions): Promise<ViewServer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token ?? newToken();
  const view = new StoreView(options.db);
  view.db; // open now, so a bad store is one error line before anything listens
  const feed = new ChangeFeed(view);
  const loopback = isLoopbackHost(host) && options.requireToken !== true;
  const app = createViewApp({ view, token, loopback, feed });
  const server = await new Promise<Server>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 7575 }, () =>
      resolve(started as Server),
    );
    started.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shown}:${port}/`;
  return {
    url,
    urlWithToken: `${url}?token=${token}`,
    token,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        feed.stop();
        server.closeAllConnections();
        server.close(() => {
          view.close();
          resolve();
        });
      }),
  };
}
