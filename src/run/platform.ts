import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type EmbeddedBroker } from '../broker/aedes-broker.js';
import { externalBroker } from '../broker/external.js';
import { startCloud, type Cloud } from '../cloud/cloud.js';
import type { Clock } from '../core/clock.js';
import { secretFor } from '../core/ids.js';
import { HiveBatcher } from '../hive/batcher.js';
import type { HiveEndpoint } from '../hive/delivery.js';
import { connectHive } from '../hive/mqtt-hive.js';
import type { ScenarioModel } from '../scenario/model.js';

/**
 * The running platform of one simulation: embedded broker, cloud ingest with its store, and
 * one MQTT link per hive. Started in order, closed in reverse.
 */
export type HiveRuntime = HiveEndpoint;

export interface Platform {
  readonly broker: EmbeddedBroker;
  readonly cloud: Cloud;
  /** By hive id, in scenario order. */
  readonly hives: ReadonlyMap<string, HiveRuntime>;
  readonly dbPath: string;
  close(): Promise<void>;
}

export interface PlatformOptions {
  dbPath: string | null;
  mqttPort: number;
  /** An external broker instead of the embedded one. */
  brokerUrl?: string | undefined;
  /** Sees every message the embedded broker accepts (capture recording). */
  onPublish?: ((topic: string, payload: Buffer) => void) | undefined;
  /** false: broker and cloud only, for real hives to connect to (`occusim serve`). */
  connectHives?: boolean;
}

const CLOUD_USER = 'occusim-cloud';

export async function startPlatform(model: ScenarioModel, clock: Clock, opts: PlatformOptions): Promise<Platform> {
  const cloudPassword = secretFor(model.seed, 'service', CLOUD_USER);
  const dbPath = opts.dbPath ?? join(mkdtempSync(join(tmpdir(), 'occusim-')), 'occusim.sqlite');
  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const c of closers.reverse()) await c();
  };
  try {
    const broker = opts.brokerUrl !== undefined ? externalBroker(opts.brokerUrl) : await startBroker({
      port: opts.mqttPort,
      hives: model.hives.map((h) => ({ serial: h.serial, password: h.password })),
      services: [{ username: CLOUD_USER, password: cloudPassword, role: 'cloud' }],
      ...(opts.onPublish ? { onPublish: opts.onPublish } : {}),
    });
    closers.push(() => broker.close());
    const cloud = await startCloud({ brokerUrl: broker.url, username: CLOUD_USER, password: cloudPassword, model, clock, dbPath });
    closers.push(() => cloud.close());
    const hives = new Map<string, HiveRuntime>();
    for (const h of opts.connectHives === false ? [] : model.hives) {
      const link = await connectHive({ brokerUrl: broker.url, serial: h.serial, password: h.password });
      closers.push(() => link.close());
      hives.set(h.id, { serial: h.serial, batcher: new HiveBatcher({ hiveSerial: h.serial }), link });
    }
    return { broker, cloud, hives, dbPath, close };
  } catch (err) {
    await close();
    throw err;
  }
}
