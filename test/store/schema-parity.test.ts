import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_TABLES } from '../../src/store/postgres-schema.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { postgresPerFile } from '../support/postgres-per-file.js';

/**
 * The two dialects' migrations are kept by hand, side by side (src/store/migrations.ts and
 * postgres-schema.ts). This holds them equal: after every migration, both databases have the
 * same tables, each with the same columns (name, kind of value, NOT NULL), primary key and
 * unique keys. A migration added to one list and not the other fails here, naming the table.
 */
const { skip, createDatabase } = postgresPerFile();
const dir = mkdtempSync(join(tmpdir(), 'occusim-schema-parity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Tables one dialect has and the other has not, each with why. */
const ONLY_POSTGRES: Record<string, string> = {
  partition_leases: 'leases are shared between ingest processes, which only a PostgreSQL store has',
};

const ONLY_SQLITE: Record<string, string> = {
  detections:
    'a row per packet before SQLite migration 3 (payloads since); kept for stores written then, pruned by retention',
  traffic_samples: 'as detections: per-packet rows of SQLite stores from before migration 3',
};

/** Columns one dialect has and the other has not, each with why. */
const ONLY_POSTGRES_COLUMNS: Record<string, string> = {
  'api_clients.seq': "insertion order, which SQLite reads from the table's implicit rowid",
};

interface Column {
  name: string;
  kind: 'int' | 'real' | 'text' | 'bytes';
  notNull: boolean;
}

interface Table {
  columns: Column[];
  primaryKey: string[];
  uniqueKeys: string[];
}

const SQLITE_KINDS: Record<string, Column['kind']> = { INTEGER: 'int', REAL: 'real', TEXT: 'text', BLOB: 'bytes' };
const POSTGRES_KINDS: Record<string, Column['kind']> = {
  bigint: 'int',
  integer: 'int',
  smallint: 'int',
  'double precision': 'real',
  text: 'text',
  bytea: 'bytes',
};

function kindOf(table: Record<string, Column['kind']>, type: string, where: string): Column['kind'] {
  const kind = table[type];
  if (kind === undefined) throw new Error(`${where}: type ${type} has no kind in this test`);
  return kind;
}

const sortColumns = (cs: Column[]): Column[] => [...cs].sort((a, b) => a.name.localeCompare(b.name));

function sqliteSchema(path: string): Map<string, Table> {
  new SqliteStore(path).close();
  const db = new Database(path, { readonly: true });
  try {
    const out = new Map<string, Table>();
    const names = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
      .pluck()
      .all() as string[];
    for (const t of names) {
      const info = db.prepare(`PRAGMA table_info(${t})`).all() as Array<{
        name: string;
        type: string;
        notnull: number;
        pk: number;
      }>;
      const primaryKey = info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      const uniqueKeys = (
        db.prepare(`PRAGMA index_list(${t})`).all() as Array<{ name: string; unique: number; origin: string }>
      )
        .filter((i) => i.unique === 1 && i.origin !== 'pk')
        .map((i) =>
          (db.prepare(`PRAGMA index_info(${i.name})`).all() as Array<{ seqno: number; name: string }>)
            .sort((a, b) => a.seqno - b.seqno)
            .map((c) => c.name)
            .join(','),
        )
        .sort();
      out.set(t, {
        // A primary-key column is never null in either dialect (SQLite's rowid tables do not say so).
        columns: sortColumns(
          info.map((c) => ({
            name: c.name,
            kind: kindOf(SQLITE_KINDS, c.type, `SQLite ${t}.${c.name}`),
            notNull: c.notnull === 1 || c.pk > 0,
          })),
        ),
        primaryKey,
        uniqueKeys,
      });
    }
    return out;
  } finally {
    db.close();
  }
}

async function postgresSchema(url: string): Promise<Map<string, Table>> {
  await (await PostgresStore.open(url)).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out = new Map<string, Table>();
    const columns = await client.query<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
    }>(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
    );
    for (const c of columns.rows) {
      // A table of PostgreSQL's alone keeps its own types (the leases' instants are the server's clock).
      if (c.table_name in ONLY_POSTGRES) {
        out.set(c.table_name, out.get(c.table_name) ?? { columns: [], primaryKey: [], uniqueKeys: [] });
        continue;
      }
      const table = out.get(c.table_name) ?? { columns: [], primaryKey: [], uniqueKeys: [] };
      table.columns.push({
        name: c.column_name,
        kind: kindOf(POSTGRES_KINDS, c.data_type, `PostgreSQL ${c.table_name}.${c.column_name}`),
        notNull: c.is_nullable === 'NO',
      });
      out.set(c.table_name, table);
    }
    // Each key's columns in key order (pg_constraint.conkey), primary and unique.
    const keys = await client.query<{ table_name: string; contype: string; cols: string[] }>(
      `SELECT rel.relname AS table_name, con.contype,
              array_agg(att.attname::text ORDER BY k.ord) AS cols
       FROM pg_constraint con
       JOIN pg_class rel ON rel.oid = con.conrelid
       JOIN pg_namespace ns ON ns.oid = rel.relnamespace AND ns.nspname = current_schema()
       CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute att ON att.attrelid = rel.oid AND att.attnum = k.attnum
       WHERE con.contype IN ('p', 'u')
       GROUP BY rel.relname, con.conname, con.contype`,
    );
    // A unique index made by CREATE UNIQUE INDEX (not a constraint) is a unique key too.
    const indexes = await client.query<{ table_name: string; cols: string[] }>(
      `SELECT rel.relname AS table_name, array_agg(att.attname::text ORDER BY k.ord) AS cols
       FROM pg_index ix
       JOIN pg_class rel ON rel.oid = ix.indrelid
       JOIN pg_namespace ns ON ns.oid = rel.relnamespace AND ns.nspname = current_schema()
       CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute att ON att.attrelid = rel.oid AND att.attnum = k.attnum
       WHERE ix.indisunique AND NOT ix.indisprimary
         AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = ix.indexrelid)
       GROUP BY rel.relname, ix.indexrelid`,
    );
    for (const k of keys.rows) {
      const table = out.get(k.table_name);
      if (!table) continue;
      if (k.contype === 'p') table.primaryKey = k.cols;
      else table.uniqueKeys.push(k.cols.join(','));
    }
    for (const k of indexes.rows) out.get(k.table_name)?.uniqueKeys.push(k.cols.join(','));
    for (const t of out.values()) {
      t.columns = sortColumns(t.columns);
      t.uniqueKeys.sort();
      for (const c of t.columns) if (t.primaryKey.includes(c.name)) c.notNull = true;
    }
    return out;
  } finally {
    await client.end();
  }
}

