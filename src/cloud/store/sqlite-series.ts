import type Database from 'better-sqlite3';

/** Prepared statements of migration 2 (assets, rollups, event outbox, pipeline state). @internal */
export function prepareSeries(db: Database.Database) {
  return {
    upsertAsset: db.prepare('INSERT OR REPLACE INTO assets (id, kind, parent_id, name, timezone) VALUES (?, ?, ?, ?, ?)'),
    assets: db.prepare<[], { id: string; kind: string; parent_id: string | null; name: string; timezone: string }>(
      'SELECT id, kind, parent_id, name, timezone FROM assets ORDER BY id',
    ),
    insertEvent: db.prepare('INSERT INTO events (event_id, type, space_id, minute_ms, value, revision, emitted_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    events: db.prepare<[number], { id: number; event_id: string; type: string; space_id: string; minute_ms: number; value: number; revision: number; emitted_at_ms: number }>(
      'SELECT id, event_id, type, space_id, minute_ms, value, revision, emitted_at_ms FROM events WHERE id > ? ORDER BY id',
    ),
    pruneEvents: db.prepare('DELETE FROM events WHERE emitted_at_ms < ?'),
    // A bucket whose minutes were all pruned keeps its last value: the INSERT selects no row.
    refreshRollup: db.prepare(
      `INSERT OR REPLACE INTO presence_rollup (space_id, every, bucket_ms, value, minutes)
       SELECT ?, ?, ?, MAX(value), COUNT(*) FROM presence_minute WHERE space_id = ? AND minute_ms >= ? AND minute_ms < ? HAVING COUNT(*) > 0`,
    ),
    minuteSeries: db.prepare<[string, number, number], { minute_ms: number; value: number }>(
      'SELECT minute_ms, value FROM presence_minute WHERE space_id = ? AND minute_ms >= ? AND minute_ms < ? ORDER BY minute_ms',
    ),
    rollupSeries: db.prepare<[string, string, number, number], { bucket_ms: number; value: number }>(
      'SELECT bucket_ms, value FROM presence_rollup WHERE space_id = ? AND every = ? AND bucket_ms >= ? AND bucket_ms < ? ORDER BY bucket_ms',
    ),
    pruneMinutes: db.prepare('DELETE FROM presence_minute WHERE minute_ms < ?'),
    pruneTrafficMinutes: db.prepare('DELETE FROM traffic_minute WHERE minute_ms < ?'),
    pruneDetections: db.prepare('DELETE FROM detections WHERE sensed_at_ms < ?'),
    pruneTrafficSamples: db.prepare('DELETE FROM traffic_samples WHERE sensed_at_ms < ?'),
    pruneRollup: db.prepare('DELETE FROM presence_rollup WHERE every = ? AND bucket_ms < ?'),
    getState: db.prepare<[string], { value: number }>('SELECT value FROM pipeline_state WHERE key = ?'),
    setState: db.prepare('INSERT OR REPLACE INTO pipeline_state (key, value) VALUES (?, ?)'),
  };
}
