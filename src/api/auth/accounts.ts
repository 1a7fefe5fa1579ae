import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { ksuidFor } from '../../core/ids.js';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import { dummyHash, hashSecret, OWASP_SCRYPT, verifySecret, type ScryptCost } from './passwords.js';
import type { ApiStatePort, StoredClient } from '../state/port.js';
import { ALL_SCOPES } from './scopes.js';

/**
 * Users and machine-to-machine clients of every organisation the API serves. Secrets are
 * kept only as slow hashes; a failed lookup still costs one hash verification.
 */
export interface UserAccount {
  id: string;
  username: string;
  orgId: string;
  hash: string;
}

/** A client as the API holds it: the stored record (state/port.ts) plus its record id. */
export interface ClientAccount extends StoredClient {
  /** Record id (equal to the client id: one client, one record). */
  id: string;
}

export interface CreatedClient {
  account: ClientAccount;
  /** Shown once, never stored in clear. */
  secret: string;
}

export class AccountService {
  readonly #users = new Map<string, UserAccount>();
  readonly #clients = new Map<string, ClientAccount>();
  readonly #cost: ScryptCost;
  readonly #clock: Clock;
  readonly #state: ApiStatePort | null;
  #dummy = '';

  private constructor(cost: ScryptCost, clock: Clock, state: ApiStatePort | null) {
    this.#cost = cost;
    this.#clock = clock;
    this.#state = state;
  }

  /**
   * Hashes every catalogue user's password and client's secret (slow by design: done once at
   * start), then applies what `state` kept of earlier API changes: clients created (with their
   * stored hashes) and deleted through `/api/v1/client`.
   */
  static async fromCatalogue(catalogue: AssetCatalogue, clock: Clock, cost: ScryptCost = OWASP_SCRYPT, state: ApiStatePort | null = null): Promise<AccountService> {
    const svc = new AccountService(cost, clock, state);
    svc.#dummy = await dummyHash(cost);
    for (const { orgId, item: u } of catalogue.users.values()) {
      svc.#users.set(u.username.toLowerCase(), { id: u.id, username: u.username, orgId, hash: await hashSecret(u.password, cost) });
    }
    for (const { orgId, item: c } of catalogue.clients.values()) {
      svc.#clients.set(c.clientId, { id: c.clientId, clientId: c.clientId, orgId, name: c.name, description: c.description, hash: await hashSecret(c.secret, cost), scopes: ALL_SCOPES, createdBy: null });
    }
    for (const row of (await state?.clientRows()) ?? []) {
      if (row.deleted) svc.#clients.delete(row.clientId);
      else svc.#clients.set(row.client.clientId, { id: row.client.clientId, ...row.client });
    }
    return svc;
  }

  /** The user when the password matches, else null (same cost either way). */
  async authenticateUser(username: string, password: string): Promise<UserAccount | null> {
    const user = this.#users.get(username.toLowerCase());
    const ok = await verifySecret(password, user?.hash ?? this.#dummy);
    return ok && user ? user : null;
  }

  async authenticateClient(clientId: string, secret: string): Promise<ClientAccount | null> {
    const client = this.#clients.get(clientId);
    const ok = await verifySecret(secret, client?.hash ?? this.#dummy);
    return ok && client ? client : null;
  }

  userById(id: string): UserAccount | undefined {
    for (const u of this.#users.values()) if (u.id === id) return u;
    return undefined;
  }

  async createClient(orgId: string, name: string, description: string, createdBy: string): Promise<CreatedClient> {
    const secret = randomBytes(32).toString('base64url');
    const clientId = `client_${ksuidFor(this.#clock.now(), `${orgId}/${name}/${randomBytes(8).toString('hex')}`)}`;
    const account: ClientAccount = {
      id: clientId,
      clientId,
      orgId,
      name,
      description,
      hash: await hashSecret(secret, this.#cost),
      scopes: ALL_SCOPES,
      createdBy,
    };
    this.#clients.set(clientId, account);
    await this.#state?.putClient(account);
    return { account, secret };
  }

  /** Clients of one organisation, oldest first. */
  listClients(orgId: string): ClientAccount[] {
    return [...this.#clients.values()].filter((c) => c.orgId === orgId);
  }

  /** A client of the organisation; another organisation's client is not found. */
  getClient(orgId: string, id: string): ClientAccount | undefined {
    const c = this.#clients.get(id);
    return c && c.orgId === orgId ? c : undefined;
  }

  /** False when the organisation has no such client; resolves once the deletion is stored. */
  async deleteClient(orgId: string, id: string): Promise<boolean> {
    if (!this.getClient(orgId, id)) return false;
    this.#clients.delete(id);
    await this.#state?.deleteClient(id);
    return true;
  }
}
