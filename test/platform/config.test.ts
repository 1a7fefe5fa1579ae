import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LOOKBACK_MS } from '../../src/cloud/cloud.js';
import { isAppError } from '../../src/core/errors.js';
import { MINUTE_MS } from '../../src/core/time.js';
import { MAX_LOOKBACK_MS, platformConfig, type PlatformConfigInput } from '../../src/platform/config.js';
import { DEFAULT_LEASE_MS } from '../../src/platform/partition-leases.js';

const BASE: PlatformConfigInput = { organisations: [], tickMs: 1000 };
const SEED = 20261128;

/** The code of what `platformConfig` throws for this input, or null when it accepts it. */
function refusal(input: PlatformConfigInput): string | null {
  try {
    platformConfig(input);
    return null;
  } catch (err) {
    if (!isAppError(err)) throw err;
    return err.code;
  }
}

describe('platformConfig', () => {
  it('fills every default beside the type and freezes the result', () => {
    const c = platformConfig(BASE);
    expect(c).toMatchObject({
      startMs: 0,
      store: null,
      removeTemporaryStore: false,
      storePolicy: 'new',
      runKey: '',
      runEndMs: null,
      mqtt: { port: 0, host: null },
      brokerUrl: null,
      ownHivesOnly: false,
      cloudCredentials: null,
      api: null,
      advanceEveryMs: null,
      webhooks: null,
      shareGroup: null,
      partition: null,
      shardClocks: null,
      leaseMs: DEFAULT_LEASE_MS,
      faults: null,
      lookbackMs: DEFAULT_LOOKBACK_MS,
    });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.mqtt)).toBe(true);
    expect(() => ((c as { lookbackMs: number }).lookbackMs = 1)).toThrow(TypeError);
  });

  it('survives the structured clone that hands it to the platform thread', () => {
    const c = platformConfig({ ...BASE, store: { kind: 'sqlite', path: '/tmp/x.sqlite' }, lookbackMs: 10 * MINUTE_MS });
    expect(structuredClone(c)).toEqual(c);
  });

  it(`accepts exactly the lookbacks of whole minutes from 1m to 24h (fast-check seed ${SEED})`, () => {
    fc.assert(
      fc.property(fc.integer({ min: -MINUTE_MS, max: MAX_LOOKBACK_MS + 2 * MINUTE_MS }), (ms) => {
        const ok = ms >= MINUTE_MS && ms <= MAX_LOOKBACK_MS && ms % MINUTE_MS === 0;
        expect(refusal({ ...BASE, lookbackMs: ms })).toBe(ok ? null : 'USAGE');
      }),
      { seed: SEED, numRuns: 500 },
    );
    for (const ms of [Number.NaN, Number.POSITIVE_INFINITY, 90_000.5])
      expect(refusal({ ...BASE, lookbackMs: ms })).toBe('USAGE');
  });

  it('refuses a bad port, tick, lease or shard count as the caller’s mistake (USAGE)', () => {
    expect(refusal({ ...BASE, mqtt: { port: 65536 } })).toBe('USAGE');
    expect(refusal({ ...BASE, mqtt: { port: 1.5 } })).toBe('USAGE');
    expect(refusal({ ...BASE, tickMs: 0 })).toBe('USAGE');
    expect(refusal({ ...BASE, leaseMs: -1 })).toBe('USAGE');
    expect(refusal({ ...BASE, shardClocks: 0 })).toBe('USAGE');
    expect(refusal({ ...BASE, advanceEveryMs: Number.NaN })).toBe('USAGE');
    expect(refusal({ ...BASE, mqtt: { port: 1883, host: '0.0.0.0' } })).toBeNull();
  });
});
