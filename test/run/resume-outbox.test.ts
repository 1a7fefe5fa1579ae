import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A run killed with SIGKILL mid-way and resumed (`--resume`) leaves the events outbox an
 * uninterrupted run leaves: every row (event id, type, space, instant, value, revision,
 * emission instant) once, none missing, none extra. The resumed run replays from its start and
 * recomputes the window it finds open, emitting those events again: they must be stored once
 * (unique event id) and equal the first emission (the recompute's record rebuilt from the store).
 */
const CLI = fileURLToPath(new URL('./support/cli-run.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'occusim-resume-outbox-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MIN = 60_000;
const DURATION = '35m';
/** quickstart's start, 2026-03-02T08:00 Europe/Paris. */
const START_MS = Date.UTC(2026, 2, 2, 7, 0);

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The CLI's `run` in its own process; `killWhen` polled on the store's file, SIGKILL once true. */
function run(args: readonly string[], db: string, killWhen?: (db: Database.Database) => boolean): Promise<Exit> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'run', 'quickstart', '--duration', DURATION, '--db', db, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  if (killWhen) {
    const poll = setInterval(() => {
      if (!existsSync(db)) return;
      try {
        const reader = new Database(db, { readonly: true, fileMustExist: true });
        try {
          if (killWhen(reader)) {
            clearInterval(poll);
            child.kill('SIGKILL');
          }
        } finally {
          reader.close();
        }
      } catch {
        // Not yet migrated, or busy: polled again.
      }
    }, 10);
    void exited.then(() => clearInterval(poll));
  }
  return exited;
}

const OUTBOX = 'SELECT event_id AS eventId, type, space_id AS spaceId, minute_ms AS t, value, revision, emitted_at_ms AS emittedAtMs FROM events ORDER BY event_id';

function outbox(db: string): unknown[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare(OUTBOX).all();
  } finally {
    d.close();
  }
}

describe('a run killed with SIGKILL and resumed', () => {
  it('leaves the events outbox of an uninterrupted run: no duplicate, no extra, none missing', async () => {
    const whole = join(dir, 'whole.sqlite');
    expect(await run([], whole)).toEqual({ code: 0, signal: null });
    const expected = outbox(whole);
    expect(expected.length).toBeGreaterThan(1000);

    const parts = join(dir, 'parts.sqlite');
    // Killed once minutes 15 min into the run are emitted: the window then open is recomputed on resume.
    const maxMinute = (d: Database.Database): number => (d.prepare('SELECT MAX(minute_ms) AS m FROM events').get() as { m: number | null }).m ?? 0;
    expect(await run([], parts, (d) => maxMinute(d) >= START_MS + 15 * MIN)).toEqual({ code: null, signal: 'SIGKILL' });
    const before = outbox(parts).length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(expected.length);

    expect(await run(['--resume'], parts)).toEqual({ code: 0, signal: null });
    const resumed = outbox(parts);
    const ids = resumed.map((e) => (e as { eventId: string }).eventId);
    // The figures first (a failure says how far off), then the rows themselves.
    const expectedIds = new Set(expected.map((e) => (e as { eventId: string }).eventId));
    expect({ rows: resumed.length, duplicates: ids.length - new Set(ids).size, extra: ids.filter((id) => !expectedIds.has(id)).length }).toEqual({ rows: expected.length, duplicates: 0, extra: 0 });
    expect(resumed).toEqual(expected);
  }, 120_000);
});
