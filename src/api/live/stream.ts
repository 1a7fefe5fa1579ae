import type { ServerResponse } from 'node:http';

/**
 * One browser's SSE stream of `/live/events`, with backpressure (issue 33, item 6: 200 clients
 * that never read grew the server by ~1.4 MB/s, every event queued in each socket's buffer).
 * Each event is the whole latest state of a floor, so a stream that has not drained needs no
 * queue: the event is held as the one to send on `drain` (replacing any held before), so a
 * stream queues at most one event beyond what its socket holds. A stream that has not drained
 * for `stallMs`, or whose queued bytes pass `maxBufferedBytes`, is dropped (the page
 * reconnects when its reader comes back).
 */
export interface StreamLimits {
  /** A stream whose socket has not drained for this long (wall ms) is dropped. */
  stallMs: number;
  /** Bytes a stream may have queued in its socket; beyond, it is dropped at once. */
  maxBufferedBytes: number;
}

export class LiveStream {
  readonly #res: ServerResponse;
  readonly #limits: StreamLimits;
  readonly #onDrop: () => void;
  /** Set while the socket refuses more: it drops the stream unless a drain comes first (wall time: it faces a browser). */
  #stall: NodeJS.Timeout | null = null;
  /** The latest event not yet written (the socket was full). */
  #held: string | null = null;
  #dropped = false;

  constructor(res: ServerResponse, limits: StreamLimits, onDrop: () => void) {
    this.#res = res;
    this.#limits = limits;
    this.#onDrop = onDrop;
    res.on('drain', () => {
      this.#unblock();
      const held = this.#held;
      this.#held = null;
      if (held !== null) this.#write(held);
    });
  }

  get dropped(): boolean {
    return this.#dropped;
  }

  /** Sends an event's text (`data: …\n\n`), holds it while the socket is full, or drops a stalled stream. */
  send(text: string): void {
    if (this.#dropped || this.#res.destroyed) return;
    if (this.#stall !== null) this.#held = text;
    else this.#write(text);
  }

  drop(): void {
    if (this.#dropped) return;
    this.#dropped = true;
    this.#unblock();
    this.#held = null;
    this.#res.destroy();
    this.#onDrop();
  }

  #write(text: string): void {
    if (this.#res.writableLength + text.length > this.#limits.maxBufferedBytes) {
      this.drop();
      return;
    }
    if (!this.#res.write(text)) {
      this.#stall = setTimeout(() => this.drop(), this.#limits.stallMs);
      this.#stall.unref();
    }
  }

  #unblock(): void {
    if (this.#stall !== null) clearTimeout(this.#stall);
    this.#stall = null;
  }
}
