import { describe, expect, it } from 'vitest';
import { PostgresApiState } from '../../../src/store/postgres-api-state.js';
import { postgresPerFile } from '../../support/postgres-per-file.js';
import { apiStateSurvivesRestart, model } from './state-contract.js';

const { skip, createDatabase } = postgresPerFile();
describe.skipIf(skip !== null)('API state in a PostgreSQL store', () => {
  it('keeps created and deleted clients, mutations and tags across restarts, readable by a new connection', async () => {
    const url = await createDatabase();
    const state = await PostgresApiState.open(url);
    await apiStateSurvivesRestart(state);
    const rows = await state.clientRows();
    const overlay = await state.overlay(model.org.id);
    await state.close();
    const reopened = await PostgresApiState.open(url);
    expect(await reopened.clientRows()).toEqual(rows);
    expect(await reopened.overlay(model.org.id)).toEqual(overlay);
    expect(rows.filter((r) => r.deleted)).toHaveLength(2);
    expect(overlay?.tags.map((t) => t.name)).toEqual(['quiet']);
    expect(await reopened.overlay('org_unknown')).toBeNull();
    await reopened.close();
  });
});
