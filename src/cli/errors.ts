import { ERROR_TABLE } from '../core/error-codes.js';
import { isAppError } from '../core/errors.js';
import type { Io } from './io.js';

/** Errno codes that describe the environment or the input, not a bug. */
const ENVIRONMENT: Readonly<Record<string, string>> = {
  EADDRINUSE: 'pick another port (--port, --mqtt-port), or 0 for a free one',
  EADDRNOTAVAIL: 'address not available on this machine (--host)',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EPIPE: 'output closed (broken pipe)',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
};

/**
 * One place maps what a command threw to what the user sees and the exit code: the
 * caller's mistakes and the environment's problems (a missing directory, a port in use, an
 * unreadable file, a closed stdout) are one line and exit 2; anything else is an internal
 * error, one line and exit 1, with the stack only under `--debug`.
 */
export function exitCodeOfError(err: unknown, io: Io, debug: boolean): number {
  const errno = errnoOf(err);
  if (isAppError(err)) {
    // The table says which codes are the caller's mistake (exit 2, core/error-codes.ts).
    const usage = (ERROR_TABLE[err.code] as { exit?: number }).exit === 2 || errno !== null;
    // Scenario diagnostics are a list, one located line each; other messages are one line.
    const text = err.code === 'SCENARIO_INVALID' ? err.message : firstLine(err.message);
    const hint =
      errno !== null && ENVIRONMENT[errno] !== undefined && errno.startsWith('EADDR') ? ` — ${ENVIRONMENT[errno]}` : '';
    io.stderr.write(`occusim: ${text}${hint}\n`);
    if (debug) io.stderr.write(`${stackOf(err)}\n`);
    return usage ? 2 : 1;
  }
  if (errno !== null) {
    io.stderr.write(
      `occusim: ${firstLine((err as Error).message)}${ENVIRONMENT[errno] === undefined ? '' : ` — ${ENVIRONMENT[errno]}`}\n`,
    );
    if (debug) io.stderr.write(`${stackOf(err)}\n`);
    return 2;
  }
  io.stderr.write(
    `occusim: internal error: ${firstLine(err instanceof Error ? err.message : String(err))}${debug ? '' : ' (run with --debug for the stack trace)'}\n`,
  );
  if (debug) io.stderr.write(`${stackOf(err)}\n`);
  return 1;
}

/** The errno code of an error or of one of its causes (a listener's EADDRINUSE wrapped by the broker). */
export function errnoOf(err: unknown): string | null {
  for (
    let e: unknown = err, depth = 0;
    e !== undefined && e !== null && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && Object.hasOwn(ENVIRONMENT, code)) return code;
    // Across a worker thread only the message survives.
    const m = /\b(EADDRINUSE|EADDRNOTAVAIL|EACCES)\b/.exec(e instanceof Error ? e.message : '');
    if (m) return m[1] as string;
  }
  return null;
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 400 ? `${line.slice(0, 400)}…` : line;
}

function stackOf(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/**
 * A closed stdout (`occusim schema | head`) raises EPIPE on a later write: one line on
 * stderr and exit 2, instead of an uncaught exception. For the process's own streams.
 */
export function exitOnClosedStdout(
  stdout: NodeJS.WriteStream,
  stderr: NodeJS.WriteStream,
  exit: (code: number) => void,
): void {
  stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') {
      stderr.write('occusim: stdout closed before the output ended (EPIPE)\n');
      exit(2);
      return;
    }
    stderr.write(`occusim: cannot write to stdout: ${err.message}\n`);
    exit(2);
  });
}
