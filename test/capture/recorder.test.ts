import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeCapture } from '../../src/capture/format.js';
import { decodeAck, decodeUplink } from '../../src/proto/codec.js';
import { runScenario } from '../../src/run/run-scenario.js';

/**
 * `run --record` at `--speed max` is a deterministic data source too: the capture's stamps are
 * the platform's time (the delivery's instant), not the simulator's clock, which runs ahead of
 * the deliveries by however far the frame workers and the event loop let it.
 */
const QUICKSTART = new URL('../../scenarios/quickstart.yaml', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'occusim-recorder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function record(name: string, workers: number): Promise<Buffer> {
  const path = join(dir, `${name}.occap`);
  await runScenario(QUICKSTART, { fidelity: 'frame', workers, durationMs: 6 * 60_000, record: path, keepStore: false });
  return readFileSync(path);
}

describe('capture recording', () => {
  it('gives the same bytes run after run at frame fidelity, with 2 frame workers or none', async () => {
    const a = await record('a', 2);
    const b = await record('b', 2);
    const c = await record('c', 0);
    expect(b.equals(a)).toBe(true);
    expect(c.equals(a)).toBe(true);

    // The stamps mean something: an uplink is accepted at the instant its hive sent it, and
    // its ack at the instant the platform acknowledged it.
    const { messages } = decodeCapture(a);
    let uplinks = 0;
    let acks = 0;
    for (const m of messages) {
      if (m.topic.endsWith('/uplink')) {
        expect(m.t).toBe(decodeUplink(m.payload).sentAtMs);
        uplinks++;
      } else if (m.topic.endsWith('/ack')) {
        expect(m.t).toBe(decodeAck(m.payload).ackedAtMs);
        acks++;
      }
    }
    expect(uplinks).toBeGreaterThan(20);
    expect(acks).toBe(uplinks);
  }, 120_000);
});
