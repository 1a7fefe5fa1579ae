import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type protobuf from 'protobufjs';
import { protoRoot } from '../../src/proto/codec.js';
import { loadScenarioFile } from '../../src/scenario/load.js';

/**
 * Golden vectors of proto/vectors/: `<name>.bin` (encoded bytes) and `<name>.json`
 * ({ type, description, message, canonicalHex? }). `message` is the protobuf JSON form
 * (camelCase, 64-bit integers as strings, enums by name). For a vector with unknown fields,
 * `canonicalHex` is what a v1 encoder writes back (unknown fields are not preserved).
 */
export const VECTOR_DIR = fileURLToPath(new URL('../../proto/vectors/', import.meta.url));

export interface VectorJson {
  type: string;
  description: string;
  message: Record<string, unknown>;
  canonicalHex?: string;
}

export const JSON_FORM: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  defaults: false,
  oneofs: false,
  arrays: false,
};

/** The scenario whose hive and sensors the vectors use (serial, MACs, start = T0). */
export const FIRMWARE_SCENARIO = 'scenarios/firmware.yaml';

export function firmwareBench(): {
  serial: string;
  password: string;
  startMs: number;
  sensors: Array<{ mac: string; mode: string }>;
} {
  const r = loadScenarioFile(fileURLToPath(new URL(`../../${FIRMWARE_SCENARIO}`, import.meta.url)));
  if (!r.ok) throw new Error(`${FIRMWARE_SCENARIO} does not load`);
  const hive = r.model.hives[0];
  if (hive === undefined) throw new Error(`${FIRMWARE_SCENARIO} has no hive`);
  return {
    serial: hive.serial,
    password: hive.password,
    startMs: r.model.startMs,
    sensors: r.model.sensors.map((s) => ({ mac: s.mac, mode: s.mode })),
  };
}

export function typeOf(name: string): protobuf.Type {
  return protoRoot.lookupType(name);
}

export function readVector(name: string): { json: VectorJson; bin: Uint8Array } {
  const json = JSON.parse(readFileSync(`${VECTOR_DIR}${name}.json`, 'utf8')) as VectorJson;
  return { json, bin: new Uint8Array(readFileSync(`${VECTOR_DIR}${name}.bin`)) };
}

export function encodeJson(type: string, message: Record<string, unknown>): Uint8Array {
  const t = typeOf(type);
  return t.encode(t.fromObject(message)).finish();
}

export function decodeToJson(type: string, bin: Uint8Array): Record<string, unknown> {
  const t = typeOf(type);
  return t.toObject(t.decode(bin), JSON_FORM);
}
