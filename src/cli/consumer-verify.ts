import { createReadStream, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { AppError, ErrorCodes, isAppError } from '../core/errors.js';
import type { StateRow } from '../webhooks/consumer-state.js';
import {
  compareStates,
  FIRST,
  parseStateLine,
  passed,
  type Difference,
  type Verdict,
} from '../webhooks/consumer-verify.js';
import type { Flags, Io } from './io.js';
import { junitXml } from './junit.js';

/**
 * `occusim consumer-verify --expected expected.ndjson (--actual state.ndjson | --actual-url URL)
 * [--subscription NAME] [--junit FILE] [--json]`: the verdict on a consumer's state (issue 29
 * item 2). Exit 0 when it holds exactly the expected rows, 1 on any difference, 2 for a usage or
 * input error (a malformed line names file:line and the field).
 */
const usage = (m: string): AppError => new AppError(ErrorCodes.USAGE, m);

/** Rows read from one source at most (a state of a day of a large fleet is a few million). */
const MAX_ROWS = 20_000_000;
/** Bytes read from `--actual-url` at most. */
const MAX_URL_BYTES = 1 << 30;

export async function consumerVerifyCommand(args: readonly string[], flags: Flags, io: Io): Promise<number> {
  if (args.length > 0) throw usage('occusim consumer-verify takes no positional argument');
  if (typeof flags.expected !== 'string')
    throw usage('--expected FILE is required (written by occusim run --consumer-expect)');
  const file = typeof flags.actual === 'string' ? flags.actual : null;
  const url = typeof flags['actual-url'] === 'string' ? flags['actual-url'] : null;
  if ((file === null) === (url === null)) throw usage('give one of --actual FILE or --actual-url URL');
  const expected = await rowsOf(lines(createReadStream(flags.expected)), flags.expected);
  const subscription = pickSubscription(expected, typeof flags.subscription === 'string' ? flags.subscription : null);
  const actual = await rowsOf(
    file !== null ? lines(createReadStream(file)) : await linesOfUrl(url as string),
    file ?? (url as string),
  );
  const verdict = compareStates(
    expected.filter((r) => subscription === null || r.subscription === subscription),
    actual,
  );
  if (flags.json === true)
    io.stdout.write(`${JSON.stringify({ subscription, passed: passed(verdict), ...verdict })}\n`);
  else io.stdout.write(formatVerdict(verdict, subscription));
  if (typeof flags.junit === 'string') writeFileSync(flags.junit, junitOf(verdict, subscription));
  return passed(verdict) ? 0 : 1;
}

function lines(stream: NodeJS.ReadableStream): AsyncIterable<string> {
  return createInterface({ input: stream, crlfDelay: Infinity });
}

async function rowsOf(source: AsyncIterable<string>, name: string): Promise<StateRow[]> {
  const rows: StateRow[] = [];
  let n = 0;
  try {
    for await (const text of source) {
      const row = parseStateLine(text, name, ++n);
      if (row === null) continue;
      if (rows.length >= MAX_ROWS) throw usage(`${name}: more than ${MAX_ROWS.toLocaleString('en-US')} rows`);
      rows.push(row);
    }
  } catch (err) {
    if (isAppError(err, ErrorCodes.CONSUMER_STATE_INVALID)) throw usage(err.message);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw usage(`${name}: no such file`);
    throw err;
  }
  return rows;
}

async function linesOfUrl(url: string): Promise<AsyncIterable<string>> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usage(`--actual-url must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw usage(`--actual-url must be an http(s) URL, got ${JSON.stringify(url)}`);
  let res: Response;
  try {
    res = await fetch(parsed, { redirect: 'error' });
  } catch (err) {
    throw usage(
      `--actual-url ${url}: ${(err as Error).message}${(err as Error).cause ? ` (${String((err as { cause: unknown }).cause)})` : ''}`,
    );
  }
  if (res.status !== 200 || !res.body)
    throw usage(`--actual-url ${url}: HTTP ${res.status}, expected 200 with the NDJSON state`);
  let bytes = 0;
  const body = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  body.on('data', (c: Buffer) => {
    bytes += c.length;
    if (bytes > MAX_URL_BYTES) body.destroy(usage(`--actual-url ${url}: more than ${MAX_URL_BYTES} bytes`));
  });
  return lines(body);
}

/** The subscription whose rows are compared: the one named, or the only one the file holds. */
function pickSubscription(expected: readonly StateRow[], named: string | null): string | null {
  const names = [...new Set(expected.map((r) => r.subscription ?? ''))].sort();
  if (named !== null) {
    if (!names.includes(named))
      throw usage(
        `--subscription ${JSON.stringify(named)}: the expected file holds ${names.map((n) => JSON.stringify(n)).join(', ') || 'no rows'}`,
      );
    return named;
  }
  if (names.length > 1)
    throw usage(`the expected file holds several subscriptions (${names.join(', ')}): name one with --subscription`);
  return names[0] === undefined || names[0] === '' ? null : names[0];
}

function place(d: Difference): string {
  return `${d.type} ${d.subject} ${new Date(d.minute).toISOString().slice(0, 16)}Z`;
}

const show = (v: unknown): string => JSON.stringify(v) ?? 'undefined';

export function formatVerdict(v: Verdict, subscription: string | null): string {
  const out = [
    `consumer-verify${subscription !== null ? ` (${subscription})` : ''}: ${passed(v) ? 'PASSED' : 'FAILED'} — expected ${v.expected} rows, actual ${v.actual}: ${v.matching} matching, ${v.missing} missing, ${v.extra} extra, ${v.wrong} wrong`,
  ];
  const list = (title: string, ds: readonly Difference[], total: number, text: (d: Difference) => string): void => {
    if (total === 0) return;
    out.push(`  ${title} (first ${Math.min(FIRST, total)} of ${total}):`);
    for (const d of ds) out.push(`    ${place(d)}: ${text(d)}`);
  };
  const truth = (d: Difference): string => (d.truth !== undefined && d.truth !== null ? ` (truth ${d.truth})` : '');
  list('wrong', v.first.wrong, v.wrong, (d) => `expected ${show(d.expected)}, got ${show(d.actual)}${truth(d)}`);
  list('missing', v.first.missing, v.missing, (d) => `expected ${show(d.expected)}${truth(d)}`);
  list('extra', v.first.extra, v.extra, (d) => `got ${show(d.actual)}, not expected`);
  return `${out.join('\n')}\n`;
}

function junitOf(v: Verdict, subscription: string | null): string {
  const classname = `consumer-verify${subscription !== null ? `.${subscription}` : ''}`;
  const kinds = [
    { name: 'no wrong values', n: v.wrong, ds: v.first.wrong },
    { name: 'no missing rows', n: v.missing, ds: v.first.missing },
    { name: 'no extra rows', n: v.extra, ds: v.first.extra },
  ];
  return junitXml([
    {
      name: 'consumer state',
      cases: kinds.map((k) => ({
        name: k.name,
        classname,
        ...(k.n > 0
          ? {
              failure: {
                message: `${k.n} of ${v.expected} expected rows`,
                details: k.ds.map((d) => `${place(d)}: expected ${show(d.expected)}, got ${show(d.actual)}`).join('\n'),
              },
            }
          : {}),
      })),
    },
  ]);
}
