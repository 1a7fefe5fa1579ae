import type { AssetCatalogue } from '../../assets/catalogue.js';
import type { SensorEvent } from '../../cloud/events.js';
import type { CloudCounters } from '../../cloud/pipeline.js';
import { RequestStatus, type StatusSource } from '../status.js';

/**
 * The live view's state (`/live`): what the simulator says is true (people's positions per
 * floor, true room counts) as it publishes it, joined with what the platform measured (each
 * room's latest presence minute, door counts, hive online state, pipeline counters, and the
 * latest frame of detections each presence sensor delivered), pushed to the page's subscribers
 * over SSE. Sends are coalesced to one per `minGapMs` of wall time per
 * subscriber (a max-speed run publishes thousands of instants a second); the latest state is
 * always the one delivered, and a new subscriber gets it at once.
 */
export interface LiveTruth {
  atMs: number;
  /** Floor id → people on it: [id, x, y] in floor metres. */
  people: Record<string, Array<[string, number, number]>>;
  /** Room id → true head count at `atMs`. */
  rooms: Record<string, number>;
  /** The run has ended and the platform has finalised every minute: this state no longer changes. */
  final?: boolean;
}

/** What the platform measured, read from the store (asynchronously: a network store must not block the loop). */
export interface LiveMeasured {
  /** The room's (or floor's) latest finalised presence minute, or null before any. */
  presence(spaceId: string): Promise<{ minuteMs: number; value: number } | null>;
  /** A traffic sensor's counts so far. */
  traffic(sensorId: string): Promise<{ in: number; out: number }>;
  counters(): CloudCounters;
}

/**
 * Bounds of the detections an event carries: a frame older than `DETECTION_MAX_AGE_MS` behind
 * the instant shown is not drawn (a sensor gone quiet leaves no ghosts), and at most
 * `MAX_DETECTIONS_PER_EVENT` points go to a browser per event (the floor's sensors in
 * catalogue order; `detectionsDropped` says how many did not fit).
 */
export const DETECTION_MAX_AGE_MS = 60_000;
export const MAX_DETECTIONS_PER_EVENT = 2000;

export interface LiveEvent {
  atMs: number;
  final: boolean;
  floorId: string;
  people: Array<[string, number, number]>;
  /** The platform's detections, floor metres (cm): each presence sensor's latest ingested frame. */
  detections: Array<[number, number]>;
  detectionsDropped: number;
  rooms: Array<{ id: string; true: number; measured: number | null; minuteMs: number | null }>;
  doors: Array<{ sensorId: string; in: number; out: number }>;
  hives: Array<{ id: string; name: string; online: boolean }>;
  /**
   * The pipeline's counters, which are platform-wide: sent only when the platform serves one
   * organisation (they are then its own); null with several, so no tenant sees another's traffic.
   */
  ledger: {
    batchesProcessed: number;
    packetsProcessed: number;
    duplicateBatches: number;
    deadLettered: number;
    eventsEmitted: number;
  } | null;
}

type Send = (e: LiveEvent) => void;

interface Subscriber {
  floorId: string;
  send: Send;
  lastSentAt: number;
  timer: NodeJS.Timeout | null;
  /** An event is being read: a delivery asked for meanwhile waits for it (events stay in order). */
  reading: boolean;
  again: boolean;
}

export class LiveHub {
  readonly #assets: AssetCatalogue;
  readonly #status: StatusSource;
  readonly #measured: LiveMeasured;
  readonly #now: () => number;
  readonly #minGapMs: number;
  readonly #subs = new Set<Subscriber>();
  /** Sensor id → its latest DETECTIONS frame as ingested (sensed instant, world points). */
  readonly #frames = new Map<string, { atMs: number; points: ReadonlyArray<readonly [number, number]> }>();
  #latest: LiveTruth | null = null;
  /**
   * The event of each floor for the latest truth, built once for every subscriber of that
   * floor (200 viewers of a floor cost one build, and share one object): dropped when the
   * truth changes or what was measured did (`refresh`).
   */
  readonly #built = new Map<string, { truth: LiveTruth; event: Promise<LiveEvent> }>();

  constructor(o: {
    assets: AssetCatalogue;
    status: StatusSource;
    measured: LiveMeasured;
    now: () => number;
    minGapMs?: number;
  }) {
    this.#assets = o.assets;
    this.#status = o.status;
    this.#measured = o.measured;
    this.#now = o.now;
    this.#minGapMs = o.minGapMs ?? 200;
  }

  get latest(): LiveTruth | null {
    return this.#latest;
  }

