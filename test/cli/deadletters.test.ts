import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { cli } from './fixtures/run-cli.js';

describe('occusim deadletters', () => {
  it('lists a store’s dead letters oldest first with reason, topic and message', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'occusim-dl-')), 'store.sqlite');
    const store = new SqliteStore(db);
    store.writeDeadLetter({
      receivedAtMs: Date.UTC(2026, 2, 2, 7),
      topic: 'occusim/v1/hives/HV1/uplink',
      reason: 'DECODE_FAILED',
      message: 'bad bytes',
      payload: new Uint8Array([1]),
    });
    store.writeDeadLetter({
      receivedAtMs: Date.UTC(2026, 2, 2, 8),
      topic: 'occusim/v1/hives/HV9/uplink',
      reason: 'UNKNOWN_HIVE',
      message: 'no hive with serial HV9',
      payload: new Uint8Array([2]),
    });
    store.close();
    const r = await cli('deadletters', '--db', db);
    expect(r.code).toBe(0);
    expect(r.out.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^2026-03-02T07:00:00.000Z\s+DECODE_FAILED\s+occusim\/v1\/hives\/HV1\/uplink\s+bad bytes$/),
      expect.stringMatching(/^2026-03-02T08:00:00.000Z\s+UNKNOWN_HIVE\s+.*no hive with serial HV9$/),
    ]);
    expect(r.err).toContain('2 dead letter(s)');
  });

  it('escapes control characters so a newline in a MAC cannot forge a record and no ANSI escape reaches the terminal', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'occusim-dl-')), 'store.sqlite');
    const store = new SqliteStore(db);
    const forged =
      'bad mac AA:BB\n2026-03-02T09:00:00.000Z  OK                    occusim/v1/hives/HV1/uplink  all fine';
    store.writeDeadLetter({
      receivedAtMs: Date.UTC(2026, 2, 2, 7),
      topic: 'occusim/v1/hives/\u001b[2J\u001b[31mHV1/uplink',
      reason: 'DECODE_FAILED',
      message: forged,
      payload: new Uint8Array([1]),
    });
    store.close();
    const r = await cli('deadletters', '--db', db);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    // eslint-disable-next-line no-control-regex -- the assertion is about control characters
    expect(r.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(lines[0]).toContain('hives/\\x1b[2J\\x1b[31mHV1/uplink');
    expect(lines[0]).toContain('AA:BB\\n2026-03-02T09:00:00.000Z');
  });

  it('exits 2 with a clear message without --db or with a missing file', async () => {
    expect(await cli('deadletters')).toMatchObject({
      code: 2,
      err: expect.stringContaining('needs --store sqlite:FILE|postgres://… (or --db FILE)'),
    });
    expect(await cli('deadletters', '--db', '/nonexistent/store.sqlite')).toMatchObject({
      code: 2,
      err: expect.stringContaining('no store at'),
    });
  });
});
