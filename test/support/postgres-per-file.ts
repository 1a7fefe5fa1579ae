import { afterAll, beforeAll } from 'vitest';
import { postgresSkipReason, startPostgres, type TestPostgres } from './postgres.js';

/**
 * One PostgreSQL server for a test file: started before its tests, stopped after, none when
 * `skip` says why not. `createDatabase()` gives each test a database of its own on it.
 */
export function postgresPerFile(): { skip: string | null; createDatabase(): Promise<string> } {
  const skip = postgresSkipReason();
  let server: TestPostgres | null = null;
  beforeAll(async () => {
    if (skip === null) server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    skip,
    createDatabase: () =>
      server === null
        ? Promise.reject(new Error(`PostgreSQL not started: ${skip ?? 'beforeAll has not run'}`))
        : server.createDatabase(),
  };
}
