/**
 * Who may use the viewer. On loopback anyone on this machine may read, as with the CLI; off
 * loopback every API request needs the token. Every write (a review label) needs the token on
 * loopback too, and must come from the viewer's own page (its Origin), so another site open in
 * the same browser can neither read (no CORS headers are ever sent) nor write. A server bound to
 * loopback also refuses Host names that are not loopback, against DNS rebinding.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { MiddlewareHandler } from "hono";

export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (name === "localhost" || name === "::1") return true;
  return isIP(name) === 4 && name.startsWith("127.");
}

export function newToken(): string {
  return randomBytes(24).toString("base64url");
}

function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request carries: `Authorization: Bearer T`, or `?token=T` (EventSource, links). */
function requestToken(header: string | undefined, query: string | undefined): string | undefined {
  const bearer = header?.match(/^Bearer (.+)$/)?.[1];
  return bearer ?? query;
}

/** The host name of a Host header (`[::1]:7575` → `::1`). */
function hostName(host: string): string {
  const bracketed = host.match(/^\[([^\]]+)\]/);
  if (bracketed) return bracketed[1] as string;
  return host.replace(/:\d+$/, "");
}

export function guard(options: { token: string; loopback: boolean }): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    if (options.loopback && !isLoopbackHost(hostName(host))) {
      return c.json({ error: "this viewer answers loopback host names only" }, 403);
    }
    const isApi = c.req.path.startsWith("/api/");
    const isWrite = c.req.method !== "GET" && c.req.method !== "HEAD";
    const tokenOk = sameToken(
      requestToken(c.req.header("authorization"), c.req.query("token")),
      options.token,
    );
    if (isApi && (isWrite || !options.loopback) && !tokenOk) {
      return c.json({ error: "this needs the viewer's token (printed when it started)" }, 401);
    }
    if (isWrite) {
      const origin = c.req.header("origin");
      if (origin !== undefined && origin !== `${new URL(c.req.url).protocol}//${host}`) {
        return c.json({ error: "writes are taken from the viewer's own page only" }, 403);
      }
    }
    await next();
  };
}
