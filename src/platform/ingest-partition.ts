import type { FloorPartition } from '../cloud/pipeline.js';
import { AppError, ErrorCodes } from '../core/errors.js';

/**
 * Several ingest processes on one broker and one store (docs/scale-out.md): each stores and acks
 * whatever batches the broker's shared subscription hands it, and aggregates only the floors of
 * its partition. A floor belongs to partition (FNV-1a 32 of its id mod count) + 1: every process
 * decides alone, the same way, and a floor created through the API later has its owner at once
 * without moving any other floor. A space (room, zone, door) is on one floor, so each space's
 * minutes come from one process, computed from all its sensors.
 */
export interface IngestPartition {
  /** 1-based. */
  index: number;
  count: number;
}

/** `j/k` as written after `--partition`; refuses anything else (USAGE). */
export function parsePartition(text: string): IngestPartition {
  const m = /^(\d{1,6})\/(\d{1,6})$/.exec(text.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index < 1 || index > count)
    throw new AppError(ErrorCodes.USAGE, `--partition ${text}: want j/k with 1 ≤ j ≤ k`);
  return { index, count };
}

/** FNV-1a, 32 bits, over the id's UTF-16 code units: stable across processes and versions. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The 1-based partition of `count` that aggregates the floor. */
export function partitionOfFloor(count: number, floorId: string): number {
  return (fnv1a(floorId) % count) + 1;
}

/** Whether partition `p` aggregates the floor. */
export function ownsFloor(p: IngestPartition, floorId: string): boolean {
  return fnv1a(floorId) % p.count === p.index - 1;
}

/** The pipeline's view of the partition: its own name and each floor's owner, as `j/k`. */
export function floorPartition(p: IngestPartition): FloorPartition {
  return { self: `${p.index}/${p.count}`, ownerOf: (floorId) => `${(fnv1a(floorId) % p.count) + 1}/${p.count}` };
}
