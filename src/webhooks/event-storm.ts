import { createHash } from 'node:crypto';
import type { AssetCatalogue } from '../assets/catalogue.js';
import { EVENT_VERSION, type EventMetadata } from '../cloud/events.js';
import type { DeliveryInsert } from '../store/webhook-port.js';
import { eventTypeRow, type EventType, type EventTypeRow } from '../core/event-types.js';
import { footprintTransform } from '../core/footprint.js';
import { MINUTE_MS } from '../core/time.js';
import { bodyOf } from './fan-out.js';
import { matchesFilters } from './filters.js';
import { isStormEvent, STORM_ID_PREFIX, type StormCounts, type WebhookStorm } from './storm.js';
import type { Subscription } from './subscription.js';

/**
 * The events of storm mode (webhooks/storm.ts), made for the engine's fan-out: `take(now)`
 * gives the deliveries of every storming subscription up to the platform instant `now`,
 * which the engine enqueues in the subscription's outbox like any other (same lanes, retries,
 * signing, records; the consumer cannot tell them from real traffic but by their id).
 *
 * Event k of a subscription is a pure function of (seed, subscription id, origin, k): its id,
 * type (the storm's types in turn), subject, instant (origin + ⌊k·1000/rate⌋ ms, floored to
 * the minute for `_1M` types) and value come from one hash, not from a stream drawn as the
 * platform advances, so the same scenario and seed give the same event ids and bodies whatever
 * the thread layout or how often the platform advances. The origin is the platform's instant
 * at its start (a subscription created later starts at the first advance that sees it): a
 * resumed run starts a new storm, with new ids, instead of resending the old one's.
 *
 * Subjects are the organisation's spaces of the type's kind (floors, rooms, zones) or its
 * sensors (presence sensors for DETECTIONS, traffic ones for TRAFFIC; any sensor when it has
 * none of the mode), those the subscription's filters let through, read from the catalogue the
 * first time the subscription storms. Values are plausible, not simulated: a count of 0..10, a
 * crossing or two, up to three detections in the sensor's footprint. `send_on_value_change`
 * does not thin a storm: its rate is what the consumer receives.
 */
export interface EventStormOptions {
  seed: number | string;
  catalogue: AssetCatalogue;
  metadata: EventMetadata;
  /** The storm of a subscription; null: none. */
  stormOf: (s: Subscription) => WebhookStorm | null;
}

interface Running {
  storm: WebhookStorm;
  originMs: number;
  /** Events made so far (the next one's k). */
  made: number;
  /** The types in turn, each with the subjects it may be about. */
  plan: Array<{ row: EventTypeRow; subjects: string[] }>;
  delivered: number;
}

export class EventStorms {
  readonly #o: EventStormOptions;
  readonly #running = new Map<string, Running | null>();

  constructor(o: EventStormOptions) {
    this.#o = o;
  }

  /** The subscriptions there are when the platform starts storm from `originMs`, the platform's instant then. */
  begin(subscriptions: readonly Subscription[], originMs: number): void {
    for (const s of subscriptions) this.#runningOf(s, originMs);
  }

