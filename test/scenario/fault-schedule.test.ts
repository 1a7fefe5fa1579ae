import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatFaultSchedule, MAX_SCHEDULE_CHARS, parseFaultSchedule } from '../../src/scenario/fault-schedule.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { FaultFile } from '../../src/scenario/network-schema.js';

const SEED = 20261128;

describe('fault schedules as one line of text', () => {
  it('reads the documented example as the faults: block it stands for', () => {
    const r = parseFaultSchedule(
      'hive_outage@10m+5m:hive=Hive 1; broker_restart@20m; link_degradation@5m+2m:hive="Hive 1",loss=0.3; sensor_offline @ 1m + 30s : sensors = Desk 1|Desk 2',
    );
    expect(r).toEqual({
      ok: true,
      faults: [
        { kind: 'hive_outage', at: '10m', duration: '5m', hive: 'Hive 1' },
        { kind: 'broker_restart', at: '20m' },
        { kind: 'link_degradation', at: '5m', duration: '2m', hive: 'Hive 1', loss: 0.3 },
        { kind: 'sensor_offline', at: '1m', duration: '30s', sensors: ['Desk 1', 'Desk 2'] },
      ],
    });
    expect(parseFaultSchedule('  ')).toEqual({ ok: true, faults: [] });
  });

  it('takes a JSON array of faults: entries too', () => {
    expect(parseFaultSchedule('[{"kind":"broker_restart","at":"20m"}]')).toEqual({
      ok: true,
      faults: [{ kind: 'broker_restart', at: '20m' }],
    });
    expect(parseFaultSchedule('[{"kind":"reboot","at":"20m"}]')).toMatchObject({
      ok: false,
      col: 1,
      message: expect.stringMatching(/^fault 1\.kind: /),
    });
  });

  it('names the column of every refusal', () => {
    const cases: Array<[string, number, RegExp]> = [
      ['hive_outage 10m', 13, /expected "@", found "1"/],
      ['hive_outage@', 13, /expected a start such as 10m at the end/],
      ['broker_restart@20m; hive_outage@1m+1m:colour=red', 39, /unknown parameter "colour"/],
      ['hive_outage@1m+1m:hive=A,hive=B', 26, /parameter hive given twice/],
      ['hive_outage@1m+1m:hive="A', 24, /unterminated "/],
      ['link_degradation@1m+1m:hive=A,loss=lots', 36, /loss must be a number/],
      ['broker_restart@20m; melt@1m', 21, /fault 2\.kind: /],
      ['broker_restart@soon', 1, /fault 1\.at: bad duration/],
      ['link_degradation@1m+1m:hive=A,loss=2', 1, /fault 1\.loss: /],
      ['broker_restart@20m;', 20, /expected a fault kind at the end/],
      ['clock_skew@1m+1m:hive=A,offset=soon', 32, /offset must be a signed duration such as -30s or \+2m, got "soon"/],
      ['clock_skew@1m+1m:hive=A,offset=-', 32, /offset must be a signed duration/],
      ['clock_skew@1m+1m:hive=A,offset=+', 33, /expected a signed duration such as -30s at the end/],
      ['clock_skew@1m+1m:hive=A,offset=--3s', 32, /offset must be a signed duration/],
      ['[{"kind":"clock_skew","at":"1m","duration":"1m","hive":"A","offset":"-3x"}]', 1, /fault 1\.offset: bad offset/],
    ];
    for (const [text, col, message] of cases) {
      const r = parseFaultSchedule(text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) {
        expect(r.col, text).toBe(col);
        expect(r.message, text).toMatch(message);
      }
    }
  });

  it('is bounded in length and in faults', () => {
    expect(parseFaultSchedule('x'.repeat(MAX_SCHEDULE_CHARS + 1))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/at most/),
    });
    expect(parseFaultSchedule(Array.from({ length: 1001 }, () => 'broker_restart@1m').join(';'))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/at most 1000 faults/),
    });
  });

  it(`reads back what it writes, whatever the names (seed ${SEED})`, () => {
    const name = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() !== '');
    const dur = fc.constantFrom('0s', '30s', '5m', '1h30m', '2.5m', '500ms');
    const fault: fc.Arbitrary<FaultFile> = fc.oneof(
      fc.record({ kind: fc.constant('broker_restart' as const), at: dur }),
      fc.record({
        kind: fc.constantFrom('hive_outage' as const, 'hive_reboot' as const),
        at: dur,
        duration: dur,
        hive: name,
      }),
      fc.record({
        kind: fc.constant('sensor_offline' as const),
        at: dur,
        duration: dur,
        sensors: fc.array(name, { minLength: 1, maxLength: 3 }),
      }),
      fc.record({
        kind: fc.constant('link_degradation' as const),
        at: dur,
        duration: dur,
        hive: name,
        loss: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      fc.record({
        kind: fc.constant('sensor_death' as const),
        at: dur,
        sensors: fc.array(name, { minLength: 1, maxLength: 3 }),
      }),
      fc.record({
        kind: fc.constant('clock_skew' as const),
        at: dur,
        duration: dur,
        hive: name,
        offset: fc.constantFrom('-30s', '+2m', '90s', '-1h30m', '+500ms'),
      }),
      fc.record({
        kind: fc.constant('battery_drain' as const),
        at: dur,
        duration: dur,
        sensors: fc.array(name, { minLength: 1, maxLength: 3 }),
      }),
      fc.record({ kind: fc.constant('platform_restart' as const), at: dur }),
      fc.record({ kind: fc.constant('ingest_kill' as const), at: dur }),
      fc.record(
        { kind: fc.constant('store_restart' as const), at: dur, duration: dur },
        { requiredKeys: ['kind', 'at'] },
      ),
      fc.record(
        { kind: fc.constant('webhook_down' as const), at: dur, duration: dur },
        { requiredKeys: ['kind', 'at', 'duration'] },
      ),
      fc.record({ kind: fc.constant('webhook_down' as const), at: dur, duration: dur, webhook: name }),
    );
    fc.assert(
      fc.property(fc.array(fault, { maxLength: 6 }), (faults) => {
        expect(parseFaultSchedule(formatFaultSchedule(faults))).toEqual({ ok: true, faults });
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("replaces the scenario file's faults, and a wrong name is the flag's problem, not a line of the file", () => {
    const schedule = parseFaultSchedule('hive_outage@5m+3m:hive=Hive 1');
    if (!schedule.ok) throw new Error(schedule.message);
    const ok = loadScenarioFile('scenarios/quickstart.yaml', { faults: schedule.faults });
    expect(ok.ok && ok.model.faults?.map((f) => [f.kind, f.atMs - ok.model.startMs, f.durationMs])).toEqual([
      ['hive_outage', 300_000, 180_000],
    ]);
    const wrong = parseFaultSchedule('hive_outage@5m+3m:hive=Nope');
    if (!wrong.ok) throw new Error(wrong.message);
    const bad = loadScenarioFile('scenarios/quickstart.yaml', { faults: wrong.faults });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.diagnostics.map((d) => `${d.file} ${d.path}: ${d.message}`)).toEqual([
        '--faults fault 1.hive: unknown hive `Nope`',
      ]);
  });

  it('reads a clock skew either way and resolves it to signed milliseconds; a missing, zero or day-long offset is refused at its place', () => {
    const r = parseFaultSchedule(
      'clock_skew@1m+2m:hive=Hive 1,offset=-30s; clock_skew@5m+1m:hive=Hive 1,offset=+1m30s',
    );
    expect(r).toEqual({
      ok: true,
      faults: [
        { kind: 'clock_skew', at: '1m', duration: '2m', hive: 'Hive 1', offset: '-30s' },
        { kind: 'clock_skew', at: '5m', duration: '1m', hive: 'Hive 1', offset: '+1m30s' },
      ],
    });
    if (!r.ok) return;
    const ok = loadScenarioFile('scenarios/quickstart.yaml', { faults: r.faults });
    expect(ok.ok && ok.model.faults?.map((f) => (f.kind === 'clock_skew' ? f.offsetMs : null))).toEqual([
      -30_000, 90_000,
    ]);
    const refused = (schedule: string): string[] => {
      const p = parseFaultSchedule(schedule);
      if (!p.ok) throw new Error(p.message);
      const l = loadScenarioFile('scenarios/quickstart.yaml', { faults: p.faults });
      return l.ok ? [] : l.diagnostics.map((d) => `${d.path}: ${d.message}`);
    };
    expect(refused('clock_skew@1m+1m:hive=Hive 1')).toEqual([
      'fault 1.offset: clock_skew needs `offset`, a signed duration such as -30s or +2m',
    ]);
    expect(refused('broker_restart@1s; clock_skew@1m+1m:hive=Hive 1,offset=-0s')).toEqual([
      'fault 2.offset: clock_skew offset must be non-zero and at most 1d either way, got `-0s`',
    ]);
    expect(refused('clock_skew@1m+1m:hive=Hive 1,offset=+1d1s')).toEqual([
      'fault 1.offset: clock_skew offset must be non-zero and at most 1d either way, got `+1d1s`',
    ]);
    expect(refused('clock_skew@1m+1m:hive=Nope,offset=5s')).toEqual(['fault 1.hive: unknown hive `Nope`']);
  });

  it('reads a store restart (5 s when it says nothing) and an ingest kill; a duration, a target, the start or too long an outage is refused at its place', () => {
    const r = parseFaultSchedule('store_restart@2m+30s; store_restart@4m; ingest_kill@3m');
    expect(r).toEqual({
      ok: true,
      faults: [
        { kind: 'store_restart', at: '2m', duration: '30s' },
        { kind: 'store_restart', at: '4m' },
        { kind: 'ingest_kill', at: '3m' },
      ],
    });
    if (!r.ok) return;
    const ok = loadScenarioFile('scenarios/quickstart.yaml', { faults: r.faults });
    expect(ok.ok && ok.model.faults?.map((f) => [f.kind, f.atMs - ok.model.startMs, f.durationMs])).toEqual([
      ['store_restart', 120_000, 30_000],
      ['ingest_kill', 180_000, 0],
      ['store_restart', 240_000, 5_000],
    ]);
    const refused = (schedule: string): string[] => {
      const p = parseFaultSchedule(schedule);
      if (!p.ok) return [`column ${p.col}: ${p.message}`];
      const l = loadScenarioFile('scenarios/quickstart.yaml', { faults: p.faults });
      return l.ok ? [] : l.diagnostics.map((d) => `${d.path}: ${d.message}`);
    };
    expect(refused('ingest_kill@3m+1m')).toEqual([
      'fault 1.duration: ingest_kill has no duration: the killed ingest is replaced at once by one that resumes from the store',
    ]);
    expect(refused('broker_restart@1m; ingest_kill@0s')).toEqual([
      'fault 2.at: ingest_kill must come after the start (at > 0s): a platform not yet started has nothing to kill',
    ]);
    expect(refused('store_restart@0s+10s')).toEqual([
      'fault 1.at: store_restart must come after the start (at > 0s): a platform not yet started has nothing to restart',
    ]);
    expect(refused('store_restart@1m+5m1s')).toEqual([
      'fault 1.duration: store_restart keeps the store away for more than 0s and at most 5m (the look-back), got `5m1s`',
    ]);
    expect(refused('store_restart@1m+0s')).toEqual([
      'fault 1.duration: store_restart keeps the store away for more than 0s and at most 5m (the look-back), got `0s`',
    ]);
    expect(refused('ingest_kill@1m:hive=Hive 1')).toEqual([
      "fault 1.hive: ingest_kill takes no `hive`: it hits the run's own platform",
    ]);
    expect(refused('store_restart@1m+10s; ingest_kill@soon')).toEqual(['column 23: fault 2.at: bad duration']);
    expect(refused('store_restart@1m+;')).toEqual(['column 18: expected a duration such as 5m, found ";"']);
  });

  it('reads a sensor death as offline from `at` to the end; a duration or a missing target is refused at its place', () => {
    const r = parseFaultSchedule('sensor_death@2m:sensors=Kitchen');
    expect(r).toEqual({ ok: true, faults: [{ kind: 'sensor_death', at: '2m', sensors: ['Kitchen'] }] });
    if (!r.ok) return;
    const ok = loadScenarioFile('scenarios/quickstart.yaml', { faults: r.faults });
    expect(ok.ok && ok.model.faults?.map((f) => [f.kind, f.atMs - ok.model.startMs, f.atMs + f.durationMs])).toEqual([
      ['sensor_death', 120_000, Number.MAX_SAFE_INTEGER],
    ]);
    const refused = (schedule: string): string[] => {
      const p = parseFaultSchedule(schedule);
      if (!p.ok) throw new Error(p.message);
      const l = loadScenarioFile('scenarios/quickstart.yaml', { faults: p.faults });
      return l.ok ? [] : l.diagnostics.map((d) => `${d.path}: ${d.message}`);
    };
    expect(refused('sensor_death@2m+1m:sensors=Kitchen')).toEqual([
      'fault 1.duration: sensor_death has no duration: a dead sensor does not come back (sensor_offline is the one that does)',
    ]);
    expect(refused('sensor_death@2m')).toEqual(['fault 1: fault sensor_death needs `sensors` or `hive`']);
    expect(refused('sensor_death@2m:sensors=Nope')).toEqual(['fault 1.sensors[0]: unknown sensor `Nope`']);
  });
});
