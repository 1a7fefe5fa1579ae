import type { Dispatcher } from 'undici';
import type { AnswerTimes } from './answer-times.js';
import { outcomeOfStatus, parseRetryAfter, type Outcome } from './retry.js';

/**
 * One delivery attempt as an undici dispatch handler: exactly one request on the wire, bounded
 * in time and in what is read back (issue 33 items 3 and 4).
 *
 * - **No re-send.** undici re-dispatches the idempotent requests pipelined behind a broken
 *   connection on the next one, with no backoff and no count: an endpoint resetting every
 *   connection drew 411,744 requests in 20 s for 4,200 events (up to 128 per `webhook-id`).
 *   undici calls `onConnect` each time it dispatches a request; a second call is a re-send, and
 *   the handler aborts it there (before it is written) as the failed attempt it was — the
 *   retry schedule decides when it goes again. Pipelining (what `idempotent` buys) stays.
 * - **`http_timeout` bounds the whole attempt**: a timer from the dispatch (the request handed
 *   to a connected socket) to the complete answer — headers and body — aborts it; the
 *   connection's own connect timeout is the same value (sender.ts). An endpoint trickling one
 *   byte a second kept an attempt open 44.8 s with `http_timeout` 10: undici's `bodyTimeout`
 *   is between chunks.
 * - **Answers are read up to MAX_ANSWER_BYTES and discarded**: the status decides the outcome,
 *   given once the status and at most that many bytes are in; the rest of a larger body is
 *   drained without being kept (closing the connection would fail the requests pipelined
 *   behind it), within the same deadline. An endpoint answering a huge body drew 16 attempts per event.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** Error codes of an attempt that ended on our side (as `Outcome.reason` prefixes). */
export const AttemptErrors = {
  TIMEOUT: 'WEBHOOK_TIMEOUT',
  CONNECTION_LOST: 'WEBHOOK_CONNECTION_LOST',
} as const;

const attemptError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

export class AttemptHandler implements Dispatcher.DispatchHandler {
  readonly #timeoutMs: number;
  readonly #nowMs: number;
  readonly #done: (o: Outcome) => void;
  #dispatched = false;
  #status = 0;
  #retryAfter: string | undefined;
  #bytes = 0;
  #timer: NodeJS.Timeout | null = null;
  #settled = false;
  readonly #answerTimes: AnswerTimes | null;
  #writtenAt = 0;

  /** `nowMs`: the platform instant of the attempt (Retry-After dates are relative to it); `answerTimes`: where the written → answered time goes (perf). */
  constructor(timeoutMs: number, nowMs: number, done: (o: Outcome) => void, answerTimes: AnswerTimes | null = null) {
    this.#timeoutMs = timeoutMs;
    this.#nowMs = nowMs;
    this.#done = done;
    this.#answerTimes = answerTimes;
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.#dispatched) {
      // undici re-sending it after the connection it was written on broke: that was the attempt.
      abort(attemptError(AttemptErrors.CONNECTION_LOST, 'the connection closed before the answer'));
      return;
    }
    this.#dispatched = true;
    if (this.#answerTimes) this.#writtenAt = this.#answerTimes.start();
    this.#timer = setTimeout(
      () =>
        abort(attemptError(AttemptErrors.TIMEOUT, `no complete answer within ${this.#timeoutMs} ms (http_timeout)`)),
      this.#timeoutMs,
    );
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null): boolean {
    this.#status = statusCode;
    this.#answerTimes?.answered(this.#writtenAt);
    const raw = rawHeaders ?? [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (String(raw[i]).toLowerCase() === 'retry-after') {
        this.#retryAfter = String(raw[i + 1]);
        break;
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#bytes += chunk.length;
    // Decided by the status: an oversized answer's outcome is not held back for the rest of it,
    // which is read on and dropped (never held) until complete or the attempt's deadline —
    // closing the connection instead would fail every request pipelined behind it.
    if (this.#bytes > MAX_ANSWER_BYTES) this.#settle(this.#statusOutcome());
    return true;
  }

  onComplete(): void {
    this.#finish(this.#statusOutcome());
  }

  onError(err: Error): void {
    const code = (err as { code?: string }).code ?? '';
    const causeCode = (err as { cause?: { code?: string } }).cause?.code;
    if (code === 'WEBHOOK_FORBIDDEN_ADDRESS' || causeCode === 'WEBHOOK_FORBIDDEN_ADDRESS')
      return this.#finish({ kind: 'permanent', reason: err.message });
    // Timeouts, refused or reset connections, DNS failures: the endpoint may come back.
    this.#finish({ kind: 'retryable', reason: code ? `${code}: ${err.message}` : err.message });
  }

  #statusOutcome(): Outcome {
    return outcomeOfStatus(this.#status, parseRetryAfter(this.#retryAfter, this.#nowMs));
  }

  /** The attempt is over: its deadline goes, and its outcome is given unless it was already. */
  #finish(o: Outcome): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#settle(o);
  }

  #settle(o: Outcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#done(o);
  }
}
