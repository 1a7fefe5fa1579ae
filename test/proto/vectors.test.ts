import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeAck, decodeHeartbeat, decodeMeshFrame, decodeUplink } from '../../src/proto/codec.js';
import { decodeToJson, encodeJson, readVector, VECTOR_DIR } from './vectors.js';

const names = readdirSync(VECTOR_DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.slice(0, -'.json'.length));

const DOMAIN: Record<string, (b: Uint8Array) => unknown> = {
  'occusim.v1.HiveUplink': decodeUplink,
  'occusim.v1.UplinkAck': decodeAck,
  'occusim.v1.MeshFrame': decodeMeshFrame,
  'occusim.v1.HiveHeartbeat': decodeHeartbeat,
};

describe('golden vectors in proto/vectors', () => {
  it('cover every message type of the protocol and the edge cases', () => {
    const types = new Set(names.map((n) => readVector(n).json.type));
    expect([...types].sort()).toEqual(Object.keys(DOMAIN).sort());
    expect(names).toEqual(expect.arrayContaining(['uplink-empty', 'uplink-max', 'uplink-unknown-field']));
  });

  for (const name of names) {
    it(`${name}: decodes to its JSON form and re-encodes byte for byte`, () => {
      const { json, bin } = readVector(name);
      expect(decodeToJson(json.type, bin)).toEqual(json.message);
      const expected = json.canonicalHex === undefined ? bin : Uint8Array.from(Buffer.from(json.canonicalHex, 'hex'));
      expect(Buffer.from(encodeJson(json.type, json.message)).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
      const decode = DOMAIN[json.type];
      expect(decode).toBeDefined();
      expect(() => decode?.(bin)).not.toThrow();
    });
  }

  it('the unknown-field vector carries bytes a v1 receiver does not know, and it decodes all the same', () => {
    const { json, bin } = readVector('uplink-unknown-field');
    expect(bin.length).toBeGreaterThan((json.canonicalHex ?? '').length / 2);
    expect(decodeUplink(bin).seq).toBe(1);
  });
});
