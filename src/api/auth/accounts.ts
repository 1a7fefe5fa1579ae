import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { ksuidFor } from '../../core/ids.js';
import type { AssetCatalogue } from '../../assets/catalogue.js';
import { dummyHash, hashSecret, OWASP_SCRYPT, verifySecret, type ScryptCost } from './passwords.js';
import type { ApiStatePort, StoredClient } from '../state/port.js';
import { AppError, ErrorCodes, type ErrorCode } from '../../core/errors.js';
import { ALL_SCOPES } from './scopes.js';

/**
 * Users and machine-to-machine clients of every organisation the API serves. Secrets are
 * kept only as slow hashes; a failed lookup still costs one hash verification.
 *
 * A scenario's seeded secrets are hashed at their first login, not at start (issue 33 item 8:
 * one OWASP scrypt per seeded secret made start-up ~1.4 s per organisation, 50 took 75 s to
 * listen). Until then the account holds the scenario's own text (which the catalogue holds
 * anyway); its first login costs the one scrypt every login costs (the candidate is hashed,
 * compared in constant time, and the hash kept on success), so the answer's timing tells
 * nothing more than before. Clients created through the API are hashed once at creation and
 * persisted with their hash (state/port.ts).
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
  /** What an unknown name is verified against (passwords.ts: a random salt and key, no scrypt to make). */
  #dummy: Promise<string> = Promise.resolve('');
  /** Seeded accounts not logged into yet: their secret as the scenario gives it (see above). */
  readonly #seeded = new WeakMap<{ hash: string }, string>();

  private constructor(cost: ScryptCost, clock: Clock, state: ApiStatePort | null) {
    this.#cost = cost;
    this.#clock = clock;
    this.#state = state;
  }

  /**
   * Every catalogue user and client, their secrets to be hashed at first login (no scrypt at
   * start: linear in organisations, a few µs each), then what `state` kept of earlier API
   * changes: clients created (with their stored hashes) and deleted through `/api/v1/client`.
   */
  static async fromCatalogue(
    catalogue: AssetCatalogue,
    clock: Clock,
    cost: ScryptCost = OWASP_SCRYPT,
    state: ApiStatePort | null = null,
  ): Promise<AccountService> {
    const svc = new AccountService(cost, clock, state);
    svc.#dummy = dummyHash(cost);
    for (const { orgId, item: u } of catalogue.users.values()) {
      const user: UserAccount = { id: u.id, username: u.username, orgId, hash: '' };
      svc.#seeded.set(user, u.password);
      svc.#users.set(u.username.toLowerCase(), user);
    }
    for (const { orgId, item: c } of catalogue.clients.values()) {
      const client: ClientAccount = {
        id: c.clientId,
        clientId: c.clientId,
        orgId,
        name: c.name,
        description: c.description,
        hash: '',
        scopes: ALL_SCOPES,
        createdBy: null,
      };
      svc.#seeded.set(client, c.secret);
      svc.#clients.set(c.clientId, client);
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
    return (await this.#check(user, password)) ? (user ?? null) : null;
  }

  async authenticateClient(clientId: string, secret: string): Promise<ClientAccount | null> {
    const client = this.#clients.get(clientId);
    return (await this.#check(client, secret)) ? (client ?? null) : null;
  }

  /** One scrypt whatever the account: a seeded one's first login hashes the candidate (kept on success). */
  async #check(account: { hash: string } | undefined, secret: string): Promise<boolean> {
    const seeded = account ? this.#seeded.get(account) : undefined;
    if (account === undefined || seeded === undefined)
      return verifySecret(secret, account?.hash ?? (await this.#dummy));
    const hash = await hashSecret(secret, this.#cost);
    if (!sameSecret(secret, seeded)) return false;
    // A concurrent first login may have settled it already: either hash verifies the secret.
    if (this.#seeded.delete(account)) account.hash = hash;
    return true;
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
    const record: ClientAccount = {
      id: clientId,
      clientId,
      orgId,
      name,
      description,
      hash: await hashSecret(secret, this.#cost),
      scopes: [],
      createdBy: null,
    };
    const granted: ClientAccount = { ...record, scopes: ALL_SCOPES };
    const account: ClientAccount = { ...granted, createdBy };
    const steps = [
      { code: ErrorCodes.CLIENT_CREATE_FAILED, doing: 'creating the client', row: record },
      { code: ErrorCodes.CLIENT_GRANT_CREATE_FAILED, doing: 'authorizing the client for API access', row: granted },
      {
        code: ErrorCodes.CLIENT_UPDATE_FAILED,
        doing: 'associating the client with the calling client',
        row: account,
      },
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
      throw stepFailed(ErrorCodes.CLIENT_DELETE_FAILED, 'deleting the client failed', err);
    }
    this.#clients.delete(id);
    return true;
  }
}

/** Constant-time equality of two secrets as scrypt sees them (NFKC), through fixed-length digests. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s.normalize('NFKC')).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** A store failure in a step of client management: 500 with the spec's code in the body (never a bare 500). */
function stepFailed(code: ErrorCode, message: string, cause: unknown): AppError {
  return new AppError(code, `${message}: ${(cause as Error).message}`, { cause });
}
