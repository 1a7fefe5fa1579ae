/**
 * The tool server's own events (issue 28, item 4): logins, catalogue refreshes, slow or failed
 * calls to the platform API. Each MCP session forwards them as `notifications/message` at or
 * above the level its client chose with `logging/setLevel` (server.ts); with SERVICE_DEBUG
 * the stdio server also writes them to stderr. Nothing here writes to stdout: on stdio that
 * stream carries protocol messages only.
 */
export const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type Level = (typeof LEVELS)[number];

/** Until a client sets a level, it hears `info` and above: per-call debug lines are noise by default. */
export const DEFAULT_LEVEL: Level = 'info';
/** A platform call slower than this is a `warning` (the fleet's devices query takes ~0.5–1 s). */
export const SLOW_CALL_MS = 2000;

export interface ServerEvent {
  level: Level;
  /** What the event is about: `auth`, `catalogue`, `platform`. */
  logger: string;
  message: string;
}

export const atLeast = (level: Level, threshold: Level): boolean => LEVELS.indexOf(level) >= LEVELS.indexOf(threshold);

export class EventLog {
  readonly #listeners = new Set<(e: ServerEvent) => void>();

  /** Returns the function that stops listening. */
  on(listener: (e: ServerEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  emit(level: Level, logger: string, message: string): void {
    const e = { level, logger, message };
    for (const l of this.#listeners) l(e);
  }

  get listeners(): number {
    return this.#listeners.size;
  }
}
