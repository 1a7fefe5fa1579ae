import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { receiveCommand } from '../../src/cli/receive.js';
import { SqliteWebhookStore } from '../../src/store/sqlite-webhooks.js';
import { systemClock } from '../../src/core/clock.js';
import { signedHeaders } from '../../src/webhooks/signing.js';
import { cli } from './fixtures/run-cli.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('occusim receive', () => {
  it('verifies signatures, dedupes by id, counts per type and writes each new body once to NDJSON', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'occusim-rx-')), 'events.ndjson');
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let printed = '';
    let logged = '';
    stdout.on('data', (c: Buffer) => (printed += c.toString()));
    stderr.on('data', (c: Buffer) => (logged += c.toString()));
    const stop = new AbortController();
    const done = receiveCommand(
      [],
      { port: '0', secret: SECRET, out },
      { stdout, stderr } as unknown as Io,
      stop.signal,
    );
    while (!/listening on (\S+)/.test(logged)) await new Promise((r) => setTimeout(r, 10));
    const url = (/listening on (\S+)/.exec(logged) as RegExpExecArray)[1] as string;
    const client = new Client(new URL(url).origin);
    const post = async (id: string, type: string, secret = SECRET): Promise<number> => {
      const body = JSON.stringify({ id, type, timestamp: 0, version: 'v1.0.0', metadata: {}, data: 1 });
      const res = await client.request({
        method: 'POST',
        path: '/',
        body,
        headers: {
          'content-type': 'application/json',
          ...signedHeaders([secret], id, Math.floor(systemClock.now() / 1000), body),
        },
      });
      await res.body.dump();
      return res.statusCode;
    };
    expect(await post('event_a', 'ROOM_OCCUPANCY')).toBe(200);
    expect(await post('event_a', 'ROOM_OCCUPANCY')).toBe(200);
    expect(await post('event_b', 'TRAFFIC')).toBe(200);
    expect(await post('event_c', 'TRAFFIC', `whsec_${Buffer.alloc(32, 1).toString('base64')}`)).toBe(401);
    await client.close();
    stop.abort();
    expect(await done).toBe(0);
    expect(JSON.parse(printed)).toMatchObject({
      requests: 4,
      unique: 2,
      duplicates: 1,
      badSignatures: 1,
      byType: { ROOM_OCCUPANCY: 1, TRAFFIC: 1 },
    });
    expect(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id),
    ).toEqual(['event_a', 'event_b']);
  });

  it('checks webhook-timestamp against its wall clock with the standard 5 minutes, unless --no-timestamp-check', async () => {
    const answers = async (flags: Record<string, string | boolean>): Promise<number[]> => {
      let logged = '';
      const stderr = new PassThrough();
      stderr.on('data', (c: Buffer) => (logged += c.toString()));
      const stop = new AbortController();
      const done = receiveCommand(
        [],
        { port: '0', secret: SECRET, ...flags },
        { stdout: new PassThrough(), stderr } as unknown as Io,
        stop.signal,
      );
      while (!/listening on (\S+)/.test(logged)) await new Promise((r) => setTimeout(r, 10));
      const client = new Client(new URL((/listening on (\S+)/.exec(logged) as RegExpExecArray)[1] as string).origin);
      const nowS = Math.floor(systemClock.now() / 1000);
      const statuses: number[] = [];
      // A simulated instant (the scenario's date), 6 minutes old, 4 minutes old, 6 minutes ahead.
      for (const [i, ts] of [1_772_438_400, nowS - 360, nowS - 240, nowS + 360].entries()) {
        const body = JSON.stringify({
          id: `event_${i}`,
          type: 'TRAFFIC',
          timestamp: 0,
          version: 'v1.0.0',
          metadata: {},
          data: 1,
        });
        const res = await client.request({
          method: 'POST',
          path: '/',
          body,
          headers: { 'content-type': 'application/json', ...signedHeaders([SECRET], `event_${i}`, ts, body) },
        });
        await res.body.dump();
        statuses.push(res.statusCode);
      }
      await client.close();
      stop.abort();
      await done;
      return statuses;
    };
    expect(await answers({})).toEqual([401, 401, 200, 401]);
    expect(await answers({ 'no-timestamp-check': false })).toEqual([200, 200, 200, 200]);
  });

  it('refuses a secret that is not whsec_ base64 with a usage error', async () => {
    const r = await cli('receive', '--port', '0', '--secret', 'nope');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--secret\[0\]: a signing secret starts with whsec_/);
  });
});

