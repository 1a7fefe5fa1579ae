import { ErrorCodes, isAppError, type ErrorCode } from '../core/errors.js';

import type { DeadLetter } from '../store/rows.js';

/** A message as the ingest received it: what uplink and heartbeat inspection both start from. */
export interface Received {
  topic: string;
  payload: Uint8Array;
  receivedAtMs: number;
}

/** The dead letter of a whole message, kept with its payload so a user can see what arrived. */
export function deadLetterOf(r: Received, reason: ErrorCode, message: string): DeadLetter {
  return { receivedAtMs: r.receivedAtMs, topic: r.topic, reason, message, payload: r.payload };
}

/** The decoded message, or the decoder's reason as text; anything but a decode failure is a bug and propagates. */
export function decodeOrReason<T>(decode: (payload: Uint8Array) => T, payload: Uint8Array): T | string {
  try {
    return decode(payload);
  } catch (err) {
    if (isAppError(err, ErrorCodes.DECODE_FAILED)) return err.message;
    throw err;
  }
}
