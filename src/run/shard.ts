import { AppError, ErrorCodes } from '../core/errors.js';
import type { ScenarioModel } from '../scenario/model.js';
import type { CloudCounters } from '../cloud/cloud.js';
import type { DeliveryReport } from '../hive/ledger.js';

/**
 * Simulator shards (docs/scale-out.md): slice `index` of `count` simulates only some hives —
 * with their sensors and meshes — while every person still moves through the whole world, so
 * the shards together publish exactly what one unsharded run publishes.
 *
 * Hives are dealt by their serial, sorted byte-wise: the k-th serial (0-based) goes to shard
 * (k mod count) + 1. The serial is what a hive is known by on the broker and in the store, and
 * it does not move when a scenario's hives are reordered or renamed.
 */
export interface ShardSpec {
  /** 1-based. */
  index: number;
  count: number;
}

/** What a shard's report says about its slice. */
export interface ShardInfo extends ShardSpec {
  /** Serials of the slice's hives, sorted. */
  hives: string[];
  /** Every hive of the scenario: the merge checks the slices cover it once. */
  totalHives: number;
}

/** `i/n` as written after `--shard`; null when it is not of that form. */
export function parseShard(text: string): ShardSpec | null {
  const m = /^(\d{1,6})\/(\d{1,6})$/.exec(text.trim());
  if (!m) return null;
  return { index: Number(m[1]), count: Number(m[2]) };
}

/** Refuses a slice that does not exist for this scenario (USAGE: the caller's mistake). */
export function checkShard(shard: ShardSpec, hives: number): void {
  const { index, count } = shard;
  if (!Number.isInteger(index) || !Number.isInteger(count) || count < 1 || index < 1 || index > count) {
    throw new AppError(ErrorCodes.USAGE, `--shard ${index}/${count}: want i/n with 1 ≤ i ≤ n`);
  }
  if (count > hives)
    throw new AppError(
      ErrorCodes.USAGE,
      `--shard ${index}/${count}: the scenario has ${hives} hive(s), so at most ${hives} shards`,
    );
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Serials of shard `index` of `count`, sorted. */
export function shardSerials(model: ScenarioModel, shard: ShardSpec): string[] {
  checkShard(shard, model.hives.length);
  return model.hives
    .map((h) => h.serial)
    .sort(byteOrder)
    .filter((_, k) => k % shard.count === shard.index - 1);
}

/**
 * The scenario as one shard simulates it: its hives and their sensors; floors, rooms, doors,
 * people, meetings and faults unchanged (the world and its truth stay whole). Faults naming
 * other shards' hives are kept: nothing here asks for them.
 */
export function shardModel(model: ScenarioModel, shard: ShardSpec): { model: ScenarioModel; info: ShardInfo } {
  const serials = shardSerials(model, shard);
  const mine = new Set(serials);
  const hives = model.hives.filter((h) => mine.has(h.serial));
  const hiveIds = new Set(hives.map((h) => h.id));
  const sensors = model.sensors.filter((s) => hiveIds.has(s.hiveId));
  const sensorIds = new Set(sensors.map((s) => s.id));
  const floors = model.floors.map((f) => ({
    ...f,
    hiveIds: f.hiveIds.filter((id) => hiveIds.has(id)),
    sensorIds: f.sensorIds.filter((id) => sensorIds.has(id)),
  }));
  return {
    model: { ...model, floors, hives, sensors },
    info: { index: shard.index, count: shard.count, hives: serials, totalHives: model.hives.length },
  };
}

/**
 * A shard ingested by other processes (`--external-ingest`) knows what was stored from its
 * hives' acks: an ack means the batch is in the shared store. Packets in acked batches count as
 * stored, the hives' re-sent batches as duplicates, and the hives' batches as stored batches (the
 * hive ledger keeps no count of acked batches: this is exact when no packet is lost, and a loss
 * shows in the packets either way); the ingest processes print their own tallies.
 */
export function countersFromAcks(
  d: DeliveryReport,
): Pick<CloudCounters, 'batchesProcessed' | 'duplicateBatches' | 'packetsProcessed'> {
  const sum = (k: 'batches' | 'duplicated' | 'acked'): number => d.hives.reduce((a, h) => a + h[k], 0);
  return { batchesProcessed: sum('batches'), duplicateBatches: sum('duplicated'), packetsProcessed: sum('acked') };
}
