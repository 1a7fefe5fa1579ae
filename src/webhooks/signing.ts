import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { WebhookError, WebhookErrorCodes } from './errors.js';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature scheme"):
 * `webhook-signature: v1,<base64 HMAC-SHA256(key, "${id}.${timestamp}.${body}")>`, the key
 * being the base64 part of a `whsec_` secret, the timestamp integer seconds. During a
 * rotation the header carries several signatures separated by spaces; a receiver accepts the
 * delivery when any of them verifies with any secret it holds.
 */
export const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks recommends 24..64 bytes of key. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
/** Default tolerance of a receiver for `webhook-timestamp` against its clock (spec: 5 minutes). */
export const DEFAULT_TOLERANCE_S = 5 * 60;

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The key bytes of a `whsec_` secret; throws WEBHOOK_BAD_SECRET naming `path`. */
export function secretKey(secret: string, path = 'secret'): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new WebhookError(WebhookErrorCodes.WEBHOOK_BAD_SECRET, path, `a signing secret starts with ${SECRET_PREFIX}`);
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new WebhookError(WebhookErrorCodes.WEBHOOK_BAD_SECRET, path, 'the part after whsec_ is not base64');
  const key = Buffer.from(b64, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    // The published test vector's key is 24 bytes; shorter keys are refused as guessable.
    throw new WebhookError(WebhookErrorCodes.WEBHOOK_BAD_SECRET, path, `the key is ${key.length} bytes (${MIN_KEY_BYTES}..${MAX_KEY_BYTES})`);
  }
  return key;
}

/** A `whsec_` secret from key bytes. */
export const secretFromKey = (key: Uint8Array): string => SECRET_PREFIX + Buffer.from(key).toString('base64');

/**
 * Keys of the secrets in use, decoded once into key objects: every delivery (and every
 * verification in the receiver) signs with the same few secrets, and decoding one costs as
 * much as the HMAC; a `KeyObject` also spares `createHmac` copying the key bytes each time.
 */
const keys = new Map<string, KeyObject>();
const MAX_CACHED_KEYS = 256;

function cachedKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (key === undefined) {
    key = createSecretKey(secretKey(secret));
    if (keys.size >= MAX_CACHED_KEYS) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** The HMAC-SHA256 of `${id}.${timestamp}.${body}`, raw bytes. */
function mac(secret: string, id: string, timestampS: number, body: string | Uint8Array): Buffer {
  const h = createHmac('sha256', cachedKey(secret));
  h.update(`${id}.${timestampS}.`);
  h.update(body);
  return h.digest();
}

/** One `v1,<base64>` signature. */
export function sign(secret: string, id: string, timestampS: number, body: string | Uint8Array): string {
  return `v1,${mac(secret, id, timestampS, body).toString('base64')}`;
}

/** The three headers; several secrets (rotation) give several space-separated signatures. */
export function signedHeaders(secrets: readonly string[], id: string, timestampS: number, body: string | Uint8Array): SignedHeaders {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampS), 'webhook-signature': signatureHeader(secrets, id, timestampS, body) };
}

/** The `webhook-signature` value alone (the delivery path builds its headers object once, literally). */
export function signatureHeader(secrets: readonly string[], id: string, timestampS: number, body: string | Uint8Array): string {
  // One secret outside a rotation: no array built and joined per delivery.
  if (secrets.length === 1) return sign(secrets[0] as string, id, timestampS, body);
  return secrets.map((s) => sign(s, id, timestampS, body)).join(' ');
}

const DIGEST_BYTES = 32;
/** `v1,` and the 43 base64 characters of a 32-byte HMAC-SHA256 (44 with its `=` padding). */
const V1_ENTRY_LENGTH = 3 + 43;
/** A decoded signature (verification is synchronous: one buffer serves every call). */
const given = Buffer.alloc(DIGEST_BYTES);

export type VerifyResult = { ok: true } | { ok: false; reason: 'missing-headers' | 'bad-timestamp' | 'too-old' | 'too-new' | 'no-match' };

/**
 * Verifies a delivery as a Standard Webhooks receiver does: the timestamp within `toleranceS`
 * of `nowS` (replay protection), then any `v1` signature equal (constant time) to one computed
 * with any of the secrets.
 */
export function verify(
  secrets: readonly string[],
  headers: Partial<Record<keyof SignedHeaders, string | undefined>>,
  body: string | Uint8Array,
  nowS: number,
  toleranceS = DEFAULT_TOLERANCE_S,
): VerifyResult {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sigs = headers['webhook-signature'];
  if (!id || !ts || !sigs) return { ok: false, reason: 'missing-headers' };
  if (!/^\d+$/.test(ts)) return { ok: false, reason: 'bad-timestamp' };
  const t = Number(ts);
  if (t < nowS - toleranceS) return { ok: false, reason: 'too-old' };
  if (t > nowS + toleranceS) return { ok: false, reason: 'too-new' };
  // Raw digests compared with the decoded signatures, each decoded into one reused buffer: no
  // base64 text, split array or per-entry string is built per request (the header is walked
  // in place), and a digest is computed only when a `v1` entry is there to compare it with.
  let expected: Buffer[] | null = null;
  for (let start = 0; start < sigs.length; ) {
    let end = sigs.indexOf(' ', start);
    if (end < 0) end = sigs.length;
    // Only `v1,<base64 of 32 bytes>` (padded or not) can match: other schemes (v1a) are not
    // ours, and a longer or shorter text decodes to another length (as Buffer.from compared it).
    const len = end - start;
    if ((len === V1_ENTRY_LENGTH || (len === V1_ENTRY_LENGTH + 1 && sigs.charCodeAt(end - 1) === 0x3d)) && sigs.startsWith('v1,', start)) {
      const n = given.write(sigs.slice(start + 3, end), 'base64');
      if (n === DIGEST_BYTES) {
        expected ??= secrets.map((s) => mac(s, id, t, body));
        for (const e of expected) if (timingSafeEqual(e, given)) return { ok: true };
      }
    }
    start = end + 1;
  }
  return { ok: false, reason: 'no-match' };
}
