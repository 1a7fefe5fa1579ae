import { canonicalEventType, EVENT_TYPES, type EventType } from '../core/event-types.js';
import { ErrorCodes } from '../core/errors.js';
import { webhookError } from './errors.js';

/**
 * Event types a subscription may name: the rows of the table in core/event-types.ts. The
 * minute-aligned variants are stored as `_1M`, the spelling of the spec §6 table and of the
 * pipeline's outbox; `_1MIN` is accepted on input, so one subscription per type per
 * organisation holds whichever spelling created it.
 */
export { EVENT_TYPES, type EventType };

/** Canonical, de-duplicated, in input order; throws WEBHOOK_INVALID naming the bad entry. */
export function parseEventTypes(input: readonly string[], path: string): EventType[] {
  if (input.length === 0) throw webhookError(ErrorCodes.WEBHOOK_INVALID, path, 'name at least one event type');
  const out: EventType[] = [];
  input.forEach((raw, i) => {
    const t = canonicalEventType(raw);
    if (t === null)
      throw webhookError(
        ErrorCodes.WEBHOOK_INVALID,
        `${path}[${i}]`,
        `unknown event type ${JSON.stringify(raw)} (one of ${EVENT_TYPES.join(', ')}; _1MIN is accepted for _1M)`,
      );
    if (!out.includes(t)) out.push(t);
  });
  return out;
}
