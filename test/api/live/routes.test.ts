import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveEvent } from '../../../src/api/live/hub.js';
import type { LivePlan } from '../../../src/api/live/routes.js';
import { liveServer, open, type LiveServer } from './support.js';

/**
 * `/live` over real HTTP on a platform serving two organisations: the page is public and holds
 * nothing; its plan and stream need a token and show the token's organisation only; streams
 * are capped per subject and in total (issue 33, items 5 and 6).
 */
let live: LiveServer;
let ownToken: string;
let otherToken: string;

beforeAll(async () => {
  live = await liveServer({ perSubject: 2, total: 3, stallMs: 15_000, maxBufferedBytes: 4 * 1024 * 1024 });
  ownToken = await live.token(live.own);
  otherToken = await live.token(live.other);
}, 60_000);
afterAll(async () => live?.close());

const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });
const firstEvent = async (url: string, token: string): Promise<LiveEvent> => {
  const abort = new AbortController();
  const res = await fetch(url, { headers: bearer(token), signal: abort.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let got = '';
  for (;;) {
    const m = /data: (.*)\n\n/.exec(got);
    if (m) {
      abort.abort();
      return JSON.parse(m[1] as string) as LiveEvent;
    }
    const c = await reader.read();
    if (c.done) throw new Error(`stream ended before an event: ${got}`);
    got += decoder.decode(c.value, { stream: true });
  }
};

describe('/live', () => {
  it('serves the page to anyone, but its plan and stream only with a token (401 with WWW-Authenticate)', async () => {
    const page = await fetch(`${live.server.url}/live`);
    expect(page.status).toBe(200);
    const html = await page.text();
    // The page carries no data of any organisation.
    for (const f of [...live.own.floors, ...live.other.floors]) expect(html).not.toContain(f.id);
    for (const path of ['/live/plan', `/live/events?floor=${live.own.floors[0]?.id}`]) {
      const res = await fetch(`${live.server.url}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect((await fetch(`${live.server.url}${path}`, { headers: bearer('not-a-token') })).status).toBe(401);
    }
  });

  it("shows a token's own organisation only: another's floor is answered as an unknown one", async () => {
    const plan = (await (
      await fetch(`${live.server.url}/live/plan`, { headers: bearer(ownToken) })
    ).json()) as LivePlan;
    expect(plan.floors.map((f) => f.id)).toEqual(live.own.floors.map((f) => f.id));
    const otherFloor = live.other.floors[0]?.id as string;
    const theirs = (await (
      await fetch(`${live.server.url}/live/plan?floor=${otherFloor}`, { headers: bearer(ownToken) })
    ).json()) as LivePlan;
    expect(theirs.floor).toBeNull();
    expect(JSON.stringify(theirs)).not.toContain(otherFloor);
    const stream = await fetch(`${live.server.url}/live/events?floor=${otherFloor}`, { headers: bearer(ownToken) });
    expect(stream.status).toBe(404);
    const unknown = await fetch(`${live.server.url}/live/events?floor=floor_nope`, { headers: bearer(ownToken) });
    expect(((await unknown.json()) as { code: string }).code).toBe(((await stream.json()) as { code: string }).code);
    // The other organisation sees its own floors, and the ledger (platform-wide counters) is not sent to either.
    const mine = (await (
      await fetch(`${live.server.url}/live/plan`, { headers: bearer(otherToken) })
    ).json()) as LivePlan;
    expect(mine.floors.map((f) => f.id)).toEqual(live.other.floors.map((f) => f.id));
    const floorId = live.own.floors[0]?.id as string;
    live.hub.publish({ atMs: 1, people: { [floorId]: [['p1', 1, 1]], [otherFloor]: [['q1', 2, 2]] }, rooms: {} });
    const e = await firstEvent(`${live.server.url}/live/events?floor=${floorId}`, ownToken);
    expect(e.floorId).toBe(floorId);
    expect(e.people).toEqual([['p1', 1, 1]]);
    expect(e.ledger).toBeNull();
  });

  it('caps streams per subject and in total (429 RATE_LIMITED), and frees a slot when a stream ends', async () => {
    const own = `${live.server.url}/live/events?floor=${live.own.floors[0]?.id}`;
    const other = `${live.server.url}/live/events?floor=${live.other.floors[0]?.id}`;
    const a = await open(own, bearer(ownToken));
    const b = await open(own, bearer(ownToken));
    expect([a.res.statusCode, b.res.statusCode]).toEqual([200, 200]);
    const third = await open(own, bearer(ownToken));
    expect(third.res.statusCode).toBe(429);
    expect(JSON.parse(await third.body())).toMatchObject({ code: 'RATE_LIMITED' });
    const c = await open(other, bearer(otherToken));
    expect(c.res.statusCode).toBe(200);
    // Three open in all: a fourth, of a subject under its own cap, is refused too.
    const fourth = await open(other, bearer(otherToken));
    expect(fourth.res.statusCode).toBe(429);
    expect(JSON.parse(await fourth.body()).message).toMatch(/at most 3 \/live streams at once/);
    a.req.destroy();
    await expect
      .poll(async () => {
        const again = await open(own, bearer(ownToken));
        again.req.destroy();
        return again.res.statusCode;
      })
      .toBe(200);
    b.req.destroy();
    c.req.destroy();
  });
});
