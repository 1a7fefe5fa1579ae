import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { MAX_HIVE_THREADS, simulatorConfig } from '../../src/run/config.js';
import type { RunOptions } from '../../src/run/options.js';

function refusal(options: RunOptions): string | null {
  try {
    simulatorConfig(options);
    return null;
  } catch (err) {
    if (!isAppError(err)) throw err;
    return err.code;
  }
}

describe('simulatorConfig', () => {
  it('fills the defaults, parses the store once and freezes the result', () => {
    const c = simulatorConfig({ dbPath: 'sqlite:/tmp/run.sqlite', expect: ['rooms.mae<0.5'] });
    expect(c).toMatchObject({
      speed: 'max',
      store: { kind: 'sqlite', path: '/tmp/run.sqlite' },
      keepStore: true,
      storePolicy: 'new',
      mqtt: { port: 0, host: null },
      brokerUrl: null,
      shard: null,
      externalIngest: false,
      record: null,
      workers: null,
      platformThread: 'auto',
      hiveThreads: 'auto',
      api: null,
      webhooks: null,
      platform: {},
    });
    expect(c.expectations).toHaveLength(1);
    for (const part of [c, c.mqtt, c.platform, c.expectations]) expect(Object.isFrozen(part)).toBe(true);
  });

  it('copies the platform settings: the caller’s object is neither frozen nor read again', () => {
    const platform = { lookbackMs: 600_000 };
    const c = simulatorConfig({ platform });
    platform.lookbackMs = 60_000;
    expect(c.platform).toEqual({ lookbackMs: 600_000 });
    expect(Object.isFrozen(platform)).toBe(false);
  });

  it('refuses what cannot run before anything starts (USAGE)', () => {
    expect(refusal({ speed: 0 })).toBe('USAGE');
    expect(refusal({ mqttPort: 70_000 })).toBe('USAGE');
    expect(refusal({ hiveThreads: MAX_HIVE_THREADS + 1 })).toBe('USAGE');
    expect(refusal({ shard: { index: 1, count: 2 } })).toBe('USAGE');
    expect(refusal({ record: '/tmp/x.occap', brokerUrl: 'mqtt://127.0.0.1:1' })).toBe('USAGE');
    expect(
      refusal({
        shard: { index: 1, count: 2 },
        brokerUrl: 'mqtt://127.0.0.1:1',
        externalIngest: true,
        storePolicy: 'resume',
      }),
    ).toBe('USAGE');
    expect(refusal({ expect: ['rooms.mae<<1'] })).toBe('USAGE');
    expect(refusal({ speed: 10, hiveThreads: 2 })).toBeNull();
  });
});
