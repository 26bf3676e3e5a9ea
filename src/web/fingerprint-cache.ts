/**
 * Computed answers of the API, kept per key until the key's fingerprint changes (a store version,
 * a row's stamp); above the capacity the least recently used goes first. A run still running may
 * be served a value a little older than its last commit, so that a live 100,000-episode page does
 * not spend all its time in the bootstrap: at most one computation per `slack` × its own duration.
 */
export class FingerprintCache<T> {
  #entries = new Map<string, { fingerprint: string; value: T; at: number; ms: number }>();
  /** Computations in flight (getAsync), which later requests for the same key wait for. */
  #running = new Map<string, { fingerprint: string; promise: Promise<{ value: T; at: number }> }>();

  constructor(
    private readonly capacity = 32,
    private readonly slack = 5,
  ) {}

  get(key: string, fingerprint: string, compute: () => T, live = false): { value: T; at: number } {
    const kept = this.#kept(key, fingerprint, live);
    if (kept) return kept;
    const started = performance.now();
    const value = compute();
    return this.#keep(key, fingerprint, value, Date.now(), performance.now() - started);
  }

  /**
   * As get, for a computation done elsewhere (the worker thread): requests that come while it
   * runs wait for the same one.
   */
  async getAsync(
    key: string,
    fingerprint: string,
    compute: () => Promise<T>,
    live = false,
  ): Promise<{ value: T; at: number }> {
    const kept = this.#kept(key, fingerprint, live);
    if (kept) return kept;
    const running = this.#running.get(key);
    if (running?.fingerprint === fingerprint) return running.promise;
    const started = performance.now();
    const at = Date.now();
    const promise = compute().then((value) =>
      this.#keep(key, fingerprint, value, at, performance.now() - started),
    );
    this.#running.set(key, { fingerprint, promise });
    try {
      return await promise;
    } finally {
      if (this.#running.get(key)?.promise === promise) this.#running.delete(key);
    }
  }

  #kept(key: string, fingerprint: string, live: boolean): { value: T; at: number } | undefined {
    const entry = this.#entries.get(key);
    if (
      entry &&
      (entry.fingerprint === fingerprint || (live && Date.now() - entry.at < entry.ms * this.slack))
    ) {
      // Most recently used last, so the capacity drops the entry unused longest.
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      return entry;
    }
    return undefined;
  }

  #keep(key: string, fingerprint: string, value: T, at: number, ms: number) {
    this.#entries.delete(key);
    this.#entries.set(key, { fingerprint, value, at, ms });
    while (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    return { value, at };
  }
}
