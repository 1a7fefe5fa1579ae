import { describe, expect, it } from 'vitest';
import { buildCredentialTable } from '../../src/broker/credentials.js';
import { isAppError } from '../../src/core/errors.js';

const table = buildCredentialTable(
  [{ serial: 'HVA', password: 'pa' }],
  [{ username: 'ingest', password: 'pc', role: 'cloud' }],
);
const pw = (s: string): Buffer => Buffer.from(s);

describe('broker credential table', () => {
  it('maps a hive login to its serial and a service login to its role', () => {
    expect(table.verify('HVA', pw('pa'))).toEqual({ role: 'hive', serial: 'HVA' });
    expect(table.verify('ingest', pw('pc'))).toEqual({ role: 'cloud', username: 'ingest' });
  });

  it('refuses wrong, longer, shorter and missing passwords and unknown users', () => {
    expect(table.verify('HVA', pw('pb'))).toBeNull();
    expect(table.verify('HVA', pw('pa!'))).toBeNull();
    expect(table.verify('HVA', pw('p'))).toBeNull();
    expect(table.verify('HVA', undefined)).toBeNull();
    expect(table.verify(undefined, pw('pa'))).toBeNull();
    expect(table.verify('nobody', pw('pa'))).toBeNull();
  });

  it('never lets a missing password match an empty one', () => {
    const t = buildCredentialTable([{ serial: 'HVE', password: '' }], []);
    expect(t.verify('HVE', pw(''))).toEqual({ role: 'hive', serial: 'HVE' });
    expect(t.verify('HVE', undefined)).toBeNull();
  });

  it('refuses a name used by both a hive and a service', () => {
    let caught: unknown;
    try {
      buildCredentialTable([{ serial: 'X1', password: 'a' }], [{ username: 'X1', password: 'b', role: 'cloud' }]);
    } catch (err) {
      caught = err;
    }
    expect(isAppError(caught, 'BROKER_FAILED')).toBe(true);
  });
});
