/**
 * The app's one way to the data: the server's JSON API, or in a static bundle the same
 * responses saved as classic scripts (file:// pages may not fetch, nor load module scripts).
 */
import {
  apiPath,
  BUNDLE_CALLBACK,
  bundleFile,
  canonicalPath,
  type QueryValue,
} from "../api-path.js";

export type { QueryValue };
export { apiPath };

declare global {
  interface Window {
    __CLADE_BUNDLE__?: boolean;
    [BUNDLE_CALLBACK]?: (address: string, response: unknown) => void;
  }
}

export const isBundle = (): boolean => window.__CLADE_BUNDLE__ === true;

/** The viewer's token: in the page on loopback, or brought in the address (`?token=`). */
export function token(): string | undefined {
  const fromUrl = new URLSearchParams(location.search).get("token");
  if (fromUrl) sessionStorage.setItem("clade-token", fromUrl);
  return (
    document.querySelector<HTMLMetaElement>('meta[name="clade-token"]')?.content ??
    sessionStorage.getItem("clade-token") ??
    undefined
  );
}

class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const bundled = new Map<string, unknown>();
const waiting = new Map<string, ((value: unknown) => void)[]>();

function loadBundled(address: string): Promise<unknown> {
  const key = canonicalPath(address);
  if (bundled.has(key)) return Promise.resolve(bundled.get(key));
  window[BUNDLE_CALLBACK] ??= (at, response) => {
    bundled.set(at, response);
    for (const resolve of waiting.get(at) ?? []) resolve(response);
    waiting.delete(at);
  };
  return new Promise((resolve, reject) => {
    const list = waiting.get(key) ?? [];
    list.push(resolve);
    waiting.set(key, list);
    const script = document.createElement("script");
    script.src = bundleFile(key);
    script.onerror = () => {
      waiting.delete(key);
      reject(new ApiError("not in this bundle (export it with the run, or use clade view)", 404));
    };
    script.onload = () => script.remove();
    document.head.append(script);
  });
}

/** Requests on their way, by address: a second ask for one shares it (the runs page asks twice). */
const inFlight = new Map<string, Promise<unknown>>();

/**
 * The response at an API address. While a request for it is on its way, another ask gets the
 * same promise; once it has settled, the next ask sends a new one.
 */
export function getJson<T>(address: string): Promise<T> {
  let pending = inFlight.get(address);
  if (pending === undefined) {
    pending = (isBundle() ? loadBundled(address) : fetchJson(address)).finally(() => {
      if (inFlight.get(address) === pending) inFlight.delete(address);
    });
    inFlight.set(address, pending);
  }
  return pending as Promise<T>;
}

/**
 * After the store changed, a request sent before may answer with what it was: the asks that
 * follow send new ones.
 */
export function forgetInFlight(): void {
  inFlight.clear();
}

async function fetchJson(address: string): Promise<unknown> {
  const secret = token();
  const response = await fetch(`/api${address}`, {
    headers: secret ? { authorization: `Bearer ${secret}` } : {},
  });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok)
    throw new ApiError((body as { error?: string }).error ?? "error", response.status);
  return body;
}

export async function postJson<T>(address: string, payload: unknown): Promise<T> {
  const secret = token();
  const response = await fetch(`/api${address}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret ? { authorization: `Bearer ${secret}` } : {}),
    },
    body: JSON.stringify(payload),
  });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok)
    throw new ApiError((body as { error?: string }).error ?? "error", response.status);
  return body as T;
}
