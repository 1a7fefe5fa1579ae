import type { AsyncWebhookStore } from '../store/webhook-port.js';
import { ConsumerState, type StateEvent, type StateRow } from './consumer-state.js';
import type { Subscription } from './subscription.js';

/**
 * The state a correct consumer of each subscription must hold once delivery is over (issue 29
 * item 2, `occusim run --consumer-expect`): the deliveries the platform made (its outbox rows
 * marked delivered, i.e. answered 2xx), folded in outbox order by the `idempotent` consumer of
 * webhooks/consumer-state.ts. What a consumer acknowledged it must hold; what the platform never
 * got a 2xx for (pending, dead letters) is not expected of it. Faults change how deliveries
 * arrive, never what was delivered: an earlier revision injected by `revise` precedes its event
 * in sequence, so the event's value is the one to keep.
 *
 * Reads every delivery of a subscription with its body: memory grows with the run (opt-in).
 */
export async function expectedState(
  store: Pick<AsyncWebhookStore, 'deliveries'>,
  subscriptions: readonly Subscription[],
): Promise<StateRow[]> {
  const rows: StateRow[] = [];
  for (const s of [...subscriptions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const state = new ConsumerState('idempotent');
    for (const d of await store.deliveries(s.id)) {
      if (d.state !== 'delivered') continue;
      state.apply(d.eventId, d.id, JSON.parse(d.body) as StateEvent);
    }
    for (const r of state.rows()) rows.push({ subscription: s.name, ...r });
  }
  return rows;
}
