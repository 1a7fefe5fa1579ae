import { afterAll, beforeAll } from 'vitest';
import { PostgresStore } from '../../../src/cloud/store/postgres-store.js';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../../support/postgres.js';
import { describeStoreContract } from './store-contract.js';

const skip = postgresSkipReason();
let server: TestPostgres | null = null;

beforeAll(async () => {
  if (skip === null) server = await startPostgres();
});
afterAll(async () => {
  await server?.stop();
});

// Each test gets a database of its own on one server.
describeStoreContract('PostgreSQL', async () => PostgresStore.open(await (server as TestPostgres).createDatabase()), skip);
