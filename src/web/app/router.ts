/**
 * Hash routes (`#/runs/abc?outcome=failure`): they work from a server and from a bundle opened
 * as a file alike, and a page's filters live in its address, so a view can be shared or reloaded.
 */
import { useEffect, useState } from "preact/hooks";

export interface Route {
  /** The path after `#`, e.g. `/runs/abc`. */
  path: string;
  /** Path segments, decoded. */
  segments: string[];
  query: Record<string, string>;
}

function currentRoute(): Route {
  const hash = location.hash.replace(/^#/, "") || "/";
  const mark = hash.indexOf("?");
  const path = mark === -1 ? hash : hash.slice(0, mark);
  const query: Record<string, string> = {};
  if (mark !== -1) for (const [k, v] of new URLSearchParams(hash.slice(mark + 1))) query[k] = v;
  return { path, segments: path.split("/").filter(Boolean).map(decodeURIComponent), query };
}

/** The address of a page: `href("/runs/a b", { outcome: "failure" })` → `#/runs/a%20b?outcome=failure`. */
export function href(
  path: string,
  query: Record<string, string | number | undefined> = {},
): string {
  const params = Object.entries(query)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  const encoded = path
    .split("/")
    .map((part) => encodeURIComponent(part))
    .join("/");
  return `#${encoded}${params.length ? `?${params.join("&")}` : ""}`;
}

export function navigate(path: string, query: Record<string, string | number | undefined> = {}) {
  location.hash = href(path, query);
}

/** The page's query with some values changed (undefined or "" removes one). */
export function withQuery(route: Route, changes: Record<string, string | number | undefined>) {
  navigate(route.path, { ...route.query, ...changes });
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener("hashchange", update);
    return () => removeEventListener("hashchange", update);
  }, []);
  return route;
}
