/**
 * A cloud in its own process, for the SIGKILL/restart test: `node --import tsx
 * cloud-process.ts <brokerUrl> <password> <dbPath>`. It runs the embedded cloud of the tiny
 * fixture model against the broker and obeys IPC commands: `advance <ms>`, `finish`.
 */
import { catalogueFromScenario } from '../../../src/assets/from-scenario.js';
import { startCloud } from '../../../src/cloud/cloud.js';
import { sqliteStore } from '../../../src/store/sqlite-async.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { T0, tinyModel } from '../fixture.js';

const [brokerUrl = '', password = '', dbPath = ''] = process.argv.slice(2);
const clock = new VirtualClock(T0 + 3_600_000);
const cloud = await startCloud({
  brokerUrl,
  username: 'occusim-cloud',
  password,
  catalogue: catalogueFromScenario(tinyModel()),
  tickMs: tinyModel().tickMs,
  clock,
  store: sqliteStore(dbPath),
});
process.on('message', (msg: string) => {
  const [cmd, arg] = msg.split(' ');
  if (cmd === 'advance') void cloud.advance(Number(arg));
  if (cmd === 'finish') {
    void cloud
      .finish()
      .then(() => cloud.close())
      .then(() => {
        process.send?.('done');
        process.disconnect?.();
      });
  }
});
process.send?.('ready');
