import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
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
function trueCountAt(atMs: number, floorId: string): number {
  const world = createWorld(model);
  for (let t = model.startMs; t <= atMs; t += model.tickMs) world.step(t);
  return world.peopleOnFloor(floorId).length;
}

describe('the live page', () => {
  it.skipIf(!HAVE_CHROMIUM)('renders the floor plan with one marker per true person, and matches the golden image at the end', async () => {
    const b = browser as Browser;
    const page = await b.newPage({ viewport: VIEWPORT, deviceScaleFactor: 1 });
    page.setDefaultTimeout(15_000);
    let during: { at: number; markers: number } | null = null;
    await runScenario(model, {
      durationMs: 20 * 60_000,
      keepStore: false,
      platformThread: false,
      api: { port: 0, audience: 'https://api.occusim.test' },
      onPlatform: async (ready) => {
        await page.goto(`${ready.apiUrl}/live`);
        await page.locator('svg .room').first().waitFor();
      },
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
          throw new Error(`the live page differs from ${GOLDEN}; this run's screenshot: ${actual} (UPDATE_GOLDEN=1 after a deliberate change)`);
        }
      },
    });
    expect(during).not.toBeNull();
    await page.close();
  }, 120_000);
});
