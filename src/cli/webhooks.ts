import { AppError, ErrorCodes } from '../core/errors.js';
import { describeLocation } from '../store/location.js';
import { openWebhookStore } from '../store/open.js';
import type { Flags, Io } from './io.js';
import { existingStore } from './store-flag.js';

/**
 * `occusim webhooks replay --store sqlite:FILE|postgres://… (--dead | --from T --to T)
 * [--subscription ID]` (or `--db FILE`): puts dead letters, or every delivery of events sensed
 * in [from, to), back in the outbox of the store, due at once: a platform serving that store
 * sends them at its next delivery round, or the next one that opens it (docs/webhooks.md).
 * `occusim webhooks deadletters` lists the dead letters. Through the webhook port, so any
 * store works. Exit 0.
 */
const usage = (m: string): AppError => new AppError(ErrorCodes.USAGE, m);

function instant(name: string, v: Flags[string]): number {
  if (typeof v !== 'string') throw usage(`--${name} needs an RFC 3339 instant, e.g. 2026-03-02T08:00:00Z`);
  const t = Date.parse(v);
  if (Number.isNaN(t) || !/(Z|[+-]\d\d:\d\d)$/.test(v))
    throw usage(`--${name} must be an RFC 3339 instant with Z or an offset, got ${JSON.stringify(v)}`);
  return t;
}

export async function webhooksCommand(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (rest.length > 0 || (sub !== 'replay' && sub !== 'deadletters'))
    throw usage('usage: occusim webhooks replay|deadletters --store sqlite:FILE|postgres://… [...]');
  const replay = sub === 'replay' ? replayWhat(flags) : null;
  const location = existingStore(flags, `occusim webhooks ${sub}`);
  const name = describeLocation(location);
  const store = await openWebhookStore(location);
  try {
    const subscription = typeof flags.subscription === 'string' ? flags.subscription : null;
    if (replay === null) {
      const letters = await store.deadLetters(subscription ?? undefined);
      for (const d of letters)
        io.stdout.write(
          `${d.subscriptionId}  ${d.eventId}  ${d.eventType}  ${new Date(d.eventTimestampMs).toISOString()}  attempts ${d.attempts}  ${JSON.stringify(d.lastError ?? '')}\n`,
        );
      io.stderr.write(`${letters.length} webhook dead letter(s) in ${name}\n`);
      return 0;
    }
    // Due at once (0 sorts before every pending delivery): the user asked for them now.
    const n = replay.dead
      ? await store.replayDead(subscription, 0)
      : await store.replayRange(subscription, replay.fromMs, replay.toMs, 0);
    io.stderr.write(`${n} deliver${n === 1 ? 'y' : 'ies'} back in the outbox of ${name}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** What `replay` puts back, checked before the store is opened. */
function replayWhat(flags: Flags): { dead: true } | { dead: false; fromMs: number; toMs: number } {
  if (flags.dead === true) return { dead: true };
  return { dead: false, fromMs: instant('from', flags.from), toMs: instant('to', flags.to) };
}
