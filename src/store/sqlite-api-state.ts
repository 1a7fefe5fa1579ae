import Database from 'better-sqlite3';
import { AppError, ErrorCodes } from '../core/errors.js';
import {
  CLIENT_COLUMNS,
  clientRowOf,
  type ApiStatePort,
  type AssetOverlay,
  type ClientRow,
  type ClientTableRow,
  type StoredClient,
} from './api-state-port.js';

/**
 * The API's state in the cloud store's SQLite file (tables `api_clients`, `api_overlays` of
 * store migration 4), through a connection of its own: the cloud writes through another,
 * and WAL lets both work. The store must have been opened once (it runs the migrations).
 */
export class SqliteApiState implements ApiStatePort {
  readonly #db: Database.Database;
  readonly #q;

  constructor(path: string) {
    try {
      this.#db = new Database(path, { fileMustExist: true });
      this.#db.pragma('journal_mode = WAL');
      this.#q = {
        rows: this.#db.prepare<[], ClientTableRow>(`SELECT ${CLIENT_COLUMNS} FROM api_clients ORDER BY rowid`),
        put: this.#db.prepare(
          `INSERT INTO api_clients (client_id, org_id, name, description, hash, scopes, created_by, deleted) VALUES (?, ?, ?, ?, ?, ?, ?, 0)
           ON CONFLICT (client_id) DO UPDATE SET org_id = excluded.org_id, name = excluded.name, description = excluded.description,
             hash = excluded.hash, scopes = excluded.scopes, created_by = excluded.created_by, deleted = 0`,
        ),
        tombstone: this.#db.prepare(
          `INSERT INTO api_clients (client_id, deleted) VALUES (?, 1)
           ON CONFLICT (client_id) DO UPDATE SET org_id = NULL, name = NULL, description = NULL, hash = NULL, scopes = NULL, created_by = NULL, deleted = 1`,
        ),
        overlay: this.#db.prepare<[string], { overlay: string }>('SELECT overlay FROM api_overlays WHERE org_id = ?'),
        putOverlay: this.#db.prepare('INSERT OR REPLACE INTO api_overlays (org_id, overlay) VALUES (?, ?)'),
      };
    } catch (err) {
      throw new AppError(ErrorCodes.STORE_FAILED, `cannot open the API state in ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  clientRows(): Promise<ClientRow[]> {
    return settled(() => this.#rows());
  }

  #rows(): ClientRow[] {
    return this.#q.rows.all().map(clientRowOf);
  }

  putClient(c: StoredClient): Promise<void> {
    return settled(
      () =>
        void this.#q.put.run(c.clientId, c.orgId, c.name, c.description, c.hash, JSON.stringify(c.scopes), c.createdBy),
    );
  }

  deleteClient(clientId: string): Promise<void> {
    return settled(() => void this.#q.tombstone.run(clientId));
  }

  overlay(orgId: string): Promise<AssetOverlay | null> {
    return settled(() => {
      const row = this.#q.overlay.get(orgId);
      return row ? (JSON.parse(row.overlay) as AssetOverlay) : null;
    });
  }

  putOverlay(orgId: string, overlay: AssetOverlay): Promise<void> {
    return settled(() => void this.#q.putOverlay.run(orgId, JSON.stringify(overlay)));
  }

  close(): Promise<void> {
    return settled(() => {
      if (this.#db.open) this.#db.close();
    });
  }
}

/** better-sqlite3 answers at once: the promise is already settled (a failure rejects, never throws). */
function settled<T>(op: () => T): Promise<T> {
  try {
    return Promise.resolve(op());
  } catch (err) {
    return Promise.reject(err as Error);
  }
}
