import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadScenarioObject } from '../../src/scenario/load.js';

/** `calibration_points` in the scenario (room and floor) feed the calibrated traffic occupancy. */
function quickstartWith(edit: (floor: Record<string, unknown>) => void): unknown {
  const doc = parse(readFileSync(join(import.meta.dirname, '../../scenarios/quickstart.yaml'), 'utf8')) as {
    sites: Array<{ buildings: Array<{ floors: Array<Record<string, unknown>> }> }>;
  };
  edit(doc.sites[0]!.buildings[0]!.floors[0]!);
  return parse(stringify(doc));
}

describe('scenario calibration points', () => {
  it('resolves room and floor points from site-local date-times to epoch ms, sorted', () => {
    const doc = quickstartWith((floor) => {
      floor['calibration_points'] = [{ timestamp: '2026-03-02T12:00', occupancy: 0 }];
      (floor['rooms'] as Array<Record<string, unknown>>)[2]!['calibration_points'] = [
        { timestamp: '2026-03-02T10:30', occupancy: 3 },
        { timestamp: '2026-03-02T09:00Z', occupancy: 5 },
      ];
    });
    const loaded = loadScenarioObject(doc);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded));
    const room = loaded.model.rooms.find((r) => r.name === 'Meeting room');
    // Europe/Paris is UTC+1 on 2 March 2026; an explicit Z wins.
    expect(room?.calibrationPoints).toEqual([
      { timestampMs: Date.UTC(2026, 2, 2, 9, 0), occupancy: 5 },
      { timestampMs: Date.UTC(2026, 2, 2, 9, 30), occupancy: 3 },
    ]);
    expect(loaded.model.floors[0]?.calibrationPoints).toEqual([
      { timestampMs: Date.UTC(2026, 2, 2, 11, 0), occupancy: 0 },
    ]);
    expect(loaded.model.rooms.find((r) => r.name === 'Kitchen')?.calibrationPoints).toBeUndefined();
  });

  it('locates a malformed timestamp or a negative occupancy', () => {
    const doc = quickstartWith((floor) => {
      (floor['rooms'] as Array<Record<string, unknown>>)[0]!['calibration_points'] = [
        { timestamp: 'noon', occupancy: 1 },
      ];
      floor['calibration_points'] = [{ timestamp: '2026-03-02T12:00', occupancy: -1 }];
    });
    const loaded = loadScenarioObject(doc);
    expect(loaded.ok).toBe(false);
    const text = JSON.stringify(loaded);
    expect(text).toContain('calibration_points');
    expect(text).toContain('noon');
  });
});
