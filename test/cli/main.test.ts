import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './fixtures/run-cli.js';

const scenario = (name: string): string => new URL(`../../scenarios/${name}`, import.meta.url).pathname;
const fixture = (name: string): string => new URL(`../scenario/fixtures/${name}`, import.meta.url).pathname;

describe('occusim command line', () => {
  it('validates a good scenario with exit 0 and a one-line description', async () => {
    const r = await cli('validate', scenario('quickstart.yaml'));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/valid — 1 site\(s\).*9 sensor\(s\)/);
  });

  it('lists located problems and exits 2 for a bad scenario, never a stack trace', async () => {
    const r = await cli('validate', fixture('unknown-field.yaml'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown-field\.yaml:\d+:\d+ \S+: /);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it('exits 2 with a message for a missing file', async () => {
    const r = await cli('validate', '/nonexistent/scenario.yaml');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/nonexistent/);
  });

  it('prints the JSON Schema', async () => {
    const r = await cli('schema');
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.out) as { type?: string; properties?: Record<string, unknown> };
    expect(schema.properties).toHaveProperty('sites');
  });

  it('refuses unknown flags, bad values and incomplete commands with exit 2', async () => {
    expect((await cli('run', scenario('quickstart.yaml'), '--bogus')).code).toBe(2);
    expect((await cli('run', scenario('quickstart.yaml'), '--speed', 'fast')).code).toBe(2);
    expect((await cli('run', scenario('quickstart.yaml'), '--duration', 'soon')).code).toBe(2);
    const serve = await cli('serve');
    expect(serve.code).toBe(2);
    expect(serve.err).toMatch(/needs --scenario/);
    expect((await cli('run', scenario('quickstart.yaml'), '--serve', '--port', '99999')).code).toBe(2);
    expect((await cli('frobnicate')).code).toBe(2);
  });

  it('runs a scenario, prints the summary and writes the report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-cli-'));
    const report = join(dir, 'r.json');
    const r = await cli(
      'run',
      scenario('quickstart.yaml'),
      '--duration',
      '20m',
      '--seed',
      '3',
      '--report',
      report,
      '--db',
      join(dir, 's.sqlite'),
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Presence occupancy, measured vs true/);
    expect(r.out).toMatch(/0 lost/);
    const json = JSON.parse(readFileSync(report, 'utf8')) as {
      scenario: string;
      seed: number;
      result: unknown;
      perf: unknown;
    };
    expect(json).toMatchObject({ scenario: 'quickstart', seed: 3 });
    expect(json.result).toBeDefined();
    expect(json.perf).toBeDefined();
  });

  // A platform setting reaches the platform from its flag (platform/config.ts): with a 10-minute
  // look-back every minute's occupancy event is sent again at each of 10 recomputes, not 5.
  it('passes --lookback to the platform, and refuses a look-back that is not whole minutes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'occusim-cli-lookback-'));
    const eventsWith = async (...extra: string[]): Promise<number> => {
      const report = join(dir, `r${extra.length}.json`);
      const r = await cli('run', scenario('quickstart.yaml'), '--duration', '30m', '--report', report, ...extra);
      expect(r.code).toBe(0);
      const json = JSON.parse(readFileSync(report, 'utf8')) as { result: { pipeline: { eventsEmitted: number } } };
      return json.result.pipeline.eventsEmitted;
    };
    const byDefault = await eventsWith();
    const longer = await eventsWith('--lookback', '10m');
    // Each complete minute: 1 + 5 sends by default, 1 + 10 with the longer window (the last few minutes fewer;
    // the instant events, the same in both, dilute it: 1.45 on quickstart at 30 min).
    expect(longer / byDefault).toBeGreaterThan(1.3);
    const bad = await cli('run', scenario('quickstart.yaml'), '--lookback', '90s');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/lookback must be whole minutes from 1m to 24h/);
  });
});
