import type { AssetCatalogue } from '../assets/catalogue.js';
import { ValueCounts } from '../core/value-counts.js';
import { uplinkTopic } from '../core/topics.js';
import { inspectUplink } from './ingest.js';
import { ReadStatus, UplinkReader } from './kernel/uplink-reader.js';
import { buildRegistry } from './registry.js';
import type { Store } from '../store/port.js';

/**
 * Sensing → stored latency of every stored packet, from the store alone: each accepted packet of
 * each stored batch payload, its batch's received instant minus its sensing instant — what a
 * pipeline adds to its latencies when it stores the batch (`CloudPipeline`). For a sharded run
 * whose ingest processes stamp a batch with its send instant (`receivedAtSent`), these are the
 * latencies one process would have measured (`report merge --store`, docs/scale-out.md).
 * Payloads are read as the pipeline reads them: the fast reader, and `inspectUplink` for a
 * payload it does not find clean (a packet of an unknown sensor is not counted).
 */
export async function storedLatencies(
  catalogue: AssetCatalogue,
  store: Pick<Store, 'payloadsSensedIn'>,
): Promise<ValueCounts> {
  const registry = buildRegistry(catalogue.snapshot());
  const r = new UplinkReader(registry);
  const out = new ValueCounts();
  for (const p of await store.payloadsSensedIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) {
    const topic = uplinkTopic(p.hiveSerial);
    const hive = r.hiveOfTopic(topic);
    const status = r.read(hive, p.payload);
    if (status !== ReadStatus.Clean) {
      const v = inspectUplink(registry, { topic, payload: p.payload, receivedAtMs: p.receivedAtMs });
      if (v.kind === 'rejected') continue;
      if (status === ReadStatus.Message) r.fill(hive, v.packets);
    }
    for (let i = 0; i < r.count; i++)
      if ((r.sensor[i] as number) >= 0) out.add(p.receivedAtMs - (r.sensedAt[i] as number));
  }
  return out;
}
