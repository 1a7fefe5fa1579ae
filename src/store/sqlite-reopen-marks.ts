import type Database from 'better-sqlite3';
import type { ReopenMark } from './port.js';

export interface SqliteReopenMarks {
  mark(marks: readonly ReopenMark[]): void;
  of(owner: string): ReopenMark[];
  clear(marks: readonly ReopenMark[]): void;
}

/** The reopen marks (migration 9) of the SQLite store: each operation one transaction. */
export function prepareReopenMarks(db: Database.Database): SqliteReopenMarks {
  const insert = db.prepare('INSERT OR IGNORE INTO reopen_marks (owner, floor_id, minute_ms) VALUES (?, ?, ?)');
  const select = db.prepare<[string], { floor_id: string; minute_ms: number }>(
    'SELECT floor_id, minute_ms FROM reopen_marks WHERE owner = ? ORDER BY floor_id, minute_ms',
  );
  const remove = db.prepare('DELETE FROM reopen_marks WHERE owner = ? AND floor_id = ? AND minute_ms = ?');
  return {
    mark: db.transaction((marks: readonly ReopenMark[]) => {
      for (const m of marks) insert.run(m.owner, m.floorId, m.minuteMs);
    }),
    of: (owner: string): ReopenMark[] =>
      select.all(owner).map((r) => ({ owner, floorId: r.floor_id, minuteMs: r.minute_ms })),
    clear: db.transaction((marks: readonly ReopenMark[]) => {
      for (const m of marks) remove.run(m.owner, m.floorId, m.minuteMs);
    }),
  };
}
