import { isoUtc } from '../core/time.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { describeLocation } from '../store/location.js';
import { openStore } from '../store/open.js';
import type { Flags, Io } from './commands.js';
import { existingStore } from './store-flag.js';

/**
 * `occusim deadletters --store sqlite:FILE|postgres://…` (or `--db FILE`): every
 * dead-lettered message or packet of a cloud store, oldest first, one per line: received time
 * (UTC), reason code, topic, message (docs/occupancy.md, Ingest). Read through the store port,
 * so any store works. Exit 0 (also when there are none).
 */
export async function deadlettersCommand(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  if (args.length > 0)
    throw new AppError(
      ErrorCodes.USAGE,
      'occusim deadletters takes no positional argument: use --store sqlite:FILE|postgres://… or --db FILE',
    );
  const location = existingStore(flags, 'occusim deadletters');
  const name = describeLocation(location);
  const store = await openStore(location);
  try {
    const letters = await store.deadLetters();
    if (flags.json === true) {
      io.stdout.write(
        `${JSON.stringify({ db: name, deadLetters: letters.map((d) => ({ receivedAt: isoUtc(d.receivedAtMs), reason: d.reason, topic: d.topic, message: d.message })) }, null, 2)}\n`,
      );
      return 0;
    }
    for (const d of letters)
      io.stdout.write(
        `${isoUtc(d.receivedAtMs)}  ${printable(d.reason).padEnd(20)}  ${printable(d.topic)}  ${printable(d.message)}\n`,
      );
    io.stderr.write(`${letters.length} dead letter(s) in ${name}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * Topic and message come from whoever published (a MAC, a topic level, a decode error that
 * quotes the payload): a raw newline would forge a record of its own and an ANSI escape
 * would drive the reader's terminal. C0/C1 controls, DEL, line/paragraph separators and
 * bidi overrides are written as escapes, and the backslash too so the output stays unambiguous.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    if (c === '\\') return '\\\\';
    const named = NAMED[c];
    if (named !== undefined) return named;
    const code = c.codePointAt(0) as number;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\\\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
