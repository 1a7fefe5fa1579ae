import { randomBytes } from 'node:crypto';
import type { AsyncWebhookStore, StoredSubscription } from '../store/webhook-port.js';
import type { AddressPolicy } from './address-policy.js';
import { ErrorCodes } from '../core/errors.js';
import { webhookError } from './errors.js';
import { secretFromKey } from './signing.js';
import {
  checkOnePerType,
  validateCreate,
  validateUpdate,
  type CreateInput,
  type Subscription,
  type UpdateInput,
} from './subscription.js';

/**
 * The subscriptions of every organisation: the one place GraphQL, scenario files and the
 * delivery engine create, change and read them. Every call names the caller's organisation,
 * and another organisation's subscription is exactly like one that does not exist. Writes go
 * to the store first, so what a caller was told exists survives a restart.
 *
 * The store is awaited (`AsyncWebhookStore`: SQLite or PostgreSQL), reads are not: every
 * subscription is held here (`all()` is read per packet on the ingest path). Changes run one
 * after another, each from the state the previous one left: a change validated against what
 * is held, written, then announced (listeners awaited) before the next one starts, so two
 * concurrent `createWebhooks` never take the same id and the engine's own state changes never
 * undo a user's update made meanwhile (they are computed from the current subscription).
 */
export interface Created {
  subscription: Subscription;
  /** The signing secret, returned once by createWebhooks (given or generated). */
  secret: string;
}

export interface Redeclared {
  subscription: Subscription;
  /** Something the file declares differs from what was stored (and was written). */
  changed: boolean;
  /** URL, auth or timeout changed: waiting retries were for the old endpoint. */
  endpointChanged: boolean;
}

export class WebhookService {
  readonly #store: AsyncWebhookStore;
  readonly #policy: AddressPolicy;
  readonly #byId = new Map<string, Subscription>();
  #all: readonly Subscription[] | null = null;
  readonly #listeners = new Set<() => Promise<void> | void>();
  /** Where generated secrets come from (a scenario derives them from the seed instead). */
  readonly #newSecret: () => string;
  /** The changes, one after another (a failed one does not stop the next). */
  #changes: Promise<unknown> = Promise.resolve();

  /** The service over the subscriptions `store` holds. */
  static async open(
    store: AsyncWebhookStore,
    policy: AddressPolicy,
    newSecret: () => string = () => secretFromKey(randomBytes(32)),
  ): Promise<WebhookService> {
    return new WebhookService(store, policy, newSecret, await store.subscriptions());
  }

  private constructor(
    store: AsyncWebhookStore,
    policy: AddressPolicy,
    newSecret: () => string,
    rows: readonly StoredSubscription[],
  ) {
    this.#store = store;
    this.#policy = policy;
    this.#newSecret = newSecret;
    for (const row of rows) this.#byId.set(row.id, JSON.parse(row.body) as Subscription);
  }

  get policy(): AddressPolicy {
    return this.#policy;
  }

