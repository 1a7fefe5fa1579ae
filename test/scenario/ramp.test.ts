import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scenario/diagnostics.js';
import { loadScenarioText } from '../../src/scenario/load.js';
import {
  hiveOnlineTimes,
  MAX_RAMP_STEPS,
  onlineTimesOf,
  parseRamp,
  rampProgress,
  rampSchedule,
} from '../../src/scenario/ramp.js';

/** `ramp:` and `--ramp`: one model, refused at file:line with the field or at a column; a seeded choice of hives. */
const SCENARIO = (ramp: string): string => `version: 1
name: ramp
start: "2026-03-02T08:00"
duration: 20m
organization: { name: Acme }
ramp: ${ramp}
sites:
  - name: HQ
    timezone: Europe/Paris
    buildings:
      - name: Main
        floors:
          - name: Ground
            level: 0
            rooms:
              - { name: Office, polygon: [[0, 0], [14, 0], [14, 8], [0, 8]] }
            hives:
              - { name: H, position: [8, 4] }
            sensors:
              - { name: S1, mode: presence, room: Office, center: [8, 4] }
`;

const SEED = 29;

describe('scenario ramp:', () => {
  it('reads steps into the model, percentages and fractions alike, the same as --ramp', () => {
    const r = loadScenarioText(
      SCENARIO('[{ at: 0, online: 10% }, { at: 5m, online: 0.5 }, { at: 1h, online: 100% }]'),
      'ramp.yaml',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const steps = [
      { atMs: 0, share: 0.1 },
      { atMs: 300_000, share: 0.5 },
      { atMs: 3_600_000, share: 1 },
    ];
    expect(r.model.ramp).toEqual(steps);
    expect(parseRamp('0:10%,5m:50%,1h:100%')).toEqual({ ok: true, steps });
  });

  it('refuses a bad step at file:line with the field', () => {
    const cases: Array<[string, RegExp]> = [
      ['[{ at: 0, online: 10% }, { at: 0s, online: 50% }]', /ramp\.yaml:6:\d+ ramp\[1\]\.at: step times must rise/],
      [
        '[{ at: 0, online: 60% }, { at: 5m, online: 50% }]',
        /ramp\.yaml:6:\d+ ramp\[1\]\.at: the online share must not fall/,
      ],
      ['[{ at: 0, online: 150% }]', /ramp\.yaml:6:\d+ ramp\[0\]\.online: a share of the hives/],
      ['[{ at: soon, online: 10% }]', /ramp\.yaml:6:\d+ ramp\[0\]\.at: bad duration/],
      ['[{ at: 0, online: 10%, hives: 3 }]', /ramp\.yaml:6:\d+ ramp\[0\].*hives/],
      ['[]', /ramp\.yaml:6:\d+ ramp/],
    ];
    for (const [ramp, want] of cases) {
      const r = loadScenarioText(SCENARIO(ramp), 'ramp.yaml');
      expect(r.ok, ramp).toBe(false);
      if (r.ok) continue;
      expect(r.diagnostics.map(formatDiagnostic).join('\n'), ramp).toMatch(want);
    }
  });

  it('refuses a bad --ramp at its column', () => {
    expect(parseRamp('0:10%,5m')).toMatchObject({ ok: false, col: 7 });
    expect(parseRamp('0:10%,5m:x')).toMatchObject({ ok: false, col: 10 });
    expect(parseRamp('0:10%,soon:50%')).toMatchObject({ ok: false, col: 7 });
    expect(parseRamp('0:50%,5m:10%')).toMatchObject({
      ok: false,
      col: 7,
      message: expect.stringMatching(/must not fall/),
    });
    expect(parseRamp('5m:10%,5m:20%')).toMatchObject({
      ok: false,
      col: 8,
      message: expect.stringMatching(/must rise/),
    });
    expect(parseRamp(Array.from({ length: MAX_RAMP_STEPS + 1 }, (_, i) => `${i}m:100%`).join(','))).toMatchObject({
      ok: false,
    });
    expect(parseRamp('x'.repeat(5000))).toMatchObject({ ok: false, col: 1 });
  });
});

describe('hiveOnlineTimes', () => {
  const ids = Array.from({ length: 40 }, (_, i) => `hive_${i.toString(16).padStart(16, '0')}`);
  const ramp = [
    { atMs: 0, share: 0.1 },
    { atMs: 60_000, share: 0.55 },
    { atMs: 120_000, share: 1 },
  ];

  it('brings ⌈share × hives⌉ online by each step, each hive once, the same hives for the same seed', () => {
    const t = hiveOnlineTimes(ids, ramp, SEED, 1000);
    expect(rampProgress(ramp, t, ids.length, 1000).map((p) => [p.cameOnline, p.online])).toEqual([
      [4, 4],
      [18, 22],
      [18, 40],
    ]);
    expect([...hiveOnlineTimes([...ids].reverse(), ramp, SEED, 1000)].sort()).toEqual([...t].sort());
    // Another seed chooses other hives for the first step.
    const first = (seed: number) =>
      [...hiveOnlineTimes(ids, ramp, seed, 1000)]
        .filter(([, at]) => at === 1000)
        .map(([id]) => id)
        .sort();
    expect(first(SEED + 1)).not.toEqual(first(SEED));
  });

  it('leaves out the hives a ramp below 100% never reaches, and puts every hive online at the start without one', () => {
    expect(hiveOnlineTimes(ids, [{ atMs: 0, share: 0.25 }], SEED, 0).size).toBe(10);
    expect([...hiveOnlineTimes(ids, undefined, SEED, 5).values()]).toEqual(ids.map(() => 5));
  });

  it('property: online counts never fall and end at ⌈last share × hives⌉ (seed printed)', () => {
    const seed = 290_003;
    console.log(`fast-check seed ${seed}`);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 10 }),
        fc.nat(),
        (n, pcts, s) => {
          const shares = [...pcts].sort((a, b) => a - b).map((p) => p / 100);
          const steps = shares.map((share, i) => ({ atMs: i * 1000, share }));
          const hives = ids.slice(0, Math.min(n, ids.length));
          const p = rampProgress(steps, hiveOnlineTimes(hives, steps, s, 0), hives.length, 0);
          for (let i = 1; i < p.length; i++) expect(p[i]!.online).toBeGreaterThanOrEqual(p[i - 1]!.online);
          expect(p.at(-1)!.online).toBe(Math.max(0, Math.ceil(shares.at(-1)! * hives.length - 1e-9)));
        },
      ),
      { seed, numRuns: 200 },
    );
  });

  it("a share of the fleet (a hive thread, a shard) keeps the whole fleet's choice through rampSchedule", () => {
    const whole = { hives: ids.map((id) => ({ id })), ramp, seed: SEED, startMs: 1000 };
    const schedule = rampSchedule(whole);
    const part = { ...whole, hives: whole.hives.slice(0, 7), rampSchedule: schedule };
    const all = onlineTimesOf(whole);
    for (const h of part.hives) expect(onlineTimesOf(part).get(h.id)).toBe(all.get(h.id));
    // Ranked over its own hives alone it would choose differently (why the schedule exists).
    const alone = onlineTimesOf({ ...whole, hives: part.hives });
    expect(part.hives.some((h) => alone.get(h.id) !== all.get(h.id))).toBe(true);
  });
});
