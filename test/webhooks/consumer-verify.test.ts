import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { compareStates, parseStateLine, passed } from '../../src/webhooks/consumer-verify.js';

const T0 = Date.UTC(2026, 2, 2, 8, 0);
const row = (subject: string, minute: number, value: unknown) => ({
  type: 'ROOM_OCCUPANCY_1M',
  subject,
  minute: T0 + minute * 60_000,
  value,
});

describe('consumer-verify comparison', () => {
  it('counts matching, missing, extra and wrong rows and lists the first of each in order', () => {
    const v = compareStates(
      [row('a', 0, 1), row('a', 1, 2), row('b', 0, { in: 1, out: 2 }), row('c', 0, 3)],
      [row('a', 0, 1), row('a', 1, 7), row('b', 0, { out: 2, in: 1 }), row('d', 0, 0)],
    );
    expect(v).toMatchObject({ expected: 4, actual: 4, matching: 2, missing: 1, extra: 1, wrong: 1 });
    expect(v.first.wrong).toEqual([
      { type: 'ROOM_OCCUPANCY_1M', subject: 'a', minute: T0 + 60_000, expected: 2, actual: 7 },
    ]);
    expect(v.first.missing[0]?.subject).toBe('c');
    expect(v.first.extra[0]?.subject).toBe('d');
    expect(passed(v)).toBe(false);
    expect(passed(compareStates([row('a', 0, 1)], [row('a', 0, 1)]))).toBe(true);
  });

  it.each([
    ['{"type":"T","subject":"s","minute":1,"value":1}', /minute: an integer number of ms/],
    ['{"subject":"s","minute":0,"value":1}', /type: a non-empty string/],
    ['{"type":"T","subject":"s","minute":0}', /value: required/],
    ['[1]', /not a JSON object/],
    ['nope', /not JSON/],
  ])('names the file, line and field of a malformed line: %s', (text, why) => {
    let err: unknown;
    try {
      parseStateLine(text, 'actual.ndjson', 7);
    } catch (e) {
      err = e;
    }
    expect(isAppError(err, 'CONSUMER_STATE_INVALID')).toBe(true);
    expect((err as Error).message).toMatch(/^actual\.ndjson:7: /);
    expect((err as Error).message).toMatch(why);
  });
});
