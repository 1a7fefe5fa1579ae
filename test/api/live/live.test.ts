import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { RunOptions } from '../../../src/run/options.js';
import { SqliteStore } from '../../../src/store/sqlite-store.js';
import { runScenario } from '../../../src/run/run-scenario.js';
import { loadScenarioFile } from '../../../src/scenario/load.js';
import type { ScenarioModel } from '../../../src/scenario/model.js';
import { createWorld } from '../../../src/sim/world.js';
import { HAVE_CHROMIUM, launchChromium } from '../../support/chromium.js';

/**
 * `/live` on a served quickstart (max speed, in the platform's thread): the page draws the
 * floor plan, shows as many true-person markers as the simulated world holds at the instant
 * the page shows, and — once the run has ended, so the state is fixed — looks exactly like
 * the committed golden image (seed 7, 20 minutes, viewport 1100×700).
 *
 * To update the golden image after a deliberate change of the page:
 *   UPDATE_GOLDEN=1 npx vitest run test/api/live
 * then look at test/api/live/golden/quickstart-end.png before committing it.
 */
const GOLDEN = new URL('./golden/quickstart-end.png', import.meta.url).pathname;
const VIEWPORT = { width: 1100, height: 700 };
let model: ScenarioModel;
let browser: Browser | null = null;

/** A page of the shared browser at the golden image's viewport. */
async function livePage(): Promise<Page> {
  const page = await (browser as Browser).newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  page.setDefaultTimeout(15_000);
  return page;
}

const AUDIENCE = 'https://api.occusim.test';

