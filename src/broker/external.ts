import { AppError, ErrorCodes } from '../core/errors.js';
import type { EmbeddedBroker } from './aedes-broker.js';

/**
 * An external MQTT broker given by URL (`--broker mqtt://host:port`), behind the same
 * interface as the embedded one. occusim does not manage it: its credentials and ACL are the
 * operator's (hives log in as serial + seeded password, the cloud as `occusim-cloud`), and
 * it keeps no counters here.
 */
export function externalBroker(url: string): EmbeddedBroker {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AppError(ErrorCodes.USAGE, `--broker must be a URL like mqtt://host:1883, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'mqtt:' && parsed.protocol !== 'tcp:')
    throw new AppError(ErrorCodes.USAGE, `--broker: only mqtt:// URLs are supported, got ${parsed.protocol}`);
  return {
    url,
    port: Number(parsed.port || 1883),
    stats: () => ({ connections: 0, published: 0, refusedAuth: 0, refusedAcl: 0 }),
    close: () => Promise.resolve(),
  };
}

/**
 * Restarts the embedded broker and waits until the cloud ingest and every hive have
 * resubscribed (mqtt.js clients reconnect and resubscribe on their own).
 */
export async function restartAndWaitForClients(
  broker: EmbeddedBroker,
  filters: readonly string[],
  timeoutMs = 15_000,
): Promise<void> {
  if (!broker.restart || !broker.waitForSubscriptions)
    throw new AppError(ErrorCodes.NOT_IMPLEMENTED, 'broker_restart faults need the embedded broker (not --broker)');
  await broker.restart();
  await broker.waitForSubscriptions(filters, timeoutMs);
}
