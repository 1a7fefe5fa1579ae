/**
 * What the API changes and must keep across restarts of `occusim serve --db FILE`: clients
 * created or deleted through `/api/v1/client`, and each organisation's asset overlay (what
 * GraphQL mutations changed against the scenario: names, custom ids, created spaces and
 * devices, deleted sensors, tags). The port and its SQL adapters live with the store
 * (store/api-state-port.ts, sqlite-api-state.ts, postgres-api-state.ts: no module of
 * the API reaches SQL); here, the memory adapter that tests and `inject()` apps use.
 */
import type { ApiStatePort, AssetOverlay, ClientRow, StoredClient } from '../../store/api-state-port.js';

export type { ApiStatePort, AssetOverlay, ClientRow, StoredClient } from '../../store/api-state-port.js';

/** Keeps the state in memory: what tests and `inject()` apps use when nothing must survive. */
export class MemoryApiState implements ApiStatePort {
  readonly #clients = new Map<string, ClientRow>();
  readonly #overlays = new Map<string, string>();

  clientRows(): Promise<ClientRow[]> {
    return Promise.resolve([...this.#clients.values()]);
  }

  putClient(client: StoredClient): Promise<void> {
    this.#clients.set(client.clientId, { deleted: false, client: { ...client } });
    return Promise.resolve();
  }

  deleteClient(clientId: string): Promise<void> {
    this.#clients.delete(clientId);
    this.#clients.set(clientId, { deleted: true, clientId });
    return Promise.resolve();
  }

  overlay(orgId: string): Promise<AssetOverlay | null> {
    const json = this.#overlays.get(orgId);
    return Promise.resolve(json === undefined ? null : (JSON.parse(json) as AssetOverlay));
  }

  putOverlay(orgId: string, overlay: AssetOverlay): Promise<void> {
    this.#overlays.set(orgId, JSON.stringify(overlay));
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
