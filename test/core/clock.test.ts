import { describe, expect, it } from 'vitest';
import { ScaledWallClock, VirtualClock } from '../../src/core/clock.js';
import { parseHiveTopic, uplinkTopic, ackTopic, allHivesFilter, sharedFilter } from '../../src/core/topics.js';

describe('clocks', () => {
  it('virtual time moves only forward, when told', () => {
    const c = new VirtualClock(1000);
    expect(c.now()).toBe(1000);
    c.advanceTo(2000);
    expect(c.now()).toBe(2000);
    expect(() => c.advanceTo(1500)).toThrow(RangeError);
  });

  it('scaled wall time runs factor times faster than the wall', () => {
    let wall = 0;
    const c = new ScaledWallClock(10_000, 60, () => wall);
    wall = 1000;
    expect(c.now()).toBe(70_000);
    expect(c.wallDelayUntil(130_000)).toBe(1000);
    expect(c.wallDelayUntil(0)).toBe(0);
  });
});

describe('topics', () => {
  it('are built and parsed in one place', () => {
    expect(uplinkTopic('HV01')).toBe('occusim/v1/hives/HV01/uplink');
    expect(parseHiveTopic(ackTopic('HV01'))).toEqual({ serial: 'HV01', kind: 'ack' });
    expect(parseHiveTopic('occusim/v1/hives/HV01/other')).toBeNull();
    expect(parseHiveTopic('occusim/v1/hives/a/b/uplink')).toBeNull();
    expect(sharedFilter('ingest', allHivesFilter('uplink'))).toBe('$share/ingest/occusim/v1/hives/+/uplink');
  });

  it('refuse serials that would break topic structure', () => {
    expect(() => uplinkTopic('a/b')).toThrow(RangeError);
    expect(() => uplinkTopic('+')).toThrow(RangeError);
  });
});
