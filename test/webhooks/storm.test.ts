import { describe, expect, it } from 'vitest';
import { isStormEvent, parseWebhookStorm, stormProblem } from '../../src/webhooks/storm.js';

describe('--webhook-storm', () => {
  it('reads a rate alone, or a rate and the types taken in turn (canonical, once each)', () => {
    expect(parseWebhookStorm('5000')).toEqual({ ok: true, storm: { rate: 5000 } });
    expect(parseWebhookStorm('20/traffic+ROOM_OCCUPANCY_1MIN+TRAFFIC')).toEqual({
      ok: true,
      storm: { rate: 20, types: ['TRAFFIC', 'ROOM_OCCUPANCY_1M'] },
    });
  });

  it('refuses a rate out of 1..50000 or not an integer, and an unknown type at its column', () => {
    for (const bad of ['', '0', '50001', '2.5', 'fast', '-3'])
      expect(parseWebhookStorm(bad), bad).toMatchObject({ ok: false, col: 1 });
    expect(parseWebhookStorm('100/DETECTIONS+ROOMS')).toMatchObject({
      ok: false,
      col: 16,
      message: expect.stringMatching(/unknown event type "ROOMS"/),
    });
  });

  it('checks a storm given programmatically with the same bounds', () => {
    expect(stormProblem({ rate: 10 })).toBeNull();
    expect(stormProblem({ rate: 50_001 })).toMatch(/^rate: /);
    expect(stormProblem({ rate: 10, types: [] })).toMatch(/^types: /);
  });

  it('tells a storm event from the platform’s own by its id', () => {
    expect(isStormEvent('event_storm_0123456789abcdef01234567')).toBe(true);
    expect(isStormEvent('event_0123456789abcdef01234567')).toBe(false);
  });
});
