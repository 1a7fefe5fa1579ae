import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { findBinary } from '../support/external-binaries.js';

/**
 * A Debian mosquitto on a free localhost port, anonymous (an "external broker" for tests).
 * Callers guard their suite with `describeWithBinaries(['mosquitto'], …)` (test/support).
 */
export async function startMosquitto(): Promise<{
  url: string;
  stop(): void;
  restart(downMs?: number): Promise<void>;
  /** The broker's process id (for the benches' CPU and RSS figures). */
  pid(): number | undefined;
}> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  const dir = mkdtempSync(join(tmpdir(), 'occusim-mosquitto-'));
  writeFileSync(join(dir, 'm.conf'), `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  const launch = (): ChildProcess =>
    spawn(findBinary('mosquitto') ?? '/usr/sbin/mosquitto', ['-c', join(dir, 'm.conf')], { stdio: 'ignore' });
  let proc = launch();
  const url = `mqtt://127.0.0.1:${port}`;
  const ready = async (): Promise<boolean> => {
    for (let i = 0; i < 50; i++) {
      try {
        await (await connectAsync(url, { reconnectPeriod: 0, connectTimeout: 500 }, false)).endAsync();
        return true;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return false;
  };
  if (await ready()) {
    return {
      url,
      stop: () => void proc.kill('SIGTERM'),
      pid: () => proc.pid,
      // The broker-restart fault on a real broker: every connection and (persistence false) every queued message gone, the same port again.
      async restart(downMs = 500) {
        const exited = new Promise<void>((r) => proc.once('exit', () => r()));
        proc.kill('SIGTERM');
        await exited;
        await new Promise((r) => setTimeout(r, downMs));
        proc = launch();
        if (!(await ready())) throw new Error('mosquitto did not come back');
      },
    };
  }
  proc.kill('SIGTERM');
  throw new Error('mosquitto did not start');
}