describe('--webhook-concurrency', () => {
  const quickstart = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

  it('refuses a limit outside 1..64 or not an integer with a usage error naming the option, before anything starts', async () => {
    for (const bad of ['0', '65', '2.5', 'many', '']) {
      const run = await cli('run', quickstart, '--webhook-concurrency', bad);
      expect(run.code, bad).toBe(2);
      expect(run.err, bad).toMatch(/--webhook-concurrency must be an integer in 1\.\.64, got /);
    }
    const serve = await cli('serve', '--scenario', quickstart, '--webhook-concurrency', '100');
    expect(serve.code).toBe(2);
    expect(serve.err).toMatch(/--webhook-concurrency must be an integer in 1\.\.64, got "100"/);
  });

  it('is listed in the help of run and serve', async () => {
    expect((await cli('run', '--help')).out).toMatch(/--webhook-concurrency <n>/);
    expect((await cli('serve', '--help')).out).toMatch(/--webhook-concurrency <n>/);
  });
});

describe('--webhook-timestamps', () => {
  const quickstart = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;

  it('takes wall or simulated, refuses anything else with a usage error naming the choices, and is in the help of run, serve and receive', async () => {
    const run = await cli('run', quickstart, '--webhook-timestamps', 'scenario');
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/--webhook-timestamps must be wall or simulated, got "scenario"/);
    const serve = await cli('serve', '--scenario', quickstart, '--webhook-timestamps', '');
    expect(serve.code).toBe(2);
    expect((await cli('run', '--help')).out).toMatch(/--webhook-timestamps <clock>/);
    expect((await cli('serve', '--help')).out).toMatch(/--webhook-timestamps <clock>/);
    expect((await cli('receive', '--help')).out).toMatch(/--no-timestamp-check/);
  });
});

describe('occusim webhooks replay', () => {
  it('puts dead letters back in the outbox, due at once, and lists them before', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'occusim-replay-')), 'store.sqlite');
    const store = new SqliteWebhookStore(db);
    store.enqueue([
      {
        subscriptionId: 'webhook_1',
        eventId: 'event_a',
        eventType: 'TRAFFIC',
        eventTimestampMs: Date.UTC(2026, 2, 2, 7),
        body: '{}',
        enqueuedAtMs: 1,
        nextAttemptMs: 1,
      },
    ]);
    const [d] = store.due('webhook_1', 1, 1);
    store.recordAttempts([{ id: d?.id ?? 0, result: 'dead', error: 'HTTP 410' }]);
    store.close();
    const listed = await cli('webhooks', 'deadletters', '--db', db);
    expect(listed.out).toMatch(
      /^webhook_1 {2}event_a {2}TRAFFIC {2}2026-03-02T07:00:00.000Z {2}attempts 1 {2}"HTTP 410"\n$/,
    );
    const r = await cli('webhooks', 'replay', '--db', db, '--dead');
    expect(r.code).toBe(0);
    expect(r.err).toContain('1 delivery back in the outbox');
    const after = new SqliteWebhookStore(db);
    expect(after.counts('webhook_1')).toEqual({ pending: 1, delivered: 0, dead: 0 });
    expect(after.due('webhook_1', 0, 10).map((x) => [x.eventId, x.attempts])).toEqual([['event_a', 0]]);
    after.close();
    const range = await cli('webhooks', 'replay', '--db', db, '--from', '2026-03-02T06:00:00Z', '--to', 'yesterday');
    expect(range.code).toBe(2);
  });
});