  /** Every subscription, in creation order (delivery rounds go in this order); read per packet, so cached between changes. */
  all(): readonly Subscription[] {
    return (this.#all ??= [...this.#byId.values()]);
  }

  list(orgId: string): Subscription[] {
    return this.all().filter((s) => s.orgId === orgId);
  }

  get(orgId: string, id: string): Subscription | null {
    const s = this.#byId.get(id);
    return s && s.orgId === orgId ? s : null;
  }

  /** Called after every change, awaited before the next change starts (the engine re-reads its endpoints). */
  onChange(listener: () => Promise<void> | void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** All or nothing: one bad input refuses the whole list, naming it (`input[i]…`). */
  create(
    orgId: string,
    inputs: readonly CreateInput[],
    pathOf: (i: number) => string = (i) => `input[${i}]`,
  ): Promise<Created[]> {
    return this.#change(async () => {
      // The sequence number the k-th subscription of this call will take (taken only on success).
      const next = (await this.#store.cursor('seq:webhook')) + 1;
      const made: Created[] = [];
      const existing = this.all();
      inputs.forEach((input, i) => {
        const id = `webhook_${next + made.length}`;
        const secret = input.secret ?? this.#newSecret();
        const s = validateCreate(this.#policy, orgId, id, { ...input, secret }, secret, pathOf(i));
        checkOnePerType([...existing, ...made.map((m) => m.subscription)], s, pathOf(i));
        made.push({ subscription: s, secret });
      });
      for (const m of made) {
        await this.#store.nextSequence('webhook');
        await this.#put(m.subscription);
      }
      await this.#changed();
      return made;
    });
  }

  update(orgId: string, inputs: readonly UpdateInput[]): Promise<Subscription[]> {
    return this.#change(async () => {
      const next = inputs.map((input, i) => {
        const current = this.get(orgId, input.id);
        if (!current)
          throw webhookError(ErrorCodes.WEBHOOK_NOT_FOUND, `input[${i}].id`, `webhook ${input.id} does not exist`);
        return validateUpdate(this.#policy, current, input, `input[${i}]`);
      });
      const others = this.all().filter((s) => !next.some((n) => n.id === s.id));
      next.forEach((s, i) => checkOnePerType([...others, ...next.filter((n) => n.id !== s.id)], s, `input[${i}]`));
      for (const s of next) await this.#put(s);
      await this.#changed();
      return next;
    });
  }

  /**
   * A scenario-declared subscription met again on a later start (`--resume`): the file is its
   * source, so what it declares (URL, auth, timeout, event types, filters, value-change flag,
   * secret when given) replaces the stored values; the id, the outbox and the delivery state
   * stay. A changed endpoint (URL, auth, timeout) re-enables a disabled subscription and clears
   * its failing period: whatever failed was the old endpoint. Without a secret in the file the
   * stored one (derived at the first start) stays. Nothing is written when nothing changed.
   */
  redeclare(id: string, input: CreateInput, path: string): Promise<Redeclared> {
    return this.#change(async () => {
      const current = this.#byId.get(id);
      if (!current) throw webhookError(ErrorCodes.WEBHOOK_NOT_FOUND, path, `webhook ${id} does not exist`);
      const secret = input.secret ?? (current.secrets[0] as string);
      const declared = validateCreate(this.#policy, current.orgId, current.id, { ...input, secret }, secret, path);
      const endpointChanged = JSON.stringify(declared.endpoint) !== JSON.stringify(current.endpoint);
      const next: Subscription = {
        ...current,
        eventTypes: declared.eventTypes,
        filters: declared.filters,
        sendOnValueChange: declared.sendOnValueChange,
        endpoint: declared.endpoint,
        // A new secret in the file replaces the old one outright (no rotation overlap: the file is the receiver's configuration too).
        secrets: input.secret && input.secret !== current.secrets[0] ? [input.secret] : current.secrets,
        ...(endpointChanged ? { status: 'ENABLED' as const, disabledReason: null, failingSinceMs: null } : {}),
      };
      if (JSON.stringify(next) === JSON.stringify(current))
        return { subscription: current, changed: false, endpointChanged: false };
      checkOnePerType(this.all(), next, path);
      await this.#put(next);
      await this.#changed();
      return { subscription: next, changed: true, endpointChanged };
    });
  }

  /** Deletes the caller's subscriptions among `ids` with their undelivered events; false when one does not exist (none is deleted). */
  delete(orgId: string, ids: readonly string[]): Promise<boolean> {
    return this.#change(async () => {
      if (!ids.every((id) => this.get(orgId, id))) return false;
      for (const id of ids) {
        await this.#store.deleteSubscription(id);
        this.#byId.delete(id);
        this.#all = null;
      }
      await this.#changed();
      return true;
    });
  }

  /**
   * The engine's own state changes (failing since, disabled), computed by `next` from the
   * subscription as it is when the change runs (not as it was when the engine looked): a
   * user's update made meanwhile is kept. `next` returns null for no change; an unknown id is none.
   */
  changeState(id: string, next: (current: Subscription) => Subscription | null): Promise<void> {
    return this.#change(async () => {
      const current = this.#byId.get(id);
      const s = current ? next(current) : null;
      if (!s) return;
      await this.#put(s);
      await this.#changed();
    });
  }

  #change<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#changes.then(work);
    this.#changes = run.catch(() => undefined);
    return run;
  }

  async #put(s: Subscription): Promise<void> {
    await this.#store.putSubscription({ id: s.id, orgId: s.orgId, body: JSON.stringify(s) });
    this.#byId.set(s.id, s);
    this.#all = null;
  }

  async #changed(): Promise<void> {
    this.#all = null;
    for (const l of this.#listeners) await l();
  }
}
