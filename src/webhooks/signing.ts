import * as crypto from 'node:crypto';
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { ErrorCodes } from '../core/errors.js';
import { webhookError } from './errors.js';

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
  if (!secret.startsWith(SECRET_PREFIX))
    throw webhookError(ErrorCodes.WEBHOOK_BAD_SECRET, path, `a signing secret starts with ${SECRET_PREFIX}`);
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64))
    throw webhookError(ErrorCodes.WEBHOOK_BAD_SECRET, path, 'the part after whsec_ is not base64');
  const key = Buffer.from(b64, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    // The published test vector's key is 24 bytes; shorter keys are refused as guessable.
    throw webhookError(
      ErrorCodes.WEBHOOK_BAD_SECRET,
      path,
      `the key is ${key.length} bytes (${MIN_KEY_BYTES}..${MAX_KEY_BYTES})`,
    );
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
const DIGEST_BYTES = 32;

function cachedKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (key === undefined) {
    key = createSecretKey(secretKey(secret));
    if (keys.size >= MAX_CACHED_KEYS) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** The HMAC-SHA256 of `${id}.${timestamp}.${body}`, raw bytes, through a `Hmac` object (large bodies, or a Node 20 before 20.12). */
function macByHmac(secret: string, id: string, timestampS: number, body: string | Uint8Array): Buffer {
  const h = createHmac('sha256', cachedKey(secret));
  h.update(`${id}.${timestampS}.`);
  h.update(body);
  return h.digest();
}

/**
 * HMAC-SHA256 (RFC 2104) as two one-shot SHA-256 calls: H((K ^ opad) || H((K ^ ipad) || m)).
 * `createHmac` builds a stream object, a native context (OpenSSL re-fetches SHA-256 for it) and
 * a digest buffer per message, each collected later: in the receiver `verify` took 5.5–6.4 µs a
 * request with it, 3.2–3.4 µs with this (bench/README.md, webhooks, "wh-receiver"), and the
 * signer pays the same. Here the message is copied after the key's inner pad into one reused
 * buffer and `crypto.hash` (Node ≥ 20.12, SHA-256 fetched once) returns each digest as a
 * 32-character latin1 string: nothing native is allocated per message. Keys are ≤ 64 bytes
 * (`secretKey`), so the padded key is the key itself (no hashing of long keys).
 */
const oneShot = (crypto as { hash?: (alg: string, data: Uint8Array, enc: 'binary' | 'base64') => string }).hash;
const BLOCK = 64;
/** Messages above this go through `createHmac`: the reused buffer stays small. */
const MAX_ONE_SHOT_BYTES = 64 * 1024;
let scratch = Buffer.allocUnsafe(4096);

interface Pads {
  /** K ^ ipad, 64 bytes. */
  inner: Buffer;
  /** K ^ opad, then room for the inner digest: the outer hash's whole input. */
  outer: Buffer;
}
const pads = new Map<string, Pads>();

function cachedPads(secret: string): Pads {
  let p = pads.get(secret);
  if (p === undefined) {
    const key = secretKey(secret);
    p = { inner: Buffer.alloc(BLOCK, 0x36), outer: Buffer.alloc(BLOCK + DIGEST_BYTES, 0) };
    p.outer.fill(0x5c, 0, BLOCK);
    for (let i = 0; i < key.length; i++) {
      (p.inner[i] as number) ^= key[i] as number;
      (p.outer[i] as number) ^= key[i] as number;
    }
    if (pads.size >= MAX_CACHED_KEYS) pads.clear();
    pads.set(secret, p);
  }
  return p;
}

/**
 * The digest of `${id}.${timestamp}.${body}` in `encoding` (latin1: one character per byte),
 * or null when the one-shot path does not apply (no `crypto.hash`, a large message).
 */
function macOneShot(
  secret: string,
  id: string,
  timestampS: number,
  body: string | Uint8Array,
  encoding: 'binary' | 'base64',
): string | null {
  if (oneShot === undefined) return null;
  const prefix = `${id}.${timestampS}.`;
  // UTF-8 takes at most 3 bytes per UTF-16 unit: the bound is known without measuring the text.
  const bound = BLOCK + 3 * prefix.length + (typeof body === 'string' ? 3 * body.length : body.length);
  if (bound > MAX_ONE_SHOT_BYTES) return null;
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(Math.min(MAX_ONE_SHOT_BYTES, 2 * bound));
  const p = cachedPads(secret);
  p.inner.copy(scratch, 0);
  let n = BLOCK + scratch.write(prefix, BLOCK, 'utf8');
  if (typeof body === 'string') n += scratch.write(body, n, 'utf8');
  else {
    scratch.set(body, n);
    n += body.length;
  }
  p.outer.write(oneShot('sha256', scratch.subarray(0, n), 'binary'), BLOCK, DIGEST_BYTES, 'latin1');
  return oneShot('sha256', p.outer, encoding);
}

/** One `v1,<base64>` signature. */
export function sign(secret: string, id: string, timestampS: number, body: string | Uint8Array): string {
  return `v1,${macOneShot(secret, id, timestampS, body, 'base64') ?? macByHmac(secret, id, timestampS, body).toString('base64')}`;
}

/** The three headers; several secrets (rotation) give several space-separated signatures. */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestampS: number,
  body: string | Uint8Array,
): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': signatureHeader(secrets, id, timestampS, body),
  };
}

