import { describe, expect, it } from 'vitest';
import { formatKeepUp, webhookKeepUp } from '../../src/run/webhook-keep-up.js';

type Stats = Parameters<typeof webhookKeepUp>[0];
const stats = (o: {
  delivered: number;
  pending: number;
  enqueued: number;
  busyWallMs: number;
  p99?: number;
  load?: Stats['keepUp']['load'];
}): Stats => ({
  endpoints: [],
  subscriptions: [
    {
      id: 'webhook_1',
      name: 'det',
      delivered: o.delivered,
      retried: 0,
      deadLettered: 0,
      disabled: 0,
      pending: o.pending,
    },
  ],
  latencyP50Ms: 5,
  timestamps: 'wall',
  latencyP99Ms: o.p99 ?? 20,
  keepUp: {
    enqueued: o.enqueued,
    busyWallMs: o.busyWallMs,
    sensingToDeliveredSimMs: { p50: 5_000, p99: 10_000, max: 20_000 },
    load: o.load ?? {
      loopActiveMs: null,
      storeMs: 0,
      answered: o.delivered,
      responseP50Ms: 1,
      responseP99Ms: 2,
      inFlight: 16,
    },
  },
});

describe('webhook delivery against real time', () => {
  it('at --speed max compares the capacity with the production rate and needs an empty backlog', () => {
    // 3,600 deliveries over a simulated hour (1/sim-s), delivered in 2 wall seconds of work.
    const k = webhookKeepUp(
      stats({ delivered: 3_600, pending: 0, enqueued: 3_600, busyWallMs: 2_000 }),
      3_600_000,
      'max',
    );
    expect(k).toMatchObject({
      producedPerSimS: 1,
      deliveredPerSimS: 1,
      capacityPerWallS: 1_800,
      headroom: 1_800,
      backlog: 0,
      keptUp: true,
      speed: null,
    });
    expect(k.sensingToDeliveredWallMs).toBeUndefined();
    expect(formatKeepUp(k)).toContain('kept up with real time (capacity ≥ 1,800/wall-s, ×1800 the need, backlog 0)');
    expect(
      webhookKeepUp(stats({ delivered: 3_000, pending: 600, enqueued: 3_600, busyWallMs: 2_000 }), 3_600_000, 'max')
        .keptUp,
    ).toBe(false);
    // Slower than real time: an hour of events needing more than an hour to deliver.
    expect(
      webhookKeepUp(stats({ delivered: 3_600, pending: 0, enqueued: 3_600, busyWallMs: 4_000_000 }), 3_600_000, 'max'),
    ).toMatchObject({ keptUp: false, headroom: 0.9 });
  });

  it('for a paced run reads the enqueue → 2xx latency and gives sensing → delivered in wall time', () => {
    const k = webhookKeepUp(stats({ delivered: 3_600, pending: 0, enqueued: 3_600, busyWallMs: 2_000 }), 3_600_000, 10);
    expect(k).toMatchObject({ keptUp: true, speed: 10, sensingToDeliveredWallMs: { p50: 505, p99: 1_020 } });
    expect(formatKeepUp(k)).toContain('kept up with real time ×10 (backlog 0, enqueue → 2xx p99 20 ms of ≤ 2000 ms;');
    expect(
      webhookKeepUp(
        stats({ delivered: 3_600, pending: 0, enqueued: 3_600, busyWallMs: 2_000, p99: 2_500 }),
        3_600_000,
        10,
      ).keptUp,
    ).toBe(false);
  });

  it('says what limits delivery when it does not keep up, and nothing of it when it does', () => {
    // The sending thread busy 97% of the delivery time, the store a quarter of it.
    const load = {
      loopActiveMs: 1_940,
      storeMs: 520,
      answered: 36_000,
      responseP50Ms: 3.1,
      responseP99Ms: 9.8,
      inFlight: 16,
    };
    const behind = webhookKeepUp(
      stats({ delivered: 36_000, pending: 0, enqueued: 36_000, busyWallMs: 2_000, load }),
      1_000,
      'max',
    );
    expect(behind.keptUp).toBe(false);
    expect(behind.limit?.kind).toBe('sender-cpu');
    expect(formatKeepUp(behind)).toContain(
      "\n  limited by the sender's CPU: the sending thread was busy 97% of the delivery time",
    );
    const fine = webhookKeepUp(
      stats({ delivered: 3_600, pending: 0, enqueued: 3_600, busyWallMs: 2_000, load }),
      3_600_000,
      'max',
    );
    expect(fine.keptUp).toBe(true);
    expect(formatKeepUp(fine)).not.toContain('limited by');
  });
});
