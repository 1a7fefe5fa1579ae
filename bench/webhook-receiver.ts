/**
 * The bench's receiver, in a process of its own (`webhook-receiver.ts [secret [ndjson]]`, an empty secret: none): what
 * `occusim receive --secret S --out FILE` runs; prints its port, serves until killed.
 * `OCCUSIM_BENCH_RECEIVER_MODULE=/path/to/receiver.ts` runs another copy of the receiver (an
 * older commit's, to interleave old and new code in one machine state).
 */
import type { startReceiver as StartReceiver } from '../src/webhooks/receiver.js';

const module = process.env.OCCUSIM_BENCH_RECEIVER_MODULE || '../src/webhooks/receiver.js';
const { startReceiver } = (await import(module)) as { startReceiver: typeof StartReceiver };
const secret = process.argv[2];
const r = await startReceiver({ port: 0, secrets: secret ? [secret] : [], out: process.argv[3] || null });
process.stdout.write(`${r.port}\n`);
// A normal exit on the bench's kill, so a `--cpu-prof` profile is written.
process.on('SIGTERM', () => process.exit(0));
