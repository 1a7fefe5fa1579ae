import { describe, expect, it } from 'vitest';
import { bareId, hiveSerialFor, ksuidFor, macFor, secretFor, stableId } from '../../src/core/ids.js';
import { isValidSerial } from '../../src/core/topics.js';

describe('deterministic ids', () => {
  it('carry the platform prefixes and are stable for the same naming path', () => {
    expect(stableId('space', 'Acme', 'HQ', 'Main', 'Ground')).toMatch(/^space_[0-9a-f]{16}$/);
    expect(stableId('room', 'a', 'b')).toBe(stableId('room', 'a', 'b'));
    expect(stableId('room', 'a', 'b')).not.toBe(stableId('zone', 'a', 'b'));
    expect(stableId('room', 'a', 'b')).not.toBe(stableId('room', 'ab'));
  });

  it('strip to the bare part for webhook metadata', () => {
    expect(bareId('sensor_0123abcd')).toBe('0123abcd');
  });

  it('make MACs in the observed shape and serials safe for topics', () => {
    expect(macFor('x', 'y')).toMatch(/^00-17-0d-00-00-[0-9a-f]{2}-[0-9a-f]{2}-[0-9a-f]{2}$/);
    expect(isValidSerial(hiveSerialFor('x'))).toBe(true);
  });

  it('make 27-character KSUIDs that are reproducible', () => {
    const k = ksuidFor(1_772_434_800_000, 'ci-bot');
    expect(k).toMatch(/^[0-9A-Za-z]{27}$/);
    expect(ksuidFor(1_772_434_800_000, 'ci-bot')).toBe(k);
    expect(ksuidFor(1_772_434_800_000, 'other')).not.toBe(k);
  });

  it('derive secrets from the seed', () => {
    expect(secretFor(1, 'hive', 'HV1')).toBe(secretFor(1, 'hive', 'HV1'));
    expect(secretFor(2, 'hive', 'HV1')).not.toBe(secretFor(1, 'hive', 'HV1'));
  });
});
