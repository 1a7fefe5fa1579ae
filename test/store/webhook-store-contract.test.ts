import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { PostgresWebhookStore } from '../../src/store/postgres-webhooks.js';
import { sqliteWebhookStore } from '../../src/store/sqlite-async.js';
import { postgresPerFile } from '../support/postgres-per-file.js';
import { describeWebhookStoreContract } from './webhook-store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'occusim-hooks-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
describeWebhookStoreContract('SQLite', async () => sqliteWebhookStore(join(dir, `store-${++n}.db`)));

const { skip, createDatabase } = postgresPerFile();
// Each test gets a database of its own on one server.
describeWebhookStoreContract('PostgreSQL', async () => PostgresWebhookStore.open(await createDatabase()), skip);
