/**
 * The bench's receiver, in a process of its own (`webhook-receiver.ts [secret [ndjson]]`, an empty secret: none): what
 * `occusim receive --secret S --out FILE` runs; prints its port, serves until killed.
 */
import { startReceiver } from '../src/webhooks/receiver.js';

const secret = process.argv[2];
const r = await startReceiver({ port: 0, secrets: secret ? [secret] : [], out: process.argv[3] ?? null });
process.stdout.write(`${r.port}\n`);
// A normal exit on the bench's kill, so a `--cpu-prof` profile is written.
process.on('SIGTERM', () => process.exit(0));
