import { CallScope } from './cache.js';
import type { Asset, CatalogCache } from './catalog.js';
import { SPACES_QUERY } from './catalog.js';
import type { EventLog } from './events.js';
import { OccupancyReader, isOccupancySpace } from './occupancy.js';
import type { Platform } from './platform.js';
import type { Clock } from '../core/clock.js';

/**
 * Resource subscriptions of one organisation's context (issue 28, item 1), shared by all its
 * sessions. While any occupancy resource is subscribed, the subscribed spaces are read every
 * POLL_MS, fresh (no cache), in one reporting request per kind; a space whose last minutes
 * changed — a new minute was stored, or a stored one recomputed — is announced to each of
 * its subscribers with `notifications/resources/updated`. A record or plan can be subscribed
 * too; it is announced when the catalogue changes. While any session is attached, the spaces
 * query is read every CATALOGUE_POLL_MS and a change (a room added by a GraphQL mutation)
 * is announced to every session as `notifications/resources/list_changed`, and the cached
 * catalogue forgotten. Polling, not a hook into the store: the stdio server reaches the
 * platform over HTTP only, and one path serves both transports.
 */
export const POLL_MS = 250;
export const CATALOGUE_POLL_MS = 5000;
/** Resource subscriptions one session may hold. */
export const MAX_SUBSCRIPTIONS = 64;

export interface Subscriber {
  updated(uri: string): void;
  listChanged(): void;
}

export class Watcher {
  readonly #platform: Platform;
  readonly #catalog: CatalogCache;
  readonly #events: EventLog;
  readonly #scope = new CallScope();
  readonly #reader: OccupancyReader;
  /** Each subscriber's URIs, with the asset each names. */
  readonly #subs = new Map<Subscriber, Map<string, Asset>>();
  readonly #attached = new Set<Subscriber>();
  /** The last minutes seen per subscribed occupancy URI. */
  readonly #seen = new Map<string, string>();
  #spacesDigest: string | null = null;
  #poll: NodeJS.Timeout | null = null;
  #catalogPoll: NodeJS.Timeout | null = null;
  #failing = false;
  /** A poll is running: the next is scheduled when it ends, never beside it. */
  #busy = { occupancy: false, catalogue: false };

  constructor(platform: Platform, catalog: CatalogCache, clock: Clock, events: EventLog) {
    this.#platform = platform;
    this.#catalog = catalog;
    this.#events = events;
    this.#reader = new OccupancyReader(platform, clock, 0, this.#scope);
  }

  /** A session that hears list changes; returns its detach, which also drops its subscriptions. */
  attach(s: Subscriber): () => void {
    this.#attached.add(s);
    this.#schedule();
    return () => {
      this.#attached.delete(s);
      this.#subs.delete(s);
      this.#schedule();
    };
  }

  /**
   * A space's current occupancy read now, never from a cache: a client told a resource was
   * updated reads it again, and must not get the value it had (the tools' cache keeps 60 s).
   */
  async current(a: Asset): ReturnType<OccupancyReader['current']> {
    this.#scope.next();
    return this.#reader.current([a]);
  }

  /** Throws RangeError past MAX_SUBSCRIPTIONS (the caller answers it as -32602). */
  subscribe(s: Subscriber, uri: string, asset: Asset): void {
    const mine = this.#subs.get(s) ?? new Map<string, Asset>();
    if (!mine.has(uri) && mine.size >= MAX_SUBSCRIPTIONS)
      throw new RangeError(
        `at most ${MAX_SUBSCRIPTIONS} resource subscriptions per session; resources/unsubscribe one first`,
      );
    mine.set(uri, asset);
    this.#subs.set(s, mine);
    this.#schedule();
  }

  unsubscribe(s: Subscriber, uri: string): void {
    this.#subs.get(s)?.delete(uri);
    this.#schedule();
  }

  get subscriptions(): number {
    let n = 0;
    for (const m of this.#subs.values()) n += m.size;
    return n;
  }

  /** Occupancy URIs subscribed by anyone, with their spaces. */
  #watched(): Map<string, Asset> {
    const all = new Map<string, Asset>();
    for (const m of this.#subs.values())
      for (const [uri, a] of m) if (uri.endsWith('/occupancy') && isOccupancySpace(a)) all.set(uri, a);
    return all;
  }

  #schedule(): void {
    const want = this.#watched().size > 0;
    if (want && !this.#poll && !this.#busy.occupancy)
      this.#poll = setTimeout(() => void this.#pollOccupancy(), POLL_MS).unref();
    if (!want && this.#poll) {
      clearTimeout(this.#poll);
      this.#poll = null;
      this.#seen.clear();
    }
    const listen = this.#attached.size > 0;
    if (listen && !this.#catalogPoll && !this.#busy.catalogue)
      this.#catalogPoll = setTimeout(() => void this.#pollCatalogue(), CATALOGUE_POLL_MS).unref();
    if (!listen && this.#catalogPoll) {
      clearTimeout(this.#catalogPoll);
      this.#catalogPoll = null;
    }
  }

  async #pollOccupancy(): Promise<void> {
    this.#poll = null;
    this.#busy.occupancy = true;
    const watched = this.#watched();
    try {
      this.#scope.next();
      const byId = new Map([...watched.values()].map((a) => [a.id, a]));
      const { results } = await this.#reader.current([...byId.values()]);
      const now = new Map(results.map((r) => [r.id, JSON.stringify([r.occupancy, r.source, r.minutes])]));
      for (const [uri, a] of watched) {
        const digest = now.get(a.id) ?? 'null';
        const before = this.#seen.get(uri);
        this.#seen.set(uri, digest);
        if (before === undefined || before === digest) continue;
        for (const [s, mine] of this.#subs) if (mine.has(uri)) s.updated(uri);
      }
      this.#failing = false;
    } catch (err) {
      if (!this.#failing)
        this.#events.emit(
          'warning',
          'subscriptions',
          `reading subscribed occupancy failed (retrying): ${err instanceof Error ? err.message : String(err)}`,
        );
      this.#failing = true;
    }
    this.#busy.occupancy = false;
    this.#schedule();
  }

  async #pollCatalogue(): Promise<void> {
    this.#catalogPoll = null;
    this.#busy.catalogue = true;
    try {
      const digest = JSON.stringify(await this.#platform.query(SPACES_QUERY));
      if (this.#spacesDigest !== null && digest !== this.#spacesDigest) {
        this.#catalog.invalidate();
        this.#events.emit('info', 'catalogue', 'the catalogue changed: resources/list_changed sent');
        for (const s of this.#attached) s.listChanged();
        for (const [s, mine] of this.#subs)
          for (const uri of mine.keys()) if (!uri.endsWith('/occupancy')) s.updated(uri);
      }
      this.#spacesDigest = digest;
    } catch (err) {
      this.#events.emit(
        'warning',
        'catalogue',
        `watching the catalogue failed (retrying): ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    this.#busy.catalogue = false;
    this.#schedule();
  }
}
