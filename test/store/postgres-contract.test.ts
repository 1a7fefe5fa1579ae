import { PostgresStore } from '../../src/store/postgres-store.js';
import { postgresPerFile } from '../support/postgres-per-file.js';
import { describeStoreContract } from './store-contract.js';

const { skip, createDatabase } = postgresPerFile();

// Each test gets a database of its own on one server.
describeStoreContract('PostgreSQL', async () => PostgresStore.open(await createDatabase()), skip);
