import { PostgresStore } from './postgres-store.js';
import type { PostgresSession } from './postgres-session.js';
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
 * The API's state in the PostgreSQL store (tables `api_clients`, `api_overlays` of
 * postgres-schema.ts), on a connection of its own. Rows keep the order they were first
 * written in (`seq`), as the SQLite adapter's rowid does.
 */
export class PostgresApiState implements ApiStatePort {
  readonly #db: PostgresSession;

  private constructor(db: PostgresSession) {
    this.#db = db;
  }

  /** Connects to the store at `url`, creating its schema when the database is new. */
  static async open(url: string): Promise<PostgresApiState> {
    return new PostgresApiState(await PostgresStore.migratedSession(url));
  }

  async clientRows(): Promise<ClientRow[]> {
    const rows = await this.#db.rows<ClientTableRow>(`SELECT ${CLIENT_COLUMNS} FROM api_clients ORDER BY seq`);
    return rows.map(clientRowOf);
  }

  async putClient(c: StoredClient): Promise<void> {
    await this.#db.query(
      `INSERT INTO api_clients (client_id, org_id, name, description, hash, scopes, created_by, deleted) VALUES ($1, $2, $3, $4, $5, $6, $7, 0)
       ON CONFLICT (client_id) DO UPDATE SET org_id = excluded.org_id, name = excluded.name, description = excluded.description,
         hash = excluded.hash, scopes = excluded.scopes, created_by = excluded.created_by, deleted = 0`,
      [c.clientId, c.orgId, c.name, c.description, c.hash, JSON.stringify(c.scopes), c.createdBy],
    );
  }

  async deleteClient(clientId: string): Promise<void> {
    await this.#db.query(
      `INSERT INTO api_clients (client_id, deleted) VALUES ($1, 1)
       ON CONFLICT (client_id) DO UPDATE SET org_id = NULL, name = NULL, description = NULL, hash = NULL, scopes = NULL, created_by = NULL, deleted = 1`,
      [clientId],
    );
  }

  async overlay(orgId: string): Promise<AssetOverlay | null> {
    const [row] = await this.#db.rows<{ overlay: string }>('SELECT overlay FROM api_overlays WHERE org_id = $1', [
      orgId,
    ]);
    return row ? (JSON.parse(row.overlay) as AssetOverlay) : null;
  }

  async putOverlay(orgId: string, overlay: AssetOverlay): Promise<void> {
    await this.#db.query(
      'INSERT INTO api_overlays (org_id, overlay) VALUES ($1, $2) ON CONFLICT (org_id) DO UPDATE SET overlay = excluded.overlay',
      [orgId, JSON.stringify(overlay)],
    );
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
