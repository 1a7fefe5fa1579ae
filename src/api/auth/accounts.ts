import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { ksuidFor } from '../../core/ids.js';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import { dummyHash, hashSecret, OWASP_SCRYPT, verifySecret, type ScryptCost } from './passwords.js';
import type { ApiStatePort, StoredClient } from '../state/port.js';
import { ApiError, ApiErrorCodes, type ApiErrorCode } from '../errors.js';
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

  /**
   * Creates a client in three named steps, each stored before the next and each failing with
   * its own spec code (§7), as the reference platform's flow does: the record (identity and
   * secret hash, no scopes yet), its grant (spec §4.5 rule 2: every scope), and its
   * association with the caller's client (rule 1). A failed step undoes what was stored
   * before it, and only a client whose three steps succeeded is known here (can log in).
   */
  async createClient(orgId: string, name: string, description: string, createdBy: string): Promise<CreatedClient> {
    const secret = randomBytes(32).toString('base64url');
    const clientId = `client_${ksuidFor(this.#clock.now(), `${orgId}/${name}/${randomBytes(8).toString('hex')}`)}`;
    const record: ClientAccount = { id: clientId, clientId, orgId, name, description, hash: await hashSecret(secret, this.#cost), scopes: [], createdBy: null };
    const granted: ClientAccount = { ...record, scopes: ALL_SCOPES };
    const account: ClientAccount = { ...granted, createdBy };
    const steps = [
      { code: ApiErrorCodes.CLIENT_CREATE_FAILED, doing: 'creating the client', row: record },
      { code: ApiErrorCodes.CLIENT_GRANT_CREATE_FAILED, doing: 'authorizing the client for API access', row: granted },
      { code: ApiErrorCodes.CLIENT_UPDATE_FAILED, doing: 'associating the client with the calling client', row: account },
    ] as const;
    for (const [i, step] of steps.entries()) {
      try {
        await this.#state?.putClient(step.row);
      } catch (err) {
        if (i > 0) await this.#state?.deleteClient(clientId).catch(() => undefined); // best effort: the failure reported is the step's
        throw stepFailed(step.code, `${step.doing} failed`, err);
      }
    }
    this.#clients.set(clientId, account);
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

  /**
   * False when the organisation has no such client; resolves once the deletion is stored. The
   * client is forgotten here only after that, so a failed deletion (CLIENT_DELETE_FAILED)
   * leaves it whole, listed and able to log in, and the caller may try again.
   */
  async deleteClient(orgId: string, id: string): Promise<boolean> {
    if (!this.getClient(orgId, id)) return false;
    try {
      await this.#state?.deleteClient(id);
    } catch (err) {
      throw stepFailed(ApiErrorCodes.CLIENT_DELETE_FAILED, 'deleting the client failed', err);
    }
    this.#clients.delete(id);
    return true;
  }
}

/** A store failure in a step of client management: 500 with the spec's code in the body (never a bare 500). */
function stepFailed(code: ApiErrorCode, message: string, cause: unknown): ApiError {
  const err = new ApiError(500, code, `${message}: ${(cause as Error).message}`, true);
  err.cause = cause;
  return err;
}
