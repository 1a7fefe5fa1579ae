import { AppError, ErrorCodes } from '../core/errors.js';
import { DEDUPE_IDS, startReceiver, type ReceiverStats } from '../webhooks/receiver.js';
import { DEFAULT_TOLERANCE_S, secretKey } from '../webhooks/signing.js';
import { systemWallTime } from '../core/clock.js';
import { isWebhookError } from '../webhooks/errors.js';
import { APPLY_MODES, type ApplyMode } from '../webhooks/consumer-state.js';
import type { Flags, Io } from './io.js';
import { hostOf } from './options.js';

/**
 * `occusim receive --port N [--secret whsec_…] [--out events.ndjson] [--fail-rate P]
 * [--latency MS] [--seed S] [--dedupe-ids N] [--no-timestamp-check] [--apply MODE [--state FILE]]`: a webhook endpoint
 * (webhooks/receiver.ts) until SIGINT or SIGTERM; a live line of counts per type on stderr,
 * the final counts as JSON on stdout. With a secret it verifies as a standard consumer does:
 * `webhook-timestamp` within 5 minutes of this machine's clock (the platform's default
 * timestamps are wall time), unless `--no-timestamp-check` (a run's `--webhook-timestamps simulated`).
 * `--apply naive|first-wins|idempotent` holds the state such a consumer would (webhooks/consumer-state.ts),
 * served at `GET /state` and written to `--state FILE` when it stops: what `occusim consumer-verify` judges.
 */
const usage = (m: string): AppError => new AppError(ErrorCodes.USAGE, m);

function num(flags: Flags, name: string, lo: number, hi: number, fallback: number): number {
  const v = flags[name];
  if (typeof v !== 'string') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < lo || n > hi)
    throw usage(`--${name} must be a number in ${lo}..${hi}, got ${JSON.stringify(v)}`);
  return n;
}

export function line(s: ReceiverStats): string {
  const types = Object.entries(s.byType)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([t, n]) => `${t} ${n}`)
    .join('  ');
  return `received ${s.unique} (dup ${s.duplicates}, failed ${s.failed}, bad sig ${s.badSignatures})  ${types}`;
}

function applyOf(flags: Flags): ApplyMode | null {
  const v = flags.apply;
  if (v === undefined) return null;
  if (typeof v !== 'string' || !(APPLY_MODES as readonly string[]).includes(v))
    throw usage(`--apply must be ${APPLY_MODES.join(', ')}, got ${JSON.stringify(v)}`);
  return v as ApplyMode;
}

export async function receiveCommand(
  args: readonly string[],
  flags: Flags,
  io: Io,
  signal?: AbortSignal,
): Promise<number> {
  if (args.length > 0) throw usage('occusim receive takes no positional argument');
  const secrets = typeof flags.secret === 'string' ? flags.secret.split(',') : [];
  try {
    secrets.forEach((s, i) => secretKey(s, `--secret[${i}]`));
  } catch (err) {
    if (isWebhookError(err)) throw usage(err.message);
    throw err;
  }
  const apply = applyOf(flags);
  if (typeof flags.state === 'string' && apply === null)
    throw usage('--state needs --apply naive|first-wins|idempotent: the state to write');
  const receiver = await startReceiver({
    port: num(flags, 'port', 0, 65535, 8787),
    host: hostOf(flags),
    secrets,
    out: typeof flags.out === 'string' ? flags.out : null,
    failRate: num(flags, 'fail-rate', 0, 1, 0),
    latencyMs: num(flags, 'latency', 0, 60_000, 0),
    seed: typeof flags.seed === 'string' ? flags.seed : 0,
    dedupeIds: num(flags, 'dedupe-ids', 1, 100_000_000, DEDUPE_IDS),
    // Commander keeps a negated option under its long name: true unless --no-timestamp-check was given.
    ...(apply !== null ? { apply } : {}),
    ...(typeof flags.state === 'string' ? { stateOut: flags.state } : {}),
    ...(flags['no-timestamp-check'] !== false
      ? { toleranceS: DEFAULT_TOLERANCE_S, nowS: () => Math.floor(systemWallTime() / 1000) }
      : {}),
  });
  const checked =
    secrets.length === 0
      ? ''
      : flags['no-timestamp-check'] !== false
        ? ` (verifying signatures, timestamps within ${DEFAULT_TOLERANCE_S} s)`
        : ' (verifying signatures, timestamps not checked)';
  io.stderr.write(
    `occusim receive: listening on ${receiver.url}${checked}${apply !== null ? `; holding a ${apply} consumer's state at ${receiver.url}state` : ''}\n`,
  );
  const live = setInterval(() => {
    if (io.stderr.isTTY) io.stderr.write(`\r${line(receiver.stats())}\u001b[K`);
  }, 500);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    signal?.addEventListener('abort', stop, { once: true });
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  clearInterval(live);
  await receiver.close();
  const s = receiver.stats();
  io.stderr.write(`\n${line(s)}\n`);
  io.stdout.write(`${JSON.stringify(s)}\n`);
  return 0;
}