/** The `webhook-signature` value alone (the delivery path builds its headers object once, literally). */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampS: number,
  body: string | Uint8Array,
): string {
  // One secret outside a rotation: no array built and joined per delivery.
  if (secrets.length === 1) return sign(secrets[0] as string, id, timestampS, body);
  return secrets.map((s) => sign(s, id, timestampS, body)).join(' ');
}

/** `v1,` and the 43 base64 characters of a 32-byte HMAC-SHA256 (44 with its `=` padding). */
const V1_ENTRY_LENGTH = 3 + 43;
/** A decoded signature and an expected digest (verification is synchronous: one buffer each serves every call). */
const given = Buffer.alloc(DIGEST_BYTES);
const expected = Buffer.alloc(DIGEST_BYTES);
const OK: VerifyResult = Object.freeze({ ok: true });

/** Writes the digest of the message with `secret` into `expected`. */
function digestIntoExpected(secret: string, id: string, timestampS: number, body: string | Uint8Array): void {
  const d = macOneShot(secret, id, timestampS, body, 'binary');
  if (d === null) macByHmac(secret, id, timestampS, body).copy(expected);
  else expected.write(d, 0, DIGEST_BYTES, 'latin1');
}

export type VerifyResult =
  { ok: true } | { ok: false; reason: 'missing-headers' | 'bad-timestamp' | 'too-old' | 'too-new' | 'no-match' };

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
  // One secret's digest lives in `expected`; with several (a rotation) each is copied out.
  let computed = false;
  let digests: Buffer[] | null = null;
  for (let start = 0; start < sigs.length;) {
    let end = sigs.indexOf(' ', start);
    if (end < 0) end = sigs.length;
    // Only `v1,<base64 of 32 bytes>` (padded or not) can match: other schemes (v1a) are not
    // ours, and a longer or shorter text decodes to another length (as Buffer.from compared it).
    const len = end - start;
    if (
      (len === V1_ENTRY_LENGTH || (len === V1_ENTRY_LENGTH + 1 && sigs.charCodeAt(end - 1) === 0x3d)) &&
      sigs.startsWith('v1,', start)
    ) {
      const n = given.write(sigs.slice(start + 3, end), 'base64');
      if (n === DIGEST_BYTES) {
        if (secrets.length === 1) {
          if (!computed) digestIntoExpected(secrets[0] as string, id, t, body);
          computed = true;
          if (timingSafeEqual(expected, given)) return OK;
        } else {
          digests ??= secrets.map((s) => {
            digestIntoExpected(s, id, t, body);
            return Buffer.from(expected);
          });
          for (const e of digests) if (timingSafeEqual(e, given)) return OK;
        }
      }
    }
    start = end + 1;
  }
  return { ok: false, reason: 'no-match' };
}