/** `/live` with an access token of the scenario's first client in its fragment (the page keeps it, no request carries it). */
async function liveUrl(apiUrl: string, of: ScenarioModel = model): Promise<string> {
  const c = of.clients[0] as ScenarioModel['clients'][number];
  const res = await fetch(`${apiUrl}/api/v2/clients/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: c.clientId,
      client_secret: c.secret,
      audience: AUDIENCE,
    }),
  });
  const { access_token: token } = (await res.json()) as { access_token: string };
  return `${apiUrl}/live#token=${encodeURIComponent(token)}`;
}

/** Options of a run that serves its API on a free port and opens /live on `page` once it listens. */
function servedLive(
  page: Page,
  durationMs: number,
  platformThread: boolean,
): Pick<RunOptions, 'durationMs' | 'keepStore' | 'platformThread' | 'api' | 'onPlatform'> {
  return {
    durationMs,
    keepStore: false,
    platformThread,
    api: { port: 0, audience: AUDIENCE },
    onPlatform: async (ready) => {
      await page.goto(await liveUrl(ready.apiUrl as string));
      await page.locator('svg .room').first().waitFor();
      // The token left the address bar at once.
      expect(new URL(page.url()).hash).toBe('');
    },
  };
}

beforeAll(async () => {
  const r = loadScenarioFile(new URL('../../../scenarios/quickstart.yaml', import.meta.url).pathname);
  if (!r.ok) throw new Error('quickstart does not load');
  model = r.model;
  if (HAVE_CHROMIUM) browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** People on the floor after the world has stepped every tick up to `atMs` (the world is deterministic). */
function trueCountAt(atMs: number, floorId: string, of: ScenarioModel = model): number {
  const world = createWorld(of);
  for (let t = of.startMs; t <= atMs; t += of.tickMs) world.step(t);
  return world.peopleOnFloor(floorId).length;
}

describe('the live page', () => {
  it.skipIf(!HAVE_CHROMIUM)(
    'renders the floor plan with one marker per true person, and matches the golden image at the end',
    async () => {
      const page = await livePage();
      let during: { at: number; markers: number } | null = null;
      await runScenario(model, {
        ...servedLive(page, 20 * 60_000, false),
        beforeClose: async () => {
          // The run has ended; the page shows its last instant once the last event arrived.
          const floorId = model.floors[0]?.id as string;
          const lastAt = model.startMs + 20 * 60_000 - model.tickMs;
          await page.locator('body[data-final="true"]').waitFor({ state: 'attached' });
          expect(await page.locator('body').getAttribute('data-at')).toBe(String(lastAt));
          const markers = await page.locator('svg circle.person').count();
          during = { at: lastAt, markers };
          expect(markers).toBe(trueCountAt(lastAt, floorId));
          expect(await page.locator('svg .room').count()).toBe(model.rooms.length);
          expect(await page.locator('#rooms tr').count()).toBe(model.rooms.length + 1);
          const shot = await page.screenshot({ fullPage: false });
          if (process.env.UPDATE_GOLDEN === '1' || !existsSync(GOLDEN)) {
            writeFileSync(GOLDEN, shot);
            console.warn(`wrote the golden image ${GOLDEN}`);
          } else if (!shot.equals(readFileSync(GOLDEN))) {
            const actual = join(process.env.TMPDIR ?? '/tmp', 'quickstart-end.actual.png');
            writeFileSync(actual, shot);
            throw new Error(
              `the live page differs from ${GOLDEN}; this run's screenshot: ${actual} (UPDATE_GOLDEN=1 after a deliberate change)`,
            );
          }
        },
      });
      expect(during).not.toBeNull();
      await page.close();
    },
    120_000,
  );

  it.skipIf(!HAVE_CHROMIUM)(
    'updates the room counters within 2 s (wall) of a minute being finalised, on a paced run',
    async () => {
      const page = await livePage();
      // ×60: a simulated minute per wall second; the 5-minute look-back finalises minutes 0–2
      // during the run, the rest when it ends.
      let store: SqliteStore | null = null;
      let polling: NodeJS.Timeout | null = null;
      const seen = new Map<string, number>();
      const shown: Array<Promise<string | null>> = [];
      const delaysMs: number[] = [];
      await runScenario(model, {
        durationMs: 8 * 60_000,
        speed: 60,
        keepStore: false,
        platformThread: false,
        api: { port: 0, audience: AUDIENCE },
        onPlatform: async (ready) => {
          await page.goto(await liveUrl(ready.apiUrl as string));
          await page.locator('svg .room').first().waitFor();
          // The store as another reader sees it (WAL): the instant a minute is stored is the
          // instant it is finalised; from then the page has 2 s to show it.
          store = new SqliteStore(ready.dbPath);
          const s = store;
          polling = setInterval(() => {
            for (const r of model.rooms) {
              const last = s.presenceMinutes(r.id).at(-1);
              if (!last || (seen.get(r.id) ?? -1) >= last.minuteMs) continue;
              seen.set(r.id, last.minuteMs);
              const storedAt = Date.now();
              const count = page.locator(`[id="count-${r.id}"][data-minute="${last.minuteMs}"]`);
              shown.push(
                count.waitFor({ state: 'attached', timeout: 2000 }).then(
                  async () => {
                    delaysMs.push(Date.now() - storedAt);
                    const text = (await count.textContent()) ?? '';
                    return text.startsWith(`${last.value} / `)
                      ? null
                      : `${r.name} minute ${last.minuteMs}: page shows "${text}", stored ${last.value}`;
                  },
                  () => `${r.name} minute ${last.minuteMs} (stored at wall ${storedAt}) not shown within 2 s`,
                ),
              );
            }
          }, 20);
        },
        beforeClose: async () => {
          // Let the poller see the minutes the end of the run finalised.
          await new Promise((r) => setTimeout(r, 100));
          if (polling) clearInterval(polling);
          const failures = (await Promise.all(shown)).filter((f) => f !== null);
          expect(failures).toEqual([]);
          console.log(
            `live: ${delaysMs.length} room minutes shown, stored → on the page max ${Math.max(...delaysMs)} ms (bound 2000)`,
          );
        },
      });
      (store as SqliteStore | null)?.close();
      // Every room's 8 minutes were finalised and seen on the page.
      expect(shown.length).toBeGreaterThanOrEqual(model.rooms.length);
      expect([...seen.values()].every((m) => m === model.startMs + 7 * 60_000)).toBe(true);
      await page.close();
    },
    120_000,
  );

  it.skipIf(!HAVE_CHROMIUM)(
    "switching floor redraws that floor's plan, people and rooms",
    async () => {
      // Mid-morning, when people are in: each floor has its own.
      const r = loadScenarioFile(new URL('../../../scenarios/office-day.yaml', import.meta.url).pathname, {
        start: '2026-03-03T10:00',
      });
      if (!r.ok) throw new Error('office-day does not load');
      const office = r.model;
      expect(office.floors.length).toBeGreaterThanOrEqual(2);
      const page = await livePage();
      await runScenario(office, {
        ...servedLive(page, 2 * 60_000, false),
        // Without a token the page holds nothing and asks to sign in; the user's password grant opens it.
        onPlatform: async (ready) => {
          await page.goto(`${ready.apiUrl}/live`);
          await page.locator('#login:not([hidden])').waitFor();
          expect(await page.locator('svg .room').count()).toBe(0);
          const user = office.users[0] as ScenarioModel['users'][number];
          await page.fill('#login-user', user.username);
          await page.fill('#login-password', 'wrong');
          await page.click('#login button');
          await expect
            .poll(() => page.locator('#login-error').textContent(), { timeout: 15_000 })
            .toMatch(/wrong username or password/);
          await page.fill('#login-password', user.password);
          await page.click('#login button');
          await page.locator('svg .room').first().waitFor();
          expect(await page.locator('#login').isHidden()).toBe(true);
        },
        beforeClose: async () => {
          const m = office;
          await page.locator('body[data-final="true"]').waitFor({ state: 'attached' });
          const atMs = Number(await page.locator('body').getAttribute('data-at'));
          let people = 0;
          for (const floor of [m.floors[1], m.floors[0], m.floors[2]].filter((f) => f !== undefined)) {
            await page.locator('#floor').selectOption(floor.id);
            await page.locator(`svg[data-floor="${floor.id}"]`).waitFor({ state: 'attached' });
            await page.locator('body[data-final="true"][data-ready="true"]').waitFor({ state: 'attached' });
            const rooms = await page
              .locator('svg .room')
              .evaluateAll((els) => els.map((e) => e.getAttribute('data-room')));
            expect(rooms).toEqual(m.rooms.filter((x) => x.floorId === floor.id).map((x) => x.id));
            expect(await page.locator('#rooms tr').count()).toBe(rooms.length + 1);
            const markers = await page.locator('svg circle.person').count();
            expect(markers).toBe(trueCountAt(atMs, floor.id, m));
            people += markers;
            expect(new URL(page.url()).searchParams.get('floor')).toBe(floor.id);
          }
          expect(people).toBeGreaterThan(0);
        },
      });
      await page.close();
    },
    180_000,
  );

  it.skipIf(!HAVE_CHROMIUM)(
    "is served when the platform runs in its own thread, the same page as in the run's thread",
    async () => {
      const page = await livePage();
      let inOwnThread = false;
      await runScenario(model, {
        ...servedLive(page, 20 * 60_000, true),
        beforeClose: async (report) => {
          inOwnThread = report.perf.platformThread;
          const floorId = model.floors[0]?.id as string;
          const lastAt = model.startMs + 20 * 60_000 - model.tickMs;
          await page.locator('body[data-final="true"]').waitFor({ state: 'attached' });
          expect(await page.locator('body').getAttribute('data-at')).toBe(String(lastAt));
          expect(await page.locator('svg circle.person').count()).toBe(trueCountAt(lastAt, floorId));
          expect(await page.locator('svg circle.detection').count()).toBeGreaterThan(0);
          // The same run, the same state: the same pixels as the in-thread golden image.
          const shot = await page.screenshot({ fullPage: false });
          if (!shot.equals(readFileSync(GOLDEN))) {
            const actual = join(process.env.TMPDIR ?? '/tmp', 'quickstart-end.thread.png');
            writeFileSync(actual, shot);
            throw new Error(
              `/live from the platform's thread differs from ${GOLDEN}; this run's screenshot: ${actual}`,
            );
          }
        },
      });
      expect(inOwnThread).toBe(true);
      await page.close();
    },
    120_000,
  );
});
