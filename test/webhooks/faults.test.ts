import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { delayOf, draw, hits, parseWebhookFaults } from '../../src/webhooks/faults.js';

const SEED = 20261128;

describe('which events a fault hits', () => {
  it('is a pure function of (seed, subscription, event, fault): the same answer every time, in any order of asking', () => {
    console.log(`fast-check seed ${SEED}`);
    fc.assert(
      fc.property(
        fc.oneof(fc.integer(), fc.string()),
        fc.string(),
        fc.array(fc.string(), { minLength: 1, maxLength: 50 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (seed, sub, ids, rate) => {
          const forwards = ids.map((id) => hits(seed, sub, id, 'duplicate', rate));
          const backwards = [...ids]
            .reverse()
            .map((id) => hits(seed, sub, id, 'duplicate', rate))
            .reverse();
          expect(backwards).toEqual(forwards);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('hits close to the rate, never at 0, always at 1, and differently per fault and per subscription', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `event_${i}`);
    const share = (f: (id: string) => boolean): number => ids.filter(f).length / ids.length;
    expect(share((id) => hits(7, 'wh_1', id, 'duplicate', 0.1))).toBeCloseTo(0.1, 1);
    expect(share((id) => hits(7, 'wh_1', id, 'duplicate', 0))).toBe(0);
    expect(share((id) => hits(7, 'wh_1', id, 'duplicate', 1))).toBe(1);
    // Independent draws: hitting one fault says nothing about another, or about another subscription.
    expect(share((id) => hits(7, 'wh_1', id, 'duplicate', 0.5) && hits(7, 'wh_1', id, 'reorder', 0.5))).toBeCloseTo(
      0.25,
      1,
    );
    expect(share((id) => hits(7, 'wh_1', id, 'duplicate', 0.5) && hits(7, 'wh_2', id, 'duplicate', 0.5))).toBeCloseTo(
      0.25,
      1,
    );
    expect(draw(8, 'wh_1', 'event_1', 'duplicate')).not.toBe(draw(7, 'wh_1', 'event_1', 'duplicate'));
  });

  it('draws a delay within its bounds', () => {
    for (let i = 0; i < 1000; i++) {
      const ms = delayOf(1, 's', `e${i}`, { minMs: 50, maxMs: 60 });
      expect(ms).toBeGreaterThanOrEqual(50);
      expect(ms).toBeLessThanOrEqual(60);
    }
    expect(delayOf(1, 's', 'e', { minMs: 5, maxMs: 5 })).toBe(5);
  });
});

describe('--webhook-faults', () => {
  it('reads every kind with its parameters and defaults', () => {
    expect(
      parseWebhookFaults('duplicate=0.05,reorder=0.1/8,delay=0.1/5-50,burst=0.05/16/200,revise=0.2,timeout=0.01'),
    ).toEqual({
      ok: true,
      faults: {
        duplicate: { rate: 0.05 },
        reorder: { rate: 0.1, window: 8 },
        delay: { rate: 0.1, minMs: 5, maxMs: 50 },
        burst: { rate: 0.05, size: 16, holdMs: 200 },
        revise: { rate: 0.2 },
        timeout: { rate: 0.01 },
      },
    });
    expect(parseWebhookFaults('reorder=1,delay=0.5,burst=0.5')).toEqual({
      ok: true,
      faults: {
        reorder: { rate: 1, window: 4 },
        delay: { rate: 0.5, minMs: 50, maxMs: 500 },
        burst: { rate: 0.5, size: 8, holdMs: 500 },
      },
    });
  });

  it.each([
    ['dupe=0.1', 1, /unknown fault "dupe"/],
    ['duplicate=0.1,revise=2', 15, /revise: the rate must be a number in 0\.\.1/],
    ['duplicate=', 1, /rate must be a number/],
    ['reorder=0.1/0', 1, /window must be an integer in 1\.\.256/],
    ['delay=0.1/500-50', 1, /least delay 500 ms is above the longest 50 ms/],
    ['delay=0.1/50', 1, /min-max ms/],
    ['burst=0.1/1', 1, /burst size must be an integer in 2\.\.1024/],
    ['duplicate=0.1/3', 1, /takes no parameter/],
    ['duplicate=0.1,duplicate=0.2', 15, /given twice/],
    ['revise', 1, /kind=rate/],
  ])('refuses %s at column %i', (text, col, message) => {
    const r = parseWebhookFaults(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.col).toBe(col);
    expect(r.message).toMatch(message);
  });
});
