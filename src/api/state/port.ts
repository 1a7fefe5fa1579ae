/**
 * What the API changes and must keep across restarts of `occusim serve --db FILE`: clients
 * created or deleted through `/api/v1/client`, and each organisation's asset overlay (what
 * GraphQL mutations changed against the scenario: names, custom ids, created spaces and
 * devices, deleted sensors, tags). Behind a port so the store can be SQLite or anything else.
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

export type { AssetKind } from '../../assets/model.js';

/** What GraphQL mutations changed against the catalogue's fill (the catalogue's own overlay). */
import type { CatalogueOverlay } from '../../assets/catalogue.js';
export type AssetOverlay = CatalogueOverlay;

export interface ApiStatePort {
  clientRows(): ClientRow[];
  putClient(client: StoredClient): void;
  deleteClient(clientId: string): void;
  overlay(orgId: string): AssetOverlay | null;
  putOverlay(orgId: string, overlay: AssetOverlay): void;
  close(): void;
}

/** Keeps the state in memory: what tests and `inject()` apps use when nothing must survive. */
export class MemoryApiState implements ApiStatePort {
  readonly #clients = new Map<string, ClientRow>();
  readonly #overlays = new Map<string, string>();

  clientRows(): ClientRow[] {
    return [...this.#clients.values()];
  }

  putClient(client: StoredClient): void {
    this.#clients.set(client.clientId, { deleted: false, client: { ...client } });
  }

  deleteClient(clientId: string): void {
    this.#clients.delete(clientId);
    this.#clients.set(clientId, { deleted: true, clientId });
  }

  overlay(orgId: string): AssetOverlay | null {
    const json = this.#overlays.get(orgId);
    return json === undefined ? null : (JSON.parse(json) as AssetOverlay);
  }

  putOverlay(orgId: string, overlay: AssetOverlay): void {
    this.#overlays.set(orgId, JSON.stringify(overlay));
  }

  close(): void {}
}
