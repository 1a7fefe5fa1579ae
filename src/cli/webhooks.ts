import { existsSync } from 'node:fs';
import { SqliteWebhookStore } from '../cloud/store/sqlite-webhooks.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Flags, Io } from './io.js';

/**
 * `occusim webhooks replay --db FILE (--dead | --from T --to T) [--subscription ID]`: puts
 * dead letters, or every delivery of events sensed in [from, to), back in the outbox of the
 * store, due at once; the next platform that opens the store sends them (docs/webhooks.md).
 * `occusim webhooks deadletters --db FILE` lists the dead letters. Exit 0.
 */
const usage = (m: string): AppError => new AppError(ErrorCodes.USAGE, m);

function instant(name: string, v: Flags[string]): number {
  if (typeof v !== 'string') throw usage(`--${name} needs an RFC 3339 instant, e.g. 2026-03-02T08:00:00Z`);
  const t = Date.parse(v);
  if (Number.isNaN(t) || !/(Z|[+-]\d\d:\d\d)$/.test(v)) throw usage(`--${name} must be an RFC 3339 instant with Z or an offset, got ${JSON.stringify(v)}`);
  return t;
}

export function webhooksCommand(args: readonly string[], flags: Flags, io: Io): number {
  const [sub, ...rest] = args;
  if (rest.length > 0 || (sub !== 'replay' && sub !== 'deadletters')) throw usage('usage: occusim webhooks replay|deadletters --db FILE [...]');
  const db = flags.db;
  if (typeof db !== 'string') throw usage(`occusim webhooks ${sub} needs --db <store.sqlite>`);
  if (!existsSync(db)) throw usage(`no store at ${db}`);
  const store = new SqliteWebhookStore(db);
  try {
    const subscription = typeof flags.subscription === 'string' ? flags.subscription : null;
    if (sub === 'deadletters') {
      const letters = store.deadLetters(subscription ?? undefined);
      for (const d of letters) io.stdout.write(`${d.subscriptionId}  ${d.eventId}  ${d.eventType}  ${new Date(d.eventTimestampMs).toISOString()}  attempts ${d.attempts}  ${JSON.stringify(d.lastError ?? '')}\n`);
      io.stderr.write(`${letters.length} webhook dead letter(s) in ${db}\n`);
      return 0;
    }
    // Due at once (0 sorts before every pending delivery): the user asked for them now.
    const n =
      flags.dead === true
        ? store.replayDead(subscription, 0)
        : store.replayRange(subscription, instant('from', flags.from), instant('to', flags.to), 0);
    io.stderr.write(`${n} deliver${n === 1 ? 'y' : 'ies'} back in the outbox of ${db}\n`);
    return 0;
  } finally {
    store.close();
  }
}