  publish(truth: LiveTruth): void {
    this.#latest = truth;
    this.#built.clear();
    for (const s of this.#subs) this.#schedule(s);
  }

  /** Streams subscribed now (one per open `/live/events`). */
  get subscribers(): number {
    return this.#subs.size;
  }

  /** A browser watches: the pipeline's detections are worth building (`detections`). */
  get watched(): boolean {
    return this.#subs.size > 0;
  }

  /**
   * The pipeline's DETECTIONS/TRAFFIC stream (`onSensorEvent`): keeps each presence sensor's
   * latest frame; the next event carries it. Constant work per event, nothing sent from here.
   */
  detections(e: SensorEvent): void {
    if (e.type !== 'DETECTIONS' || !('world' in e.data)) return;
    const prev = this.#frames.get(e.sensorId);
    if (prev && prev.atMs > e.timestampMs) return;
    this.#frames.set(e.sensorId, { atMs: e.timestampMs, points: e.data.world });
  }

  /** What was measured changed (a minute finalised): subscribers get the latest state again. */
  refresh(): void {
    this.#built.clear();
    if (this.#latest) for (const s of this.#subs) this.#schedule(s);
  }

  /** Subscribes to a floor's events; returns the unsubscribe function. */
  subscribe(floorId: string, send: Send): () => void {
    const sub: Subscriber = { floorId, send, lastSentAt: -Infinity, timer: null, reading: false, again: false };
    this.#subs.add(sub);
    if (this.#latest) this.#deliver(sub);
    return () => {
      if (sub.timer) clearTimeout(sub.timer);
      this.#subs.delete(sub);
      // Nobody watches: frames stop arriving, so none kept would be current for the next viewer.
      if (this.#subs.size === 0) this.#frames.clear();
    };
  }

  close(): void {
    for (const s of this.#subs) if (s.timer) clearTimeout(s.timer);
    this.#subs.clear();
    this.#built.clear();
  }

  #schedule(s: Subscriber): void {
    if (s.timer) return;
    const wait = s.lastSentAt + this.#minGapMs - this.#now();
    if (wait <= 0) {
      this.#deliver(s);
      return;
    }
    s.timer = setTimeout(() => {
      s.timer = null;
      this.#deliver(s);
    }, wait);
    s.timer.unref();
  }

  #deliver(s: Subscriber): void {
    const t = this.#latest;
    if (!t) return;
    if (s.reading) {
      s.again = true;
      return;
    }
    s.lastSentAt = this.#now();
    s.reading = true;
    void this.#eventOf(s.floorId, t)
      .then(
        (e) => {
          if (this.#subs.has(s)) s.send(e);
        },
        // A failed store read skips this event; the next publish or refresh tries again.
        () => undefined,
      )
      .finally(() => {
        s.reading = false;
        if (s.again && this.#subs.has(s)) {
          s.again = false;
          this.#schedule(s);
        }
      });
  }

  #eventOf(floorId: string, t: LiveTruth): Promise<LiveEvent> {
    const built = this.#built.get(floorId);
    if (built?.truth === t) return built.event;
    const event = this.event(floorId, t);
    this.#built.set(floorId, { truth: t, event });
    // A failed read is not kept: the next delivery tries again.
    event.catch(() => {
      if (this.#built.get(floorId)?.event === event) this.#built.delete(floorId);
    });
    return event;
  }

  /** The event of one floor for the latest truth. */
  async event(floorId: string, t: LiveTruth): Promise<LiveEvent> {
    const floor = this.#assets.find('floor', floorId);
    const orgId = floor?.orgId ?? '';
    const status = new RequestStatus(this.#status, this.#assets, orgId);
    const rooms = floor ? floor.item.roomIds : [];
    const c = this.#measured.counters();
    const detections: Array<[number, number]> = [];
    let detectionsDropped = 0;
    const cm = (v: number): number => Math.round(v * 100) / 100;
    for (const id of floor ? floor.item.sensorIds : []) {
      const f = this.#frames.get(id);
      if (!f || t.atMs - f.atMs > DETECTION_MAX_AGE_MS) continue;
      for (const p of f.points) {
        if (detections.length < MAX_DETECTIONS_PER_EVENT) detections.push([cm(p[0]), cm(p[1])]);
        else detectionsDropped++;
      }
    }
    const doorSensors = floor
      ? this.#assets.list('sensor', orgId).filter((s) => s.floorId === floorId && s.mode === 'traffic')
      : [];
    const hiveIds = floor ? floor.item.hiveIds : [];
    const [measured, counts, online] = await Promise.all([
      Promise.all(rooms.map((id) => this.#measured.presence(id))),
      Promise.all(doorSensors.map((s) => this.#measured.traffic(s.id))),
      Promise.all(hiveIds.map(async (id) => (await status.hive(id)).online)),
    ]);
    return {
      atMs: t.atMs,
      final: t.final === true,
      floorId,
      people: t.people[floorId] ?? [],
      detections,
      detectionsDropped,
      rooms: rooms.map((id, i) => {
        const m = measured[i] ?? null;
        return { id, true: t.rooms[id] ?? 0, measured: m?.value ?? null, minuteMs: m?.minuteMs ?? null };
      }),
      doors: doorSensors.map((s, i) => ({ sensorId: s.id, ...(counts[i] as { in: number; out: number }) })),
      hives: hiveIds.map((id, i) => ({
        id,
        name: this.#assets.find('hive', id)?.item.name ?? id,
        online: online[i] === true,
      })),
      ledger:
        this.#assets.orgs.size === 1
          ? {
              batchesProcessed: c.batchesProcessed,
              packetsProcessed: c.packetsProcessed,
              duplicateBatches: c.duplicateBatches,
              deadLettered: c.deadLettered,
              eventsEmitted: c.eventsEmitted,
            }
          : null,
    };
  }
}
