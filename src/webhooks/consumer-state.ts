/**
 * The state a consumer of the platform's webhooks holds (issue 29 item 2): per (event type,
 * subject, minute) one value, written as NDJSON (docs/load-testing.md, "The state file").
 * One reducer for both sides of the verdict: `occusim run --consumer-expect` folds the
 * deliveries the platform made (the store's delivered rows, in their order) through it in the
 * `idempotent` mode; `occusim receive --apply MODE` folds what arrived, in arrival order, in
 * the mode asked — a correct consumer's or one of the classic mistakes, so the docs and the
 * tests show what `consumer-verify` says of each.
 *
 * Per type (one table, `KINDS`): occupancy types (the instant ones and `_1M`) hold the latest
 * value of the minute (spec §6 rule 1: "deduplicate by timestamp and use the latest value");
 * TRAFFIC sums `in` and `out` of the minute; DETECTIONS sums the detections of the minute —
 * where a duplicate counted twice shows. "Latest" is the platform's order, carried by the
 * `occusim-sequence` header (the delivery's place in the subscription's outbox), not the
 * arrival order, which a retry, a delay or a reordering changes.
 */
export const APPLY_MODES = ['idempotent', 'naive', 'first-wins'] as const;
export type ApplyMode = (typeof APPLY_MODES)[number];

/**
 * What each mode does (the closed set, one row each):
 * - idempotent: dedupes by `webhook-id`, keeps the value of the highest sequence (a correct consumer);
 * - naive: applies every request in arrival order — a duplicate counts twice, the last to arrive wins;
 * - first-wins: dedupes by `webhook-id` but keeps a minute's first value (`INSERT … ON CONFLICT DO NOTHING`): revisions ignored.
 */
const MODES: Readonly<Record<ApplyMode, { dedupe: boolean; wins: 'sequence' | 'last' | 'first' }>> = {
  idempotent: { dedupe: true, wins: 'sequence' },
  naive: { dedupe: false, wins: 'last' },
  'first-wins': { dedupe: true, wins: 'first' },
};

/** The header carrying a delivery's place in its subscription's outbox (a decimal number; larger is later). */
export const SEQUENCE_HEADER = 'occusim-sequence';

type Kind = 'latest' | 'traffic' | 'detections';

/** How each event type folds into the state, and which metadata field names its subject. */
const KINDS: Readonly<Record<string, { kind: Kind; subject: string }>> = {
  DETECTIONS: { kind: 'detections', subject: 'sensor_id' },
  TRAFFIC: { kind: 'traffic', subject: 'sensor_id' },
  FLOOR_OCCUPANCY: { kind: 'latest', subject: 'floor_id' },
  ROOM_OCCUPANCY: { kind: 'latest', subject: 'room_id' },
  ZONE_OCCUPANCY: { kind: 'latest', subject: 'zone_id' },
  FLOOR_OCCUPANCY_1M: { kind: 'latest', subject: 'floor_id' },
  ROOM_OCCUPANCY_1M: { kind: 'latest', subject: 'room_id' },
  ZONE_OCCUPANCY_1M: { kind: 'latest', subject: 'zone_id' },
};

/** One line of a state file. `subscription` and `truth` are written in expected files only. */
export interface StateRow {
  subscription?: string;
  type: string;
  subject: string;
  /** The minute (ms since the epoch, UTC, a multiple of 60,000) of the event's timestamp. */
  minute: number;
  value: unknown;
  /** Ground truth of the space at that minute (occupancy types of an expected file); null: none known. */
  truth?: number | null;
}

/** The envelope fields the state reads. */
export interface StateEvent {
  type: string;
  timestamp: number;
  metadata: Readonly<Record<string, unknown>>;
  data: unknown;
}

interface Cell {
  type: string;
  subject: string;
  minute: number;
  seq: number;
  value: unknown;
}

export class ConsumerState {
  readonly #mode: (typeof MODES)[ApplyMode];
  readonly #cells = new Map<string, Cell>();
  readonly #seen = new Map<string, true>();
  readonly #maxIds: number;
  #arrivals = 0;
  /** Requests not folded: unknown type, no subject, no timestamp. */
  skipped = 0;

