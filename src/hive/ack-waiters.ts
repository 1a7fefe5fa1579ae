import { AppError, ErrorCodes } from '../core/errors.js';

interface Waiter {
  readonly seq: number;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** One pending wait for an end-to-end ack. */
export interface AckWait {
  readonly promise: Promise<void>;
  /** Rejects the wait with `err` (no-op once settled). */
  cancel(err: Error): void;
}

/**
 * Batches waiting for the cloud's end-to-end ack. Acks are cumulative: an ack of seq N
 * settles every wait for a seq <= N. Each wait rejects with TIMEOUT after `timeoutMs` of
 * wall time (a transport concern, not sim time).
 */
export class AckWaiters {
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly timeoutMs: number,
    private readonly label: string,
  ) {}

  get pending(): number {
    return this.waiters.size;
  }

  wait(seq: number): AckWait {
    let waiter: Waiter | undefined;
    const promise = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => this.settle(waiter, new AppError(ErrorCodes.TIMEOUT, this.timeoutMessage(seq), { details: { seq } })),
        this.timeoutMs,
      );
      waiter = { seq, resolve, reject, timer };
      this.waiters.add(waiter);
    });
    return { promise, cancel: (err) => this.settle(waiter, err) };
  }

  /** Settles every wait covered by a cumulative ack; returns how many. */
  ack(ackedSeq: number): number {
    let settled = 0;
    for (const w of this.waiters) {
      if (w.seq > ackedSeq) continue;
      this.settle(w, null);
      settled++;
    }
    return settled;
  }

  rejectAll(err: Error): void {
    for (const w of this.waiters) this.settle(w, err);
  }

  private settle(waiter: Waiter | undefined, err: Error | null): void {
    if (waiter === undefined || !this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    if (err === null) waiter.resolve();
    else waiter.reject(err);
  }

  private timeoutMessage(seq: number): string {
    return `${this.label}: no ack for batch seq ${seq} within ${this.timeoutMs} ms`;
  }
}
