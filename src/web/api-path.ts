/**
 * The one spelling of an API address, shared by the server, the front end and the static bundle:
 * query parameters sorted by name, empty ones left out. A bundle stores responses under these
 * keys, so the page finds them by asking for the same address it would ask a server for.
 * Pure: runs in Node and in the browser.
 */
export type QueryValue = string | number | boolean | null | undefined;

export function apiPath(path: string, query: Record<string, QueryValue> = {}): string {
  const params = Object.entries(query)
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  return params.length === 0 ? path : `${path}?${params.join("&")}`;
}

/**
 * The address as apiPath would spell it, from any spelling of it (path plus query string), with
 * `changes` to its query (a cursor to follow, say) applied.
 */
export function canonicalPath(address: string, changes: Record<string, QueryValue> = {}): string {
  const mark = address.indexOf("?");
  const query: Record<string, QueryValue> = {};
  if (mark !== -1) {
    for (const [name, value] of new URLSearchParams(address.slice(mark + 1))) query[name] = value;
  }
  return apiPath(mark === -1 ? address : address.slice(0, mark), { ...query, ...changes });
}

/**
 * The file a static bundle keeps an address's response in: `data/<hash>.js`. FNV-1a over the
 * canonical address, 2 × 32 bits, so Node and the browser name it alike with no library.
 */
export function bundleFile(address: string): string {
  const text = canonicalPath(address);
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193) >>> 0;
    b = Math.imul(b ^ code, 0x01000193 + 2) >>> 0;
  }
  return `data/${a.toString(16).padStart(8, "0")}${b.toString(16).padStart(8, "0")}.js`;
}

/** The global a bundle's data files call: `__cladeBundle(address, response)`. */
export const BUNDLE_CALLBACK = "__cladeBundle";
