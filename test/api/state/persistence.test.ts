import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryApiState } from '../../../src/api/state/port.js';
import { SqliteApiState } from '../../../src/store/sqlite-api-state.js';
import { SqliteStore } from '../../../src/store/sqlite-store.js';
import { apiStateSurvivesRestart, boot, model } from './state-contract.js';

describe('API state across restarts', () => {
  it('keeps created and deleted clients, mutations and tags (in-memory port)', async () => {
    await apiStateSurvivesRestart(new MemoryApiState());
  });

  it("keeps them in the store's SQLite file, readable by a new connection", async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'occusim-state-')), 'store.sqlite');
    new SqliteStore(path).close(); // creates the file and runs the migrations
    const state = new SqliteApiState(path);
    await apiStateSurvivesRestart(state);
    const rows = await state.clientRows();
    const overlay = await state.overlay(model.org.id);
    await state.close();
    const reopened = new SqliteApiState(path);
    expect(await reopened.clientRows()).toEqual(rows);
    expect(await reopened.overlay(model.org.id)).toEqual(overlay);
    expect(rows.filter((r) => r.deleted)).toHaveLength(2); // the API-created "gone" and the scenario client
    expect(overlay?.tags.map((t) => t.name)).toEqual(['quiet']);
    expect(await reopened.overlay('org_unknown')).toBeNull();
    await reopened.close();
  });

  it('refuses a file that is not a store with STORE_FAILED', () => {
    expect(() => new SqliteApiState(join(mkdtempSync(join(tmpdir(), 'occusim-state-')), 'missing.sqlite'))).toThrow(
      expect.objectContaining({ code: 'STORE_FAILED' }),
    );
  });

  it('starts from the scenario alone when nothing was kept', async () => {
    const api = await boot(new MemoryApiState());
    expect(api.token).toBeTypeOf('string');
    const site = model.sites[0]!;
    expect(
      ((await api.gql(api.token as string, `{ site(id: "${site.id}") { name } }`)).data as { site: { name: string } })
        .site.name,
    ).toBe(site.name);
    await api.app.close();
  });
});
