/** What crosses between `openPostgresSync` and its worker (postgres-sync-worker.ts). */
export interface SyncRequest {
  /** An operation of the store the worker holds, or `open` (connect and migrate) first. */
  method: string;
  args: unknown[];
}

/** Which store the worker holds: the pipeline's (`StoreSync`) or webhooks' (`WebhookStore`). */
export type SyncKind = 'store' | 'webhooks';

export type SyncReply = { ok: true; value: unknown } | { ok: false; code: string; message: string };
