import type { CatalogueOverlay } from '../assets/catalogue.js';

/**
 * What the HTTP API changes and must keep across restarts of `occusim serve --db FILE`:
 * clients created or deleted through `/api/v1/client`, and each organisation's asset overlay
 * (what GraphQL mutations changed against the scenario: names, custom ids, created spaces and
 * devices, deleted sensors, tags). Behind an asynchronous port, as the platform's `Store`,
 * with its SQL adapters beside the store's: the SQLite file (sqlite-api-state.ts) and
 * PostgreSQL (postgres-api-state.ts); the API keeps a memory adapter (api/state/port.ts).
 */
export interface StoredClient {
  clientId: string;
  orgId: string;
  name: string;
  description: string;
  /** The secret's slow hash (never the secret). */
  hash: string;
  scopes: readonly string[];
  /** client_id of the token that created it (spec §4.5 rule 1); null for scenario clients. */
  createdBy: string | null;
}

/** A client row: alive, or a tombstone (a scenario client deleted through the API stays deleted). */
export type ClientRow = { deleted: false; client: StoredClient } | { deleted: true; clientId: string };

/** A row of the `api_clients` table, as both SQL adapters select it. */
export interface ClientTableRow {
  client_id: string;
  org_id: string | null;
  name: string | null;
  description: string | null;
  hash: string | null;
  scopes: string | null;
  created_by: string | null;
  deleted: number;
}

/** The columns both SQL adapters select, in this order. */
export const CLIENT_COLUMNS = 'client_id, org_id, name, description, hash, scopes, created_by, deleted';

export function clientRowOf(r: ClientTableRow): ClientRow {
  if (r.deleted) return { deleted: true, clientId: r.client_id };
  const client: StoredClient = {
    clientId: r.client_id,
    orgId: r.org_id ?? '',
    name: r.name ?? '',
    description: r.description ?? '',
    hash: r.hash ?? '',
    scopes: JSON.parse(r.scopes ?? '[]') as string[],
    createdBy: r.created_by,
  };
  return { deleted: false, client };
}

/** What GraphQL mutations changed against the catalogue's fill (the catalogue's own overlay). */
export type AssetOverlay = CatalogueOverlay;

export interface ApiStatePort {
  /** In the order the clients were first written. */
  clientRows(): Promise<ClientRow[]>;
  putClient(client: StoredClient): Promise<void>;
  /** Leaves a tombstone: a scenario client deleted through the API stays deleted. */
  deleteClient(clientId: string): Promise<void>;
  overlay(orgId: string): Promise<AssetOverlay | null>;
  putOverlay(orgId: string, overlay: AssetOverlay): Promise<void>;
  close(): Promise<void>;
}
