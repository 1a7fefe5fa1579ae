import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A real PostgreSQL from the Debian package for tests (as test/broker/mosquitto.ts starts a
 * real mosquitto): `initdb` into a temporary directory, `postgres` on a free 127.0.0.1 port
 * with its unix socket in that directory, fsync off (a test's database need not survive a
 * power cut), removed by `stop()`. PostgreSQL refuses to run as root, so as root the server
 * runs as `nobody` (the directory is handed to it). Where the binaries are absent the tests
 * skip with the reason printed; under CI=true that is a failure (`.ci/run` installs them).
 */
const BIN_ROOT = '/usr/lib/postgresql';

/** The newest installed PostgreSQL's bin directory, or null. */
export function postgresBinDir(): string | null {
  if (!existsSync(BIN_ROOT)) return null;
  const versions = readdirSync(BIN_ROOT)
    .filter((v) => existsSync(join(BIN_ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(BIN_ROOT, versions[0], 'bin');
}

/** Why PostgreSQL tests cannot run here, or null when they can. Throws under CI=true: CI must run them. */
export function postgresSkipReason(): string | null {
  if (postgresBinDir() !== null) return null;
  const reason = `PostgreSQL tests skipped: no ${BIN_ROOT}/*/bin/initdb (apt-get install postgresql)`;
  if (process.env.CI === 'true') throw new Error(`${reason} — CI=true requires them`);
  console.warn(reason);
  return reason;
}

export interface TestPostgres {
  /** The server's admin URL (database `postgres`). */
  url: string;
  /** A new empty database on the server; its URL. */
  createDatabase(): Promise<string>;
  /** Fast shutdown (SIGINT: sessions ended, transactions rolled back), then the same server again on the same port. */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
  /** The postmaster's process id (its backends are its children): for the benches' CPU and RSS figures. */
  pid(): number | undefined;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** The unprivileged account to run as when this process is root. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  return {
    uid: Number(execFileSync('id', ['-u', 'nobody']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'nobody']).toString().trim()),
  };
}

let counter = 0;

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (bin === null) throw new Error('PostgreSQL binaries not found');
  const dir = mkdtempSync(join(tmpdir(), 'occusim-pg-'));
  const user = runAs();
  if (user) chownSync(dir, user.uid, user.gid);
  const ids = user ? { uid: user.uid, gid: user.gid } : {};
  const data = join(dir, 'data');
  execFileSync(
    join(bin, 'initdb'),
    ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'],
    { stdio: 'ignore', cwd: dir, ...ids },
  );
  const port = await freePort();
  const launch = (): ChildProcess =>
    spawn(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-k',
        dir,
        '-p',
        String(port),
        '-h',
        '127.0.0.1',
        '-F',
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
      ],
      {
        stdio: 'ignore',
        cwd: dir,
        ...ids,
      },
    );
  let proc: ChildProcess = launch();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const accepting = async (): Promise<boolean> => {
    for (let i = 0; i < 100; i++) {
      const c = new pg.Client({ connectionString: url });
      try {
        await c.connect();
        await c.end();
        return true;
      } catch {
        await c.end().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return false;
  };
  const restart = async (downMs = 500): Promise<void> => {
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    proc.kill('SIGINT');
    await exited;
    await new Promise((r) => setTimeout(r, downMs));
    proc = launch();
    if (!(await accepting())) throw new Error('PostgreSQL did not come back');
  };
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null) {
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.kill('SIGINT'); // fast shutdown
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 100; i++) {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.end();
      return {
        url,
        stop,
        restart,
        pid: () => proc.pid,
        async createDatabase() {
          const name = `occusim_${process.pid}_${++counter}`;
          const admin = new pg.Client({ connectionString: url });
          await admin.connect();
          try {
            await admin.query(`CREATE DATABASE ${name}`);
          } finally {
            await admin.end();
          }
          return `postgres://postgres@127.0.0.1:${port}/${name}`;
        },
      };
    } catch {
      await c.end().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await stop();
  throw new Error('PostgreSQL did not start');
}
