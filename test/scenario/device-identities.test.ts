import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScenarioText } from '../../src/scenario/load.js';

/** A scenario may give a real hive's serial and password and a real sensor's MAC (docs/firmware.md). */
const quickstart = readFileSync(new URL('../../scenarios/quickstart.yaml', import.meta.url), 'utf8');
const withHive = (hive: string): string =>
  quickstart.replace(
    '- { name: Hive 1, position: [8.8, 4], backhaul: wifi }',
    `- { name: Hive 1, position: [8.8, 4], backhaul: wifi, ${hive} }`,
  );
const withMac = (sensor: string, mac: string, text = quickstart): string =>
  text.replace(`- { name: ${sensor}, mode:`, `- { mac: ${mac}, name: ${sensor}, mode:`);

describe('device identities in a scenario', () => {
  it('takes the hive\u2019s serial and password as given', () => {
    const r = loadScenarioText(withHive('serial: HVBENCH01, password: a-long-password'), 'q.yaml');
    expect(r.ok && r.model.hives[0]).toMatchObject({ serial: 'HVBENCH01', password: 'a-long-password' });
  });

  it('refuses a serial that cannot be a topic level and a short password, at their lines', () => {
    const r = loadScenarioText(withHive('serial: "HV/1", password: short'), 'q.yaml');
    expect(r.ok).toBe(false);
    const paths = !r.ok ? r.diagnostics.map((d) => `${d.path}: ${d.message}`) : [];
    expect(paths).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/hives\[0\]\.serial: a serial is 1 to 64 of/),
        expect.stringMatching(/hives\[0\]\.password: /),
      ]),
    );
  });

  it('takes a sensor\u2019s MAC as given and refuses the same MAC twice', () => {
    const one = loadScenarioText(withMac('Meeting', '00-17-0d-00-00-00-00-09'), 'q.yaml');
    expect(one.ok && one.model.sensors.find((s) => s.name === 'Meeting')?.mac).toBe('00-17-0d-00-00-00-00-09');
    const twice = loadScenarioText(
      withMac('Kitchen', '00-17-0d-00-00-00-00-09', withMac('Meeting', '00-17-0d-00-00-00-00-09')),
      'q.yaml',
    );
    expect(twice.ok).toBe(false);
    expect(
      !twice.ok && twice.diagnostics.some((d) => /MAC 00-17-0d-00-00-00-00-09 is already used/.test(d.message)),
    ).toBe(true);
    const bad = loadScenarioText(withMac('Meeting', '"AA:BB"'), 'q.yaml');
    expect(!bad.ok && bad.diagnostics[0]?.message).toMatch(/8 lower-case hex bytes/);
  });
});
