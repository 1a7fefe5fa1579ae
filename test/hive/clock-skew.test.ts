import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCapture } from '../../src/capture/check.js';
import { readCapture } from '../../src/capture/format.js';
import { rawUplink } from '../../src/capture/rules.js';
import { runScenario } from '../../src/run/run-scenario.js';
import { parseFaultSchedule } from '../../src/scenario/fault-schedule.js';

const dir = mkdtempSync(join(tmpdir(), 'occusim-clock-skew-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each batch's first `sent_at_ms` in a capture, by hive serial and seq. */
function sentAt(path: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of readCapture(path).messages) {
    if (!m.topic.endsWith('/uplink')) continue;
    const b = rawUplink(m.payload);
    if (typeof b === 'string') throw new Error(b);
    const key = `${b.hiveSerial}|${b.seq}`;
    if (!out.has(key)) out.set(key, b.sentAtMs);
  }
  return out;
}

async function run(schedule: string, record: string) {
  const parsed = parseFaultSchedule(schedule);
  if (!parsed.ok) throw new Error(parsed.message);
  return runScenario('scenarios/quickstart.yaml', {
    durationMs: 4 * 60_000,
    faults: parsed.faults,
    keepStore: false,
    record: join(dir, record),
  });
}

/** The clock_skew fault (src/hive/hive-node.ts `clockAt`): the hive stamps by a clock off by the offset while it lasts; the cloud loses nothing. */
describe('clock_skew fault', () => {
  it("stamps the window's batches off by the offset; the protocol check flags a clock behind by more than 2 s, ahead it does not; nothing is lost", async () => {
    const [behind, ahead, clean] = await Promise.all([
      run('clock_skew@60s+60s:hive=Hive 1,offset=-30s', 'behind.occap'),
      run('clock_skew@60s+60s:hive=Hive 1,offset=+30s', 'ahead.occap'),
      run('', 'clean.occap'),
    ]);
    const base = sentAt(join(dir, 'clean.occap'));
    for (const [record, offsetMs] of [
      ['behind.occap', -30_000],
      ['ahead.occap', 30_000],
    ] as const) {
      const skewed = sentAt(join(dir, record));
      expect([...skewed.keys()]).toEqual([...base.keys()]);
      const shifts = [...skewed].map(([key, ms]) => ms - base.get(key)!);
      // 6 intervals of 10 s in the window, one batch each; every other batch stamped as without the fault.
      expect(shifts.filter((d) => d === offsetMs)).toHaveLength(6);
      expect(shifts.filter((d) => d !== offsetMs && d !== 0)).toEqual([]);
    }
    // The judge of the protocol's 2 s tolerance is `occusim check`'s checker, over the captures.
    const verdict = (record: string) => {
      const c = readCapture(join(dir, record));
      return checkCapture(c.header, c.messages).violations;
    };
    expect(verdict('clean.occap')).toEqual([]);
    expect(verdict('ahead.occap')).toEqual([]);
    const flagged = verdict('behind.occap');
    expect(flagged.length).toBeGreaterThan(0);
    expect(new Set(flagged.map((v) => v.rule))).toEqual(new Set(['timestamp']));
    // Loss-free: the cloud times batches by its own clock and packets by their sensing time.
    for (const r of [behind, ahead]) {
      expect(r.result.messages.lost).toBe(0);
      expect(r.result.messages.batchesProcessed).toBe(clean.result.messages.batchesProcessed);
      expect(r.result.presence).toEqual(clean.result.presence);
      expect(r.result.traffic).toEqual(clean.result.traffic);
    }
  }, 180_000);
});
