/**
 * Simulated time for simulated work with several workers: `sleep(ms)` resolves in order of
 * simulated time, instantly. Simulated work does nothing but sleep, so once the microtasks have
 * run (every worker is waiting on a sleep, or on another worker), the earliest sleep is due: a
 * macrotask (setImmediate) resolves it, then schedules the next. W workers then interleave as
 * they would in real time, and the pending-work rule sees realistic overlaps.
 */
export class VirtualClock {
  /** Simulated milliseconds since the start. */
  now = 0;
  private readonly due: { at: number; order: number; resolve: () => void }[] = [];
  private order = 0;
  private scheduled = false;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.push({ at: this.now + Math.max(0, ms), order: this.order++, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.wake());
      }
    });
  }

  private wake(): void {
    this.scheduled = false;
    const next = this.pop();
    if (!next) return;
    this.now = next.at;
    next.resolve();
    if (this.due.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.wake());
    }
  }

  // A binary heap on (at, order).
  private before(a: number, b: number): boolean {
    const x = this.due[a] as { at: number; order: number };
    const y = this.due[b] as { at: number; order: number };
    return x.at < y.at || (x.at === y.at && x.order < y.order);
  }

  private swap(a: number, b: number): void {
    const item = this.due[a] as (typeof this.due)[number];
    this.due[a] = this.due[b] as (typeof this.due)[number];
    this.due[b] = item;
  }

  private push(item: (typeof this.due)[number]): void {
    this.due.push(item);
    let i = this.due.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private pop(): (typeof this.due)[number] | undefined {
    const top = this.due[0];
    const last = this.due.pop();
    if (this.due.length > 0 && last) {
      this.due[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < this.due.length && this.before(left, smallest)) smallest = left;
        if (right < this.due.length && this.before(right, smallest)) smallest = right;
        if (smallest === i) break;
        this.swap(i, smallest);
        i = smallest;
      }
    }
    return top;
  }
}