  /**
   * The types of a subscription's storm with no subject to be about (the organisation has no
   * zone, its filters let none through): a declared storm naming one is refused at start.
   */
  subjectless(s: Subscription, storm: WebhookStorm): EventType[] {
    return typesOf(s, storm).filter((t) => this.#subjects(s, eventTypeRow(t)).length === 0);
  }

  /**
   * Up to `max` deliveries of the storms due by `nowMs`, subscription after subscription in
   * creation order: called until it gives none (each batch is one enqueue transaction).
   */
  take(subscriptions: readonly Subscription[], nowMs: number, max: number): DeliveryInsert[] {
    const out: DeliveryInsert[] = [];
    for (const s of subscriptions) {
      // A subscription its user disabled receives nothing new (fan-out.ts): its storm pauses, and catches up if enabled again.
      if (s.status === 'DISABLED' && s.disabledReason === 'disabled by the user') continue;
      const r = this.#runningOf(s, nowMs);
      if (!r || r.plan.length === 0) continue;
      const due = Math.floor(((nowMs - r.originMs) * r.storm.rate) / 1000);
      while (r.made < due && out.length < max) out.push(this.#delivery(s, r, r.made++, nowMs));
      if (out.length >= max) break;
    }
    return out;
  }

  /** A delivered event: counted against its subscription's storm when it is one of the storm's. */
  noteDelivered(subscriptionId: string, eventId: string): void {
    if (!isStormEvent(eventId)) return;
    const r = this.#running.get(subscriptionId);
    if (r) r.delivered++;
  }

  counts(subscriptionId: string): StormCounts | null {
    const r = this.#running.get(subscriptionId);
    return r ? { rate: r.storm.rate, generated: r.made, delivered: r.delivered } : null;
  }

  #runningOf(s: Subscription, nowMs: number): Running | null {
    const known = this.#running.get(s.id);
    if (known !== undefined) return known;
    const storm = this.#o.stormOf(s);
    const r: Running | null = storm
      ? {
          storm,
          originMs: nowMs,
          made: 0,
          plan: typesOf(s, storm)
            .map((t) => ({ row: eventTypeRow(t), subjects: this.#subjects(s, eventTypeRow(t)) }))
            .filter((p) => p.subjects.length > 0),
          delivered: 0,
        }
      : null;
    this.#running.set(s.id, r);
    return r;
  }

  /** Subject ids of a type for the subscription, sorted (the hash picks by index). */
  #subjects(s: Subscription, row: EventTypeRow): string[] {
    const c = this.#o.catalogue;
    const m = this.#o.metadata;
    const own = <T extends { id: string }>(items: Iterable<{ orgId: string; item: T }>): T[] =>
      [...items].filter((x) => x.orgId === s.orgId).map((x) => x.item);
    let ids: string[];
    if (row.subject === 'sensor') {
      const sensors = own(c.sensors.values());
      const mode = row.type === 'TRAFFIC' ? 'traffic' : 'presence';
      const ofMode = sensors.filter((x) => x.mode === mode);
      ids = (ofMode.length > 0 ? ofMode : sensors).map((x) => x.id);
    } else {
      const spaces: ReadonlyMap<string, { orgId: string; item: { id: string } }> = {
        space: c.floors,
        room: c.rooms,
        zone: c.zones,
      }[row.subject];
      ids = own(spaces.values()).map((x) => x.id);
    }
    const meta = (id: string): Readonly<Record<string, string>> =>
      row.subject === 'sensor' ? m.forSensor(id) : m.forSpace(id);
    return ids.filter((id) => matchesFilters(s.filters, meta(id))).sort();
  }

  #delivery(s: Subscription, r: Running, k: number, nowMs: number): DeliveryInsert {
    const h = createHash('sha256').update(`${this.#o.seed}|storm|${s.id}|${r.originMs}|${k}`).digest();
    const { row, subjects } = r.plan[k % r.plan.length] as Running['plan'][number];
    const subject = subjects[h.readUInt32BE(12) % subjects.length] as string;
    const at = r.originMs + Math.floor((k * 1000) / r.storm.rate);
    const timestamp = row.minuteAligned ? at - (at % MINUTE_MS) : at;
    const id = `${STORM_ID_PREFIX}${h.subarray(0, 12).toString('hex')}`;
    const body = bodyOf({
      id,
      type: row.type,
      timestamp,
      version: EVENT_VERSION,
      metadata: row.subject === 'sensor' ? this.#o.metadata.forSensor(subject) : this.#o.metadata.forSpace(subject),
      data: this.#data(row, subject, h),
    });
    return {
      subscriptionId: s.id,
      eventId: id,
      eventType: row.type,
      eventTimestampMs: timestamp,
      body,
      enqueuedAtMs: nowMs,
      nextAttemptMs: nowMs,
    };
  }

  /** The event's value from the hash's bytes 16.. (the id took 0..11, the subject 12..15). */
  #data(row: EventTypeRow, subject: string, h: Buffer): unknown {
    switch (row.data) {
      case 'count':
        return (h[16] as number) % 11;
      case 'in-out':
        return { in: (h[16] as number) % 3, out: (h[17] as number) % 3 };
      case 'points': {
        const sensor = this.#o.catalogue.sensors.get(subject)?.item;
        const n = (h[16] as number) % 4;
        const local: Array<[number, number]> = [];
        const world: Array<[number, number]> = [];
        for (let i = 0; i < n; i++) {
          const p: [number, number] = [
            round3((h[17 + 2 * i] as number) / 255),
            round3((h[18 + 2 * i] as number) / 255),
          ];
          local.push(p);
          const w = sensor ? footprintTransform(sensor).toWorld(p[0], p[1]) : p;
          world.push([round3(w[0]), round3(w[1])]);
        }
        return { local, world };
      }
    }
  }
}

/** The storm's types the subscription takes, in the storm's order; all of the subscription's when it names none. */
function typesOf(s: Subscription, storm: WebhookStorm): EventType[] {
  const mine = s.eventTypes as readonly string[];
  return storm.types ? storm.types.filter((t) => mine.includes(t)) : [...(s.eventTypes as readonly EventType[])];
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