  /** `maxIds`: ids remembered for the dedupe, the oldest forgotten beyond it (a long-running receiver stays bounded). */
  constructor(mode: ApplyMode, maxIds = 10_000_000) {
    this.#mode = MODES[mode];
    this.#maxIds = maxIds;
  }

  /** Folds one event; `sequence` null: its arrival rank stands in for it. */
  apply(webhookId: string | null, sequence: number | null, e: StateEvent): void {
    this.#arrivals++;
    const k = KINDS[e.type];
    const subject = k ? e.metadata[k.subject] : undefined;
    if (!k || typeof subject !== 'string' || typeof e.timestamp !== 'number' || !Number.isFinite(e.timestamp)) {
      this.skipped++;
      return;
    }
    if (this.#mode.dedupe && webhookId !== null) {
      if (this.#seen.has(webhookId)) return;
      if (this.#seen.size >= this.#maxIds) this.#seen.delete(this.#seen.keys().next().value as string);
      this.#seen.set(webhookId, true);
    }
    const minute = Math.floor(e.timestamp / 60_000) * 60_000;
    const key = `${e.type}|${subject}|${minute}`;
    const seq = sequence ?? this.#arrivals;
    const cell = this.#cells.get(key);
    if (k.kind === 'latest') {
      if (!cell) this.#cells.set(key, { type: e.type, subject, minute, seq, value: e.data });
      else if (this.#mode.wins === 'last' || (this.#mode.wins === 'sequence' && seq >= cell.seq)) {
        cell.seq = seq;
        cell.value = e.data;
      }
      return;
    }
    const add = k.kind === 'traffic' ? trafficOf(e.data) : detectionsOf(e.data);
    if (!cell) this.#cells.set(key, { type: e.type, subject, minute, seq, value: add });
    else
      cell.value =
        k.kind === 'traffic'
          ? sumTraffic(cell.value as Traffic, add as Traffic)
          : (cell.value as number) + (add as number);
  }

  /** The state, ordered by type, subject and minute. */
  rows(): StateRow[] {
    return [...this.#cells.values()]
      .sort(compareCells)
      .map((c) => ({ type: c.type, subject: c.subject, minute: c.minute, value: c.value }));
  }
}

interface Traffic {
  in: number;
  out: number;
}

function trafficOf(data: unknown): Traffic {
  const d = (data ?? {}) as { in?: unknown; out?: unknown };
  return { in: typeof d.in === 'number' ? d.in : 0, out: typeof d.out === 'number' ? d.out : 0 };
}

function sumTraffic(a: Traffic, b: Traffic): Traffic {
  return { in: a.in + b.in, out: a.out + b.out };
}

function detectionsOf(data: unknown): number {
  const local = (data as { local?: unknown } | null)?.local;
  return Array.isArray(local) ? local.length : 0;
}

function compareCells(a: Cell, b: Cell): number {
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  if (a.subject !== b.subject) return a.subject < b.subject ? -1 : 1;
  return a.minute - b.minute;
}

/** The key of a row (type, subject, minute). */
export function rowKey(r: Pick<StateRow, 'type' | 'subject' | 'minute'>): string {
  return `${r.type}|${r.subject}|${r.minute}`;
}

/** One NDJSON line of a row, keys in the documented order. */
export function rowLine(r: StateRow): string {
  const o: Record<string, unknown> = {};
  if (r.subscription !== undefined) o.subscription = r.subscription;
  o.type = r.type;
  o.subject = r.subject;
  o.minute = r.minute;
  o.value = r.value;
  if (r.truth !== undefined) o.truth = r.truth;
  return JSON.stringify(o);
}

/** The NDJSON of a state (one line per row, each ending in a newline). */
export function stateNdjson(rows: readonly StateRow[]): string {
  let s = '';
  for (const r of rows) s += `${rowLine(r)}\n`;
  return s;
}
