import { organisationsFromScenario } from '../assets/from-scenario.js';
import { platformConfig, type PlatformConfig } from '../platform/config.js';
import type { PlatformWebhookOptions } from '../platform/platform.js';
import type { PlatformFaultTimes } from '../platform/platform-faults.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { SimulatorConfig } from './config.js';

/** The platform a run starts: its organisations, store, broker and API from the run's config and model. */
export function runPlatformConfig(model: ScenarioModel, config: SimulatorConfig): PlatformConfig {
  const shard = config.shard;
  return platformConfig({
    ...config.platform,
    organisations: organisationsFromScenario(model),
    startMs: model.startMs,
    tickMs: model.tickMs,
    store: config.store,
    removeTemporaryStore: !config.keepStore,
    storePolicy: config.storePolicy,
    // A shard's store holds its slice only: resumed by another slice (or unsharded) it would mix runs.
    runKey: `${model.name}|${model.seed}|${model.startMs}${shard ? `|shard ${shard.index}/${shard.count}` : ''}`,
    // A resumed run sends every batch again from its start: its store forgets the previous end's drain.
    runEndMs: model.startMs + model.durationMs,
    mqtt: config.mqtt,
    brokerUrl: config.brokerUrl,
    ownHivesOnly: shard !== null,
    api: config.api,
    webhooks: webhookOptions(model, config),
    faults: platformFaultTimes(model),
  });
}

/** The schedule's faults on the platform itself (platform-faults.ts), or null when it has none. */
export function platformFaultTimes(model: ScenarioModel): PlatformFaultTimes | null {
  const faults = model.faults ?? [];
  const storeAway = faults.flatMap((f) =>
    f.kind === 'store_restart' ? [{ fromMs: f.atMs, toMs: f.atMs + f.durationMs }] : [],
  );
  const ingestKills = faults.flatMap((f) => (f.kind === 'ingest_kill' ? [f.atMs] : []));
  return storeAway.length + ingestKills.length > 0 ? { storeAway, ingestKills } : null;
}

/** The scenario's `webhooks:` entries as the platform creates them, each named by its place in the file. */
export function declaredWebhooks(model: ScenarioModel): NonNullable<PlatformWebhookOptions['declared']> {
  return (model.webhooks ?? []).map((w, i) => ({
    orgId: model.org.id,
    src: `${model.file} webhooks[${i}]`,
    input: {
      name: w.name,
      eventTypes: w.eventTypes,
      url: w.url,
      filters: w.filters,
      secret: w.secret,
      sendOnValueChange: w.sendOnValueChange,
      httpTimeoutS: w.httpTimeoutS,
    },
    ...(w.concurrency !== undefined ? { concurrency: w.concurrency } : {}),
    ...(w.faults !== undefined ? { faults: w.faults } : {}),
    ...(w.storm !== undefined ? { storm: w.storm } : {}),
  }));
}

/**
 * The scenario's `webhooks:` and the caller's webhook options together; the retry jitter and
 * derived secrets follow the run's seed unless the caller pins them. Null: no webhooks.
 */
function webhookOptions(
  model: ScenarioModel,
  config: SimulatorConfig,
): Omit<PlatformWebhookOptions, 'wallTime'> | null {
  const declared = declaredWebhooks(model);
  const given = config.webhooks;
  if (!given && declared.length === 0) return null;
  const down = (model.faults ?? []).flatMap((f) =>
    f.kind === 'webhook_down' ? [{ fromMs: f.atMs, toMs: f.atMs + f.durationMs, webhook: f.webhook, src: f.src }] : [],
  );
  return {
    seed: model.seed,
    ...given,
    ...(down.length > 0 ? { down } : {}),
    allow: [...(model.webhookAllow ?? []), ...(given?.allow ?? [])],
    declared: [...declared, ...(given?.declared ?? [])],
  };
}
