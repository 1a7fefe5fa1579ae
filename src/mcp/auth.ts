import type { Clock } from '../core/clock.js';
import { fromHttpStatus, toolError } from './errors.js';
import { EventLog } from './events.js';
import type { HttpPort } from './http-port.js';
import { ENV, type McpSettings } from './settings.js';

/**
 * Bearer tokens for the platform API. The stdio server logs in with client credentials
 * (spec §4.2, §5 rule 7) and keeps the token until shortly before it expires
 * (platform-reference §1: re-login within a few minutes of expiry or on 401/403); the `/mcp`
 * route passes on the token its caller presented, which it cannot renew.
 */
export interface TokenSource {
  token(): Promise<string>;
  /** The API refused the token: forget it, so the next `token()` logs in again (if it can). */
  invalidate(): void;
  readonly renewable: boolean;
}

/** Re-login this long before expiry, or at a tenth of the lifetime for short-lived tokens. */
const EARLY_MS = 5 * 60_000;
export const LOGIN_PATH = '/api/v2/clients/login';

export class ClientCredentials implements TokenSource {
  readonly renewable = true;
  readonly #settings: McpSettings;
  readonly #http: HttpPort;
  readonly #clock: Clock;
  readonly #events: EventLog;
  #cached: { token: string; renewAtMs: number } | null = null;
  #pending: Promise<string> | null = null;

  constructor(settings: McpSettings, http: HttpPort, clock: Clock, events: EventLog = new EventLog()) {
    this.#settings = settings;
    this.#http = http;
    this.#clock = clock;
    this.#events = events;
  }

  token(): Promise<string> {
    if (this.#cached && this.#clock.now() < this.#cached.renewAtMs) return Promise.resolve(this.#cached.token);
    // Concurrent tool calls share one login.
    this.#pending ??= this.#login()
      .catch((err: unknown) => {
        this.#events.emit('error', 'auth', `login failed: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      })
      .finally(() => (this.#pending = null));
    return this.#pending;
  }

  invalidate(): void {
    this.#cached = null;
  }

  async #login(): Promise<string> {
    const { clientId, clientSecret, audience } = this.#settings;
    if (!clientId || !clientSecret) {
      throw toolError(
        'VALIDATION_FAILED',
        `no client credentials: set ${ENV.clientId} and ${ENV.clientSecret} (an API client of your organisation) in the tool server's environment`,
      );
    }
    const res = await this.#http.post(
      LOGIN_PATH,
      { client_id: clientId, client_secret: clientSecret, audience, grant_type: 'client_credentials' },
      null,
    );
    const body = (res.body ?? {}) as {
      access_token?: unknown;
      expires_in?: unknown;
      error?: unknown;
      error_description?: unknown;
    };
    if (res.status !== 200 || typeof body.access_token !== 'string') {
      const detail = typeof body.error_description === 'string' ? body.error_description : res.text.slice(0, 200);
      if (res.status === 400 || res.status === 401 || res.status === 403) {
        throw toolError(
          'AUTH_EXPIRED',
          `login with ${ENV.clientId}=${clientId} was refused (${detail}); check ${ENV.clientId}, ${ENV.clientSecret} and ${ENV.audience}`,
        );
      }
      throw fromHttpStatus(res.status, 'login', detail);
    }
    const lifetimeMs = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600) * 1000;
    const early = Math.min(EARLY_MS, lifetimeMs / 10);
    this.#events.emit(
      'info',
      'auth',
      `${this.#cached ? 'token renewed' : 'logged in'} as ${clientId}; renewed again in ${Math.round((lifetimeMs - early) / 1000)} s`,
    );
    this.#cached = { token: body.access_token, renewAtMs: this.#clock.now() + lifetimeMs - early };
    return body.access_token;
  }
}

/** The token an HTTP caller of `/mcp` presented (already verified by the route). */
export class PresentedToken implements TokenSource {
  readonly renewable = false;
  readonly #token: string;

  constructor(token: string) {
    this.#token = token;
  }

  token(): Promise<string> {
    return Promise.resolve(this.#token);
  }

  invalidate(): void {}
}
