/**
 * Live pages: one EventSource for the app; every useApi hook fetches again when the store
 * changes, so a running job's page updates by itself. A bundle has nothing live.
 */
import { useEffect, useState } from "preact/hooks";
import { forgetInFlight, getJson, isBundle, token } from "./api.js";

type Listener = () => void;
const listeners = new Set<Listener>();
let source: EventSource | undefined;

function listen(listener: Listener): () => void {
  listeners.add(listener);
  if (source === undefined && !isBundle()) {
    const secret = token();
    source = new EventSource(`/api/events${secret ? `?token=${encodeURIComponent(secret)}` : ""}`);
    source.addEventListener("changed", () => {
      forgetInFlight();
      for (const each of listeners) each();
    });
  }
  return () => listeners.delete(listener);
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  /** How many times the data came again after a change in the store. */
  refreshes: number;
}

/** The response at an API address, fetched again whenever the store changes (`live`). */
export function useApi<T>(address: string | undefined, live = true): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({
    data: undefined,
    error: undefined,
    loading: address !== undefined,
    refreshes: 0,
  });
  useEffect(() => {
    if (address === undefined) return;
    let current = true;
    let refreshes = 0;
    // Another address: what was shown belongs to the old one.
    setState({ data: undefined, error: undefined, loading: true, refreshes: 0 });
    const load = () =>
      getJson<T>(address).then(
        (data) => current && setState({ data, error: undefined, loading: false, refreshes }),
        (error: Error) =>
          current && setState((s) => ({ ...s, error: error.message, loading: false })),
      );
    void load();
    const stop = live
      ? listen(() => {
          refreshes++;
          void load();
        })
      : () => undefined;
    return () => {
      current = false;
      stop();
    };
  }, [address, live]);
  return state;
}
