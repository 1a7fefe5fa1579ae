import { describe, expect, it } from 'vitest';
import { deliveryLimit, SENDER_SATURATED } from '../../src/run/delivery-limit.js';

/**
 * What limits webhook delivery (issue 29 item 4), from inputs measured by storm runs to
 * `occusim receive` on the 2-core machine (docs/load-testing.md, "What limits delivery"): the
 * busy wall ms is delivered ÷ the measured capacity, the thread's and the store's ms the
 * measured µs per delivery × delivered, answer times and depth as the run measured them.
 */
const measured = (o: {
  delivered: number;
  capacityPerWallS: number;
  activeUs: number | null;
  storeUs: number;
  p50: number;
  p99: number;
  inFlight?: number;
}) => ({
  busyWallMs: (o.delivered / o.capacityPerWallS) * 1000,
  loopActiveMs: o.activeUs === null ? null : (o.activeUs * o.delivered) / 1000,
  storeMs: (o.storeUs * o.delivered) / 1000,
  delivered: o.delivered,
  responseP50Ms: o.p50,
  responseP99Ms: o.p99,
  inFlight: o.inFlight ?? 16,
});

describe('what limits webhook delivery', () => {
  it('names the sender when its thread was busy and the receiver’s answers could carry twice the rate', () => {
    // storm 20,000/s for 5 s: 280,006 delivered at 16,752/wall-s, answers p50 0.4 ms (16 in flight: 40,000/s).
    const run = deliveryLimit(
      measured({ delivered: 280_006, capacityPerWallS: 16_752, activeUs: 44.2, storeUs: 25.1, p50: 0.4, p99: 8 }),
    );
    expect(run).toMatchObject({ kind: 'sender-cpu', senderBusy: 0.74, storeOfActive: 0.568 });
    expect(run?.statement).toBe(
      "limited by the sender: its thread was busy 74% of the delivery time, 44.2 µs per delivery, of which the store 25.1 µs per delivery (57% of the thread's busy time); not by the receiver — the endpoint answered in p50 0.4 ms, p99 8 ms, so 16 in flight carry 40,000/s, 16,752/s measured",
    );
    // Saturated: the sender whatever the answers.
    const saturated = deliveryLimit(
      measured({ delivered: 280_006, capacityPerWallS: 20_000, activeUs: 44.2, storeUs: 10, p50: 5, p99: 8 }),
    );
    expect(saturated?.senderBusy).toBeGreaterThanOrEqual(SENDER_SATURATED);
    expect(saturated?.statement).toMatch(/^limited by the sender's CPU: the sending thread was busy 88%/);
  });

  it('names the receiver when the thread waited and the answers explain the rate', () => {
    // storm 5,000/s for 5 s to `occusim receive --latency 5`: 70,006 delivered at 1,674/wall-s,
    // answers p50 6.5 ms (16 in flight carry 2,462/s, less than twice the rate).
    const slow = deliveryLimit(
      measured({ delivered: 70_006, capacityPerWallS: 1_674, activeUs: 146.3, storeUs: 46.9, p50: 6.5, p99: 47.6 }),
    );
    expect(slow).toMatchObject({ kind: 'receiver', senderBusy: 0.245 });
    expect(slow?.statement).toMatch(
      /^limited by the receiver: the sending thread was busy 24% of the delivery time and waited for answers — the endpoint answered in p50 6.5 ms, p99 47.6 ms/,
    );
    // storm 30,000/s for 30 s, the machine shared with other work: 1,170,031 delivered at 9,250/wall-s
    // (answer times of that run were measured from the hand-over to the sender, slot wait included).
    const big = deliveryLimit(
      measured({ delivered: 1_170_031, capacityPerWallS: 9_250, activeUs: 66.5, storeUs: 53.7, p50: 27.1, p99: 254.2 }),
    );
    expect(big).toMatchObject({ kind: 'receiver', senderBusy: 0.615, storeOfActive: 0.808 });
    expect(big?.statement).toBe(
      "limited by the receiver: the sending thread was busy 62% of the delivery time and waited for answers — the endpoint answered in p50 27.1 ms, p99 254.2 ms (its CPU or its own work); the store 53.7 µs per delivery (81% of the thread's busy time)",
    );
  });

  it('names the store when its calls fill the saturated thread, or when the thread waited for them', () => {
    const onThread = deliveryLimit(
      measured({ delivered: 100_000, capacityPerWallS: 18_500, activeUs: 51, storeUs: 30, p50: 0.9, p99: 4 }),
    );
    expect(onThread?.kind).toBe('store');
    expect(onThread?.statement).toMatch(/^limited by the store's work on the sending thread/);
    // PostgreSQL: the calls took longer than the thread was busy, most of the wait.
    const remote = deliveryLimit(
      measured({ delivered: 100_000, capacityPerWallS: 5_000, activeUs: 60, storeUs: 150, p50: 2, p99: 8 }),
    );
    expect(remote?.kind).toBe('store');
    expect(remote?.statement).toMatch(
      /^limited by the store: the sending thread was busy 30% .* waited for the store's answers/,
    );
  });

  it('says nothing without deliveries, and that the thread was not measured when it was not', () => {
    expect(
      deliveryLimit({
        busyWallMs: 0,
        loopActiveMs: 0,
        storeMs: 0,
        delivered: 0,
        responseP50Ms: 0,
        responseP99Ms: 0,
        inFlight: 16,
      }),
    ).toBeNull();
    expect(
      deliveryLimit(measured({ delivered: 10, capacityPerWallS: 100, activeUs: null, storeUs: 5, p50: 1, p99: 2 }))
        ?.kind,
    ).toBe('unmeasured');
  });
});
