/**
 * What the viewer's tests share: a viewer on a store of the test's making (loopback, port 0), and
 * Debian's chromium driven by playwright-core (never a download), with every request checked to
 * stay on loopback and every page error collected. Screenshots go to test-artifacts/screenshots.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { startViewServer, type ViewServer } from "../../src/web/server.js";

export const CHROMIUM = "/usr/bin/chromium";
/** Why the browser tests are skipped here, or undefined when chromium is installed. */
export const noBrowser = existsSync(CHROMIUM)
  ? undefined
  : `no ${CHROMIUM}: install Debian's chromium (apt-get install chromium) to run the browser tests`;
if (noBrowser) console.warn(`skipping the browser tests: ${noBrowser}`);

export const SCREENSHOTS = join(process.cwd(), "test-artifacts", "screenshots");

export function scratchDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `clade-web-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startViewer(
  db: string,
  options: { host?: string; token?: string; requireToken?: boolean } = {},
): Promise<ViewServer> {
  return startViewServer({ db, port: 0, host: options.host ?? "127.0.0.1", ...options });
}

/** GET an API address from a viewer: status and JSON body. */
export async function api<T = unknown>(
  viewer: ViewServer,
  address: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(new URL(`api${address}`, viewer.url), init);
  return { status: response.status, body: (await response.json()) as T };
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}

export interface WatchedPage {
  page: Page;
  /** Page errors, console errors and requests that left loopback: a test expects none. */
  problems: string[];
  screenshot: (name: string) => Promise<void>;
  close: () => Promise<void>;
}

/** A fresh page that records any request off loopback (and blocks it) and any page error. */
export async function openPage(browser: Browser): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  await page.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === "file:" || url.hostname === "127.0.0.1" || url.hostname === "localhost") {
      return route.continue();
    }
    problems.push(`request off loopback: ${url.href}`);
    return route.abort();
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()}`);
  });
  return {
    page,
    problems,
    screenshot: async (name) => {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    close: () => context.close(),
  };
}
