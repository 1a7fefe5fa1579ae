import { randomBytes } from 'node:crypto';
import type { WebhookStore } from '../cloud/store/webhook-port.js';
import type { AddressPolicy } from './address-policy.js';
import { WebhookError, WebhookErrorCodes } from './errors.js';
import { secretFromKey } from './signing.js';
import { checkOnePerType, validateCreate, validateUpdate, type CreateInput, type Subscription, type UpdateInput } from './subscription.js';

/**
 * The subscriptions of every organisation: the one place GraphQL, scenario files and the
 * delivery engine create, change and read them. Every call names the caller's organisation,
 * and another organisation's subscription is exactly like one that does not exist. Writes go
 * to the store first, so what a caller was told exists survives a restart.
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
  readonly #store: WebhookStore;
  readonly #policy: AddressPolicy;
  readonly #byId = new Map<string, Subscription>();
  #all: readonly Subscription[] | null = null;
  readonly #listeners = new Set<() => void>();
  /** Where generated secrets come from (a scenario derives them from the seed instead). */
  readonly #newSecret: () => string;

  constructor(store: WebhookStore, policy: AddressPolicy, newSecret: () => string = () => secretFromKey(randomBytes(32))) {
    this.#store = store;
    this.#policy = policy;
    this.#newSecret = newSecret;
    for (const row of store.subscriptions()) this.#byId.set(row.id, JSON.parse(row.body) as Subscription);
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

  /** Called after every change (the engine re-reads its endpoints). */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** All or nothing: one bad input refuses the whole list, naming it (`input[i]…`). */
  create(orgId: string, inputs: readonly CreateInput[], pathOf: (i: number) => string = (i) => `input[${i}]`): Created[] {
    const made: Created[] = [];
    const existing = this.all();
    inputs.forEach((input, i) => {
      const id = `webhook_${this.#peekSequence(made.length)}`;
      const secret = input.secret ?? this.#newSecret();
      const s = validateCreate(this.#policy, orgId, id, { ...input, secret }, secret, pathOf(i));
      checkOnePerType([...existing, ...made.map((m) => m.subscription)], s, pathOf(i));
      made.push({ subscription: s, secret });
    });
    for (const m of made) {
      this.#store.nextSequence('webhook');
      this.#put(m.subscription);
    }
    this.#changed();
    return made;
  }

  update(orgId: string, inputs: readonly UpdateInput[]): Subscription[] {
    const next = inputs.map((input, i) => {
      const current = this.get(orgId, input.id);
      if (!current) throw new WebhookError(WebhookErrorCodes.WEBHOOK_NOT_FOUND, `input[${i}].id`, `webhook ${input.id} does not exist`);
      return validateUpdate(this.#policy, current, input, `input[${i}]`);
    });
    const others = this.all().filter((s) => !next.some((n) => n.id === s.id));
    next.forEach((s, i) => checkOnePerType([...others, ...next.filter((n) => n.id !== s.id)], s, `input[${i}]`));
    for (const s of next) this.#put(s);
    this.#changed();
    return next;
  }

  /**
   * A scenario-declared subscription met again on a later start (`--resume`): the file is its
   * source, so what it declares (URL, auth, timeout, event types, filters, value-change flag,
   * secret when given) replaces the stored values; the id, the outbox and the delivery state
   * stay. A changed endpoint (URL, auth, timeout) re-enables a disabled subscription and clears
   * its failing period: whatever failed was the old endpoint. Without a secret in the file the
   * stored one (derived at the first start) stays. Nothing is written when nothing changed.
   */
  redeclare(current: Subscription, input: CreateInput, path: string): Redeclared {
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
    if (JSON.stringify(next) === JSON.stringify(current)) return { subscription: current, changed: false, endpointChanged: false };
    checkOnePerType(this.all(), next, path);
    this.#put(next);
    this.#changed();
    return { subscription: next, changed: true, endpointChanged };
  }

  /** Deletes the caller's subscriptions among `ids` with their undelivered events; false when one does not exist (none is deleted). */
  delete(orgId: string, ids: readonly string[]): boolean {
    if (!ids.every((id) => this.get(orgId, id))) return false;
    for (const id of ids) {
      this.#store.deleteSubscription(id);
      this.#byId.delete(id);
      this.#all = null;
    }
    this.#changed();
    return true;
  }

  /** The engine's own state changes (failing since, disabled). */
  replaceState(s: Subscription): void {
    if (!this.#byId.has(s.id)) return;
    this.#put(s);
    this.#changed();
  }

  #put(s: Subscription): void {
    this.#store.putSubscription({ id: s.id, orgId: s.orgId, body: JSON.stringify(s) });
    this.#byId.set(s.id, s);
    this.#all = null;
  }

  /** The sequence number the k-th subscription of this call will take (taken only on success). */
  #peekSequence(k: number): number {
    return this.#store.cursor('seq:webhook') + 1 + k;
  }

  #changed(): void {
    this.#all = null;
    for (const l of this.#listeners) l();
  }
}
