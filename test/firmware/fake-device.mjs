/* global process, setTimeout, console -- a plain Node script, outside the TypeScript project */
// A device under test, outside the package: plain JavaScript with mqtt.js only, following
// docs/firmware.md step 3. Usage:
//   node fake-device.mjs <broker url> <credentials.json> <vector dir>
// It logs in as the first hive of `occusim credentials`, subscribes to its ack topic,
// publishes the firmware-*-uplink.bin and firmware-*-heartbeat.bin vectors in order and waits
// for the ack of its last seq. Prints one JSON line: { acked, published }.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import mqtt from 'mqtt';

const [url, credentialsFile, vectorDir] = process.argv.slice(2);
const hive = JSON.parse(readFileSync(credentialsFile, 'utf8')).hives[0];
const files = readdirSync(vectorDir)
  .filter((f) => /^firmware-\d+-(uplink|heartbeat)\.bin$/.test(f))
  .sort();
const uplinks = files.filter((f) => f.includes('uplink')).length;

// UplinkAck field 2 (acked_seq) is a varint after field 1 (hive_serial, length-delimited).
function ackedSeq(payload) {
  let i = 0;
  while (i < payload.length) {
    const key = payload[i++];
    const field = key >> 3;
    if ((key & 7) === 2) {
      const len = payload[i++];
      i += len;
    } else if ((key & 7) === 0) {
      let v = 0;
      let shift = 0;
      let b;
      do {
        b = payload[i++];
        v += (b & 0x7f) * 2 ** shift;
        shift += 7;
      } while (b & 0x80);
      if (field === 2) return v;
    } else return -1;
  }
  return 0;
}

const client = await mqtt.connectAsync(url, {
  protocolVersion: 4,
  username: hive.username,
  password: hive.password,
  clientId: `hive-${hive.serial}`,
  clean: true,
  reconnectPeriod: 0,
});
let acked = 0;
const allAcked = new Promise((resolve) => {
  client.on('message', (_topic, payload) => {
    acked = Math.max(acked, ackedSeq(payload));
    if (acked >= uplinks) resolve();
  });
});
await client.subscribeAsync(hive.subscribe.ack, { qos: 1 });
for (const f of files) {
  const topic = f.includes('uplink') ? hive.publish.uplink : hive.publish.heartbeat;
  await client.publishAsync(topic, readFileSync(join(vectorDir, f)), { qos: 1 });
}
await Promise.race([allAcked, new Promise((r) => setTimeout(r, 10_000))]);
await client.endAsync();
console.log(JSON.stringify({ acked, published: files.length }));
process.exit(acked >= uplinks ? 0 : 1);
