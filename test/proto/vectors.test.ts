import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeAck, decodeHeartbeat, decodeMeshFrame, decodeUplink } from '../../src/proto/codec.js';
import { decodeToJson, encodeJson, readVector, VECTOR_DIR, firmwareBench } from './vectors.js';

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
      expect(Buffer.from(encodeJson(json.type, json.message)).toString('hex')).toBe(
        Buffer.from(expected).toString('hex'),
      );
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

describe('the vectors belong to scenarios/firmware.yaml', () => {
  const bench = firmwareBench();
  const modes = new Map(bench.sensors.map((s) => [s.mac, s.mode]));
  it.each(names.filter((n) => !['uplink-max', 'mesh-data', 'mesh-health'].includes(n)))(
    '%s: its hive and sensors are the bench\u2019s, each packet of the sensor\u2019s mode',
    (name) => {
      const { json } = readVector(name);
      const m = json.message as {
        hiveSerial?: string;
        packets?: Array<{ sensorMac: string; presence?: unknown; traffic?: unknown }>;
      };
      if (m.hiveSerial !== undefined) expect(m.hiveSerial).toBe(bench.serial);
      for (const p of m.packets ?? [])
        expect(modes.get(p.sensorMac)).toBe(p.traffic !== undefined ? 'traffic' : 'presence');
    },
  );
});
