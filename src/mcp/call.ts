import type { ProgressNotification } from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../core/clock.js';
import { invalidParams, type Extra } from './rpc.js';

/**
 * One request's own context (issue 28, item 5): the SDK's abort signal, which
 * `notifications/cancelled` fires, and a progress reporter that sends
 * `notifications/progress` when the client gave a `_meta.progressToken`. The tool server's
 * caches and platform client are shared by every call of an organisation; this is what is
 * not. Every upstream request a call makes checks the signal first and carries it, so a
 * cancelled call makes no further request (platform.ts), and each finished upstream step is
 * one unit of progress.
 */
export interface Call {
  readonly signal: AbortSignal;
  readonly progress: Progress;
}

type ProgressParams = Omit<ProgressNotification['params'], 'progressToken' | '_meta'>;
type Sender = (params: ProgressParams) => Promise<void>;

/** At most one notification per this many milliseconds, besides the first and the last. */
export const PROGRESS_GAP_MS = 100;
/** A string token longer than this is refused: every input is bounded. */
export const MAX_PROGRESS_TOKEN = 256;

/**
 * Counts a call's steps: `plan(n)` when upstream work of n requests is about to start (the
 * total grows as the call learns what it must read), `step(message)` when one is done.
 * `progress` only grows, as the spec requires; a notification is sent for the first step,
 * for the last one planned, and otherwise at most every PROGRESS_GAP_MS of the injected clock,
 * so a call of many quick steps does not flood the client.
 */
export class Progress {
  readonly #send: Sender | null;
  readonly #clock: Clock;
  #done = 0;
  #total = 0;
  #lastSentAt: number | null = null;
  #sent = 0;

  constructor(send: Sender | null, clock: Clock) {
    this.#send = send;
    this.#clock = clock;
  }

  get done(): number {
    return this.#done;
  }

  get total(): number {
    return this.#total;
  }

  plan(steps: number): void {
    this.#total += steps;
  }

  step(message: string): void {
    this.#done++;
    if (this.#total < this.#done) this.#total = this.#done;
    if (!this.#send) return;
    const now = this.#clock.now();
    const last = this.#done === this.#total;
    if (!last && this.#lastSentAt !== null && now - this.#lastSentAt < PROGRESS_GAP_MS) return;
    this.#lastSentAt = now;
    this.#sent = this.#done;
    // A notification that cannot be sent (the stream went away) is dropped: progress is advice.
    void this.#send({ progress: this.#sent, total: this.#total, message }).catch(() => undefined);
  }
}

const never = new AbortController().signal;

/** A call nobody can cancel and nobody watches: background refreshes, resources, prompts. */
export const NO_CALL: Call = Object.freeze({
  signal: never,
  progress: new Progress(null, { now: () => 0 }),
});

/**
 * The progress token of a request, or none. The spec's token is a string or an integer; the
 * SDK refuses anything else for its own handlers, and so does this (-32602 naming the field),
 * since a token the client cannot match would make its progress silently vanish.
 */
export function progressTokenOf(extra: Pick<Extra, '_meta'>, method: string): string | number | undefined {
  const token = (extra._meta as { progressToken?: unknown } | undefined)?.progressToken;
  if (token === undefined) return undefined;
  if (typeof token === 'string' && token.length > 0 && token.length <= MAX_PROGRESS_TOKEN) return token;
  if (typeof token === 'number' && Number.isSafeInteger(token)) return token;
  throw invalidParams(
    `${method}: params._meta.progressToken must be a string of 1–${MAX_PROGRESS_TOKEN} characters or an integer`,
  );
}

/** The call of one request: its signal, and progress sent on its own stream (relatedRequestId). */
export function callOf(extra: Extra, clock: Clock, method: string): Call {
  const token = progressTokenOf(extra, method);
  const send: Sender | null =
    token === undefined
      ? null
      : (params) =>
          extra.sendNotification({ method: 'notifications/progress', params: { ...params, progressToken: token } });
  return { signal: extra.signal, progress: new Progress(send, clock) };
}

/**
 * Waits for work the call does not own (a cache load other calls may share), but no longer
 * than the call lives: a cancelled call stops waiting at once; the shared work goes on for the
 * others and is cached.
 */
export function whileActive<T>(call: Call, work: Promise<T>): Promise<T> {
  const { signal } = call;
  if (signal === never) return work;
  if (signal.aborted) return Promise.reject(cancelled(signal));
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(cancelled(signal));
    signal.addEventListener('abort', stop, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

/** The error a cancelled call ends with (never sent: the SDK sends no answer to a cancelled request). */
export function cancelled(signal: AbortSignal): Error {
  return new Error(`cancelled: ${signal.reason instanceof Error ? signal.reason.message : String(signal.reason)}`, {
    cause: signal.reason,
  });
}
