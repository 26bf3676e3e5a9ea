/**
 * Provider SDKs warn on every call: @anthropic-ai/sdk's `messages.create` prints a deprecation
 * notice with console.warn each time it is called with a deprecated model name (for instance
 * claude-sonnet-4-5, from SDK 1.12), so a run printed the same lines once per model call.
 * Each provider call goes through `onceEach`, which holds back what the SDK warns while the call
 * starts and passes each distinct warning on once per process.
 *
 * Only the synchronous start of the call is watched (where the SDKs warn, before any request is
 * sent): console.warn and process.emitWarning are swapped for collectors for that moment alone,
 * so nothing else the process prints is touched. The SDKs' loggers are off (logLevel "off").
 */

/** Warnings already shown in this process, by their text. */
const shown = new Set<string>();

type Warn = (...args: unknown[]) => void;

function keyOf(args: readonly unknown[]): string {
  return args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(" ");
}

/**
 * Runs `start` (a provider SDK call, up to the promise it returns) and shows each distinct
 * warning the SDK prints meanwhile at most once per process.
 */
export function onceEach<T>(start: () => T): T {
  const held: { kind: "warn" | "emit"; args: unknown[] }[] = [];
  const warn = console.warn;
  const emitWarning = process.emitWarning;
  console.warn = ((...args: unknown[]) => {
    held.push({ kind: "warn", args });
  }) as Warn;
  process.emitWarning = ((...args: unknown[]) => {
    held.push({ kind: "emit", args });
  }) as typeof process.emitWarning;
  try {
    return start();
  } finally {
    console.warn = warn;
    process.emitWarning = emitWarning;
    for (const { kind, args } of held) {
      const key = `${kind}:${keyOf(args)}`;
      if (shown.has(key)) continue;
      shown.add(key);
      if (kind === "warn") warn.apply(console, args);
      else (emitWarning as (...a: unknown[]) => void).apply(process, args);
    }
  }
}

/** Forgets what was shown, as if in a new process (for tests). */
export function resetShownWarnings(): void {
  shown.clear();
}
