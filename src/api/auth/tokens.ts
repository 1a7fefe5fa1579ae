import { randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { Clock } from '../../core/clock.js';
import { unauthorized } from '../errors.js';
import { formatScopes, parseScopes } from './scopes.js';

/**
 * Access tokens are JWTs per RFC 9068 (`typ: at+jwt`; `iss sub aud exp iat jti client_id`
 * plus `org_id` and `scope`), signed with ES256. Verification accepts only that algorithm,
 * that type, this issuer and the configured audience, and keys it knows by `kid`.
 */
export interface TokenConfig {
  issuer: string;
  /** The API identifier clients send as `audience` (configurable: existing clients send the production one). */
  audience: string;
  /**
   * Further identifiers a client may send as `audience` at login (the reference platform's
   * published one, which existing clients send unchanged); the tokens issued carry `audience`.
   */
  alsoAccepted?: readonly string[];
  accessTtlS: number;
  refreshTtlS: number;
  clock: Clock;
}

export interface Principal {
  sub: string;
  orgId: string;
  clientId: string;
  scopes: ReadonlySet<string>;
  kind: 'user' | 'client';
  /** The platform operator's staff (internal mutations such as deleteSensors). */
  operator: boolean;
}

export interface IssuedAccess {
  token: string;
  expiresIn: number;
}

const ALG = 'ES256';

export interface SigningKey {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  kid: string;
}
const CLOCK_TOLERANCE_S = 5;

interface RefreshGrant {
  principal: Principal;
  expiresAtMs: number;
}

export class TokenService {
  readonly #cfg: TokenConfig;
  readonly #privateKey: CryptoKey;
  readonly #keys: ReadonlyMap<string, CryptoKey>;
  readonly #kid: string;
  readonly #jwk: JWK;
  readonly #refresh = new Map<string, RefreshGrant>();
  /** Subjects deleted while their access tokens were still unexpired. */
  readonly #revoked = new Set<string>();

  private constructor(cfg: TokenConfig, kid: string, privateKey: CryptoKey, publicKey: CryptoKey, jwk: JWK) {
    this.#cfg = cfg;
    this.#kid = kid;
    this.#privateKey = privateKey;
    this.#keys = new Map([[kid, publicKey]]);
    this.#jwk = jwk;
  }

  /** A service with a fresh ES256 key pair, or the given one (tests sign forged tokens with it). */
  static async create(cfg: TokenConfig, key?: SigningKey): Promise<TokenService> {
    const { privateKey, publicKey } = key ?? (await generateKeyPair(ALG, { extractable: true }));
    const kid = key?.kid ?? randomBytes(8).toString('hex');
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
    return new TokenService(cfg, kid, privateKey, publicKey, jwk);
  }

  get audience(): string {
    return this.#cfg.audience;
  }

  /** Whether a client login may name this audience: ours, or one of `alsoAccepted`. */
  acceptsAudience(audience: string): boolean {
    return audience === this.#cfg.audience || (this.#cfg.alsoAccepted ?? []).includes(audience);
  }

  /** The public key set, for `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.#jwk] };
  }

  async issueAccess(p: Principal): Promise<IssuedAccess> {
    const nowS = Math.floor(this.#cfg.clock.now() / 1000);
    const token = await new SignJWT({
      client_id: p.clientId,
      org_id: p.orgId,
      scope: formatScopes(p.scopes),
      ...(p.operator ? { operator: true } : {}),
    })
      .setProtectedHeader({ alg: ALG, typ: 'at+jwt', kid: this.#kid })
      .setIssuer(this.#cfg.issuer)
      .setSubject(p.sub)
      .setAudience(this.#cfg.audience)
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + this.#cfg.accessTtlS)
      .setJti(randomUUID())
      .sign(this.#privateKey);
    return { token, expiresIn: this.#cfg.accessTtlS };
  }

  /** OpenID Connect ID token for a password-grant user. */
  async issueIdToken(p: Principal, username: string): Promise<string> {
    const nowS = Math.floor(this.#cfg.clock.now() / 1000);
    return new SignJWT({ email: username, org_id: p.orgId })
      .setProtectedHeader({ alg: ALG, typ: 'JWT', kid: this.#kid })
      .setIssuer(this.#cfg.issuer)
      .setSubject(p.sub)
      .setAudience(p.clientId)
      .setIssuedAt(nowS)
      .setExpirationTime(nowS + this.#cfg.accessTtlS)
      .sign(this.#privateKey);
  }

  /** An opaque, single-use refresh token (rotated on every use). */
  issueRefresh(p: Principal): string {
    const token = randomBytes(32).toString('base64url');
    this.#refresh.set(token, { principal: p, expiresAtMs: this.#cfg.clock.now() + this.#cfg.refreshTtlS * 1000 });
    return token;
  }

  /** The principal of a refresh token, consuming it; null when unknown, used or expired. */
  redeemRefresh(token: string): Principal | null {
    const grant = this.#refresh.get(token);
    this.#refresh.delete(token);
    if (!grant || grant.expiresAtMs <= this.#cfg.clock.now()) return null;
    return grant.principal;
  }

  /** Invalidates every token of a principal (deleted client or user): refresh and access alike. */
  revokeSubject(sub: string): void {
    this.#revoked.add(sub);
    for (const [token, grant] of this.#refresh) if (grant.principal.sub === sub) this.#refresh.delete(token);
  }

  /** Verifies an access token; throws UNAUTHORIZED (401) naming what was wrong. */
  async verifyAccess(token: string): Promise<Principal> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, (header) => this.#keyFor(header.kid), {
        algorithms: [ALG],
        typ: 'at+jwt',
        issuer: this.#cfg.issuer,
        audience: this.#cfg.audience,
        requiredClaims: ['sub', 'exp', 'iat', 'jti', 'client_id'],
        clockTolerance: CLOCK_TOLERANCE_S,
        currentDate: new Date(this.#cfg.clock.now()),
      }));
    } catch (err) {
      throw unauthorized(`invalid access token: ${(err as Error).message}`);
    }
    const { sub, client_id: clientId, org_id: orgId, scope, operator } = payload;
    if (
      typeof sub !== 'string' ||
      typeof clientId !== 'string' ||
      typeof orgId !== 'string' ||
      typeof scope !== 'string'
    ) {
      throw unauthorized('invalid access token: malformed claims');
    }
    if (this.#revoked.has(sub)) throw unauthorized('invalid access token: its subject was deleted');
    return {
      sub,
      clientId,
      orgId,
      scopes: parseScopes(scope),
      kind: sub.startsWith('client_') ? 'client' : 'user',
      operator: operator === true,
    };
  }

  #keyFor(kid: string | undefined): CryptoKey {
    const key = kid === undefined ? undefined : this.#keys.get(kid);
    if (!key) throw new Error('unknown key id');
    return key;
  }
}
