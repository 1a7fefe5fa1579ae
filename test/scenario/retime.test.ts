import { describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/scenario/load.js';
import type { ScenarioModel } from '../../src/scenario/model.js';
import { retimeModel } from '../../src/scenario/retime.js';

const quickstart = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;
const load = (start?: string): ScenarioModel => {
  const r = loadScenarioFile(quickstart, start === undefined ? {} : { start });
  if (!r.ok) throw new Error('quickstart does not load');
  return r.model;
};

describe('the scenario timeline moved to another start (--start now)', () => {
  it('moves daily clock times by the difference in local time of day, instants by the difference', () => {
    const model = load(); // 2026-03-02T08:00 Europe/Paris
    const at = Date.parse('2026-11-23T14:23:00Z'); // 15:23 in Paris
    const moved = retimeModel(model, at);
    expect(moved.startMs).toBe(at);
    const shift = 7 * 60 + 23;
    moved.populations.forEach((p, i) => {
      const before = model.populations[i]!;
      expect(p.arrival.meanMin).toBeCloseTo((before.arrival.meanMin + shift) % 1440, 6);
      expect(p.departure.meanMin).toBeCloseTo((before.departure.meanMin + shift) % 1440, 6);
    });
    moved.meetings.forEach((m, i) => expect(m.atMin).toBeCloseTo((model.meetings[i]!.atMin + shift) % 1440, 6));
    expect(moved.clients).toEqual(model.clients);
    expect(moved.hives).toEqual(model.hives);
  });

  it('seeded credentials depend on the scenario and seed only, not on the start', () => {
    const asWritten = load();
    const other = load('2027-01-05T16:45');
    expect(other.startMs).not.toBe(asWritten.startMs);
    expect(other.clients.map((c) => [c.clientId, c.secret])).toEqual(
      asWritten.clients.map((c) => [c.clientId, c.secret]),
    );
    expect(other.hives.map((h) => [h.serial, h.password])).toEqual(asWritten.hives.map((h) => [h.serial, h.password]));
    expect(other.users).toEqual(asWritten.users);
  });
});
