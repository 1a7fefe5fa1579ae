import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { ReportDataset } from '../../src/report/dataset.js';
import type { TruthLine } from '../../src/report/truth-file.js';
import { cli } from '../cli/fixtures/run-cli.js';
import { HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';

/**
 * `occusim run --html --truth`: the HTML report opens in headless Chromium with the network
 * cut, shows one plot per space, and the per-minute numbers it plots equal the truth file and
 * the store.
 */
const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;
let dir: string;
let truth: TruthLine[];
let html: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'occusim-html-'));
  const r = await cli(
    'run',
    QUICKSTART,
    '--duration',
    '40m',
    '--quiet',
    '--db',
    join(dir, 'store.sqlite'),
    '--html',
    join(dir, 'report.html'),
    '--truth',
    join(dir, 'truth.ndjson'),
  );
  expect(r.code, r.err).toBe(0);
  truth = readFileSync(join(dir, 'truth.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TruthLine);
  html = readFileSync(join(dir, 'report.html'), 'utf8');
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const minutesOf = (space: string): Array<[number, number]> =>
  truth.flatMap((l) => (l.type === 'minute' && l.space === space ? [[l.minuteMs, l.count] as [number, number]] : []));

describe('the truth file', () => {
  it('has a run line, then every space-minute, then every crossing in time order', () => {
    expect(truth[0]).toMatchObject({ type: 'run', scenario: 'quickstart', seed: 7, durationMs: 40 * 60_000 });
    const spaces = new Set(truth.flatMap((l) => (l.type === 'minute' ? [l.space] : [])));
    expect(spaces.size).toBe(6); // floor, 4 rooms, 1 zone
    for (const s of spaces) expect(minutesOf(s)).toHaveLength(40);
    const crossings = truth.filter((l) => l.type === 'crossing');
    expect(crossings.length).toBeGreaterThan(0);
    for (let i = 1; i < crossings.length; i++)
      expect((crossings[i] as { atMs: number }).atMs).toBeGreaterThanOrEqual(
        (crossings[i - 1] as { atMs: number }).atMs,
      );
    const kinds = truth.map((l) => l.type);
    expect(kinds.lastIndexOf('minute')).toBeLessThan(kinds.indexOf('crossing'));
  });

  it('is the same bytes for the same scenario and seed', async () => {
    const again = join(dir, 'again.ndjson');
    const r = await cli('run', QUICKSTART, '--duration', '40m', '--quiet', '--truth', again);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(join(dir, 'truth.ndjson'), 'utf8'));
  }, 120_000);
});

describe('the HTML report', () => {
  it('is self-contained: no script or stylesheet or image fetched from anywhere', () => {
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
  });

  it.skipIf(!HAVE_CHROMIUM)(
    'opens offline in headless Chromium with one plot per space, plotting the truth file and the store',
    async () => {
      const browser = await launchChromium();
      try {
        const context = await browser.newContext({ offline: true, viewport: { width: 900, height: 1200 } });
        const requests: string[] = [];
        context.on('request', (r) => requests.push(r.url()));
        const page = await context.newPage();
        await page.goto(`file://${join(dir, 'report.html')}`);
        const plots = await page.locator('svg.space-plot').count();
        const spaces = new Set(truth.flatMap((l) => (l.type === 'minute' ? [l.space] : [])));
        expect(plots).toBe(spaces.size);
        // Every plot is drawn: a path per series with points in it.
        const paths = await page
          .locator('svg.space-plot path[data-series="true"]')
          .evaluateAll((els) => els.map((e) => (e.getAttribute('d') ?? '').length));
        expect(paths.every((n) => n > 20)).toBe(true);
        expect(await page.locator('svg.latency-histogram rect').count()).toBeGreaterThan(0);
        expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
        const data = JSON.parse((await page.locator('#occusim-report-data').textContent()) ?? '') as ReportDataset;
        const store = new SqliteStore(join(dir, 'store.sqlite'));
        try {
          for (const s of data.spaces) {
            expect(
              s.minutes.map((m, i) => [m, s.truth[i]]),
              s.name,
            ).toEqual(minutesOf(s.id));
            const stored = new Map(store.presenceMinutes(s.id).map((p) => [p.minuteMs, p.value]));
            if (s.presence) expect(s.presence, s.name).toEqual(s.minutes.map((m) => stored.get(m) ?? null));
            else expect(stored.size).toBe(0);
          }
        } finally {
          store.close();
        }
        // Door plots: the true crossings per minute add up to the truth file's crossings of that door.
        const totalTrue = data.doors.reduce(
          (a, d) => a + d.trueIn.reduce((x, y) => x + y, 0) + d.trueOut.reduce((x, y) => x + y, 0),
          0,
        );
        expect(totalTrue).toBe(data.result.traffic.overall.trueCrossings);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
