import type { StoreSync } from './port.js';

/** What crosses between `openPostgresStoreSync` and its worker (postgres-sync-worker.ts). */
export interface SyncRequest {
  /** A `StoreSync` operation, or `open` (connect and migrate) first. */
  method: keyof StoreSync | 'open';
  args: unknown[];
}

export type SyncReply = { ok: true; value: unknown } | { ok: false; code: string; message: string };