/** One line per difference of a table between the dialects: what a reader fixes. */
function differences(table: string, lite: Table, post: Table): string[] {
  const out: string[] = [];
  const show = (c: Column): string => `${c.name} ${c.kind}${c.notNull ? ' NOT NULL' : ''}`;
  const byName = (cs: Column[]): Map<string, string> => new Map(cs.map((c) => [c.name, show(c)]));
  const [l, p] = [byName(lite.columns), byName(post.columns)];
  for (const name of new Set([...l.keys(), ...p.keys()]))
    if (l.get(name) !== p.get(name) && !(`${table}.${name}` in ONLY_POSTGRES_COLUMNS && !l.has(name)))
      out.push(`${table}.${name}: SQLite ${l.get(name) ?? 'absent'}, PostgreSQL ${p.get(name) ?? 'absent'}`);
  if (lite.primaryKey.join() !== post.primaryKey.join())
    out.push(
      `${table} primary key: SQLite (${lite.primaryKey.join(', ')}), PostgreSQL (${post.primaryKey.join(', ')})`,
    );
  if (lite.uniqueKeys.join(' ') !== post.uniqueKeys.join(' '))
    out.push(`${table} unique keys: SQLite [${lite.uniqueKeys.join(' ')}], PostgreSQL [${post.uniqueKeys.join(' ')}]`);
  return out;
}

describe.skipIf(skip !== null)(`the SQLite and PostgreSQL schemas ${skip === null ? '' : `(skipped: ${skip})`}`, () => {
  it('have the same tables, columns, primary keys and unique keys after every migration', async () => {
    const lite = sqliteSchema(join(dir, 'parity.sqlite'));
    const post = await postgresSchema(await createDatabase());
    const shared = [...post.keys()].filter((t) => !(t in ONLY_POSTGRES)).sort();
    expect([...lite.keys()].filter((t) => !(t in ONLY_SQLITE)).sort()).toEqual(shared);
    for (const t of Object.keys(ONLY_SQLITE)) expect(lite.has(t)).toBe(true);
    expect(shared.flatMap((t) => differences(t, lite.get(t) as Table, post.get(t) as Table))).toEqual([]);
    for (const t of Object.keys(ONLY_POSTGRES)) expect(post.has(t)).toBe(true);
  });

  it('lists every PostgreSQL table for --fresh to empty', async () => {
    const post = await postgresSchema(await createDatabase());
    const tables = [...post.keys()].filter((t) => t !== 'schema_version').sort();
    expect([...POSTGRES_TABLES].sort()).toEqual(tables);
  });
});
