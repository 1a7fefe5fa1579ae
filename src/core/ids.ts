import crypto, { createHash } from 'node:crypto';

/**
 * Deterministic identifiers with the platform's prefixes (spec §2 "Identifier formats").
 * An id is a hash of the entity's naming path, so the same scenario always yields the same
 * ids, independent of seed, worker count or the order entities are created in.
 */
export type IdPrefix =
  | 'org'
  | 'site'
  | 'building'
  | 'space' // floors were formerly called spaces
  | 'room'
  | 'zone'
  | 'door'
  | 'hive'
  | 'sensor'
  | 'event'
  | 'client'
  | 'user'
  | 'person';

/** One-shot SHA-256 (Node ≥ 20.12): a scenario of 250,000 sensors derives ~750,000 ids and MACs. */
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'buffer') => Buffer }).hash;

function digest(parts: readonly string[]): Buffer {
  const text = parts.join('\u0000');
  return oneShot ? oneShot('sha256', text, 'buffer') : createHash('sha256').update(text).digest();
}

/** `room_3f9a0c...`: 16 lowercase hex characters after the prefix. */
export function stableId(prefix: IdPrefix, ...path: readonly string[]): string {
  return `${prefix}_${digest([prefix, ...path])
    .subarray(0, 8)
    .toString('hex')}`;
}

/** The opaque part of an id (webhook metadata carries sensor ids bare). */
export function bareId(id: string): string {
  const i = id.indexOf('_');
  return i < 0 ? id : id.slice(i + 1);
}

/** A sensor MAC as the wire names it: 8 lower-case hex bytes joined by - (scenario files and the API alike). */
export const MAC_PATTERN = /^([0-9a-f]{2}-){7}[0-9a-f]{2}$/;

/** MAC address in the platform's observed shape `00-17-0d-00-00-xx-xx-xx`. */
export function macFor(...path: readonly string[]): string {
  const d = digest(['mac', ...path]);
  const tail = [d[0], d[1], d[2]].map((b) => (b ?? 0).toString(16).padStart(2, '0'));
  return `00-17-0d-00-00-${tail.join('-')}`;
}

/** Hive serial number: `HV` + 10 uppercase hex digits, safe inside MQTT topics. */
export function hiveSerialFor(...path: readonly string[]): string {
  return `HV${digest(['hive-serial', ...path])
    .subarray(0, 5)
    .toString('hex')
    .toUpperCase()}`;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KSUID_EPOCH_S = 1_400_000_000;

/**
 * A KSUID (27 base62 characters: 4-byte timestamp since the KSUID epoch + 16 payload bytes),
 * with the payload taken from a hash of `key` rather than from a random source, so client ids
 * are reproducible from the scenario.
 */
export function ksuidFor(timestampMs: number, key: string): string {
  const bytes = Buffer.alloc(20);
  bytes.writeUInt32BE(Math.max(0, Math.floor(timestampMs / 1000) - KSUID_EPOCH_S) >>> 0, 0);
  digest(['ksuid', key]).copy(bytes, 4, 0, 16);
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(27, '0');
}

/** A reproducible secret of `bytes` random-looking bytes, base64url. */
export function secretFor(seed: number | string, ...path: readonly string[]): string {
  return digest(['secret', String(seed), ...path])
    .subarray(0, 24)
    .toString('base64url');
}
