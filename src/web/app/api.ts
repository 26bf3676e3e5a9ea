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

export class ApiError extends Error {
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

export async function getJson<T>(address: string): Promise<T> {
  if (isBundle()) return (await loadBundled(address)) as T;
  const secret = token();
  const response = await fetch(`/api${address}`, {
    headers: secret ? { authorization: `Bearer ${secret}` } : {},
  });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok)
    throw new ApiError((body as { error?: string }).error ?? "error", response.status);
  return body as T;
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
