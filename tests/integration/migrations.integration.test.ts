/**
 * Migrations on an empty database (issue 2 acceptance 2), on SQLite and on PostgreSQL: the initial
 * migration creates every entity's table, the entities match the migrations (no schema diff), and the
 * migration can be undone and re-applied.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { App } from '../../server/app';
import { loadConfig, type AppConfig } from '../../server/config';
import { openDatabase, pendingSchemaDiff } from '../../server/persistence/data-source';
import { ENTITIES } from '../../server/entities';
import { MIGRATIONS } from '../../server/persistence/migrations';
import { dataOf } from '../support/graphql-client';
import {
  CreateMemoryDocument,
  CreateUserDocument,
  MemoriesDocument,
  UsersDocument,
  type UsersQuery,
} from '../support/graphql/generated';
import { createUserWithToken, insertSession } from '../support/fixtures';
import { LogCapture } from '../support/log-capture';
import { startTestApp } from '../support/test-app';

const PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MIGRATION_NAMES = MIGRATIONS.map((m) => m.name);

const tmpDirs: string[] = [];
function tmpDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-migrations-'));
  tmpDirs.push(dir);
  return dir;
}
afterAll(() => tmpDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Tables the entities declare. */
const entityTables = (ds: DataSource) => ds.entityMetadatas.map((m) => m.tableName).sort();

async function tablesOf(ds: DataSource): Promise<string[]> {
  const rows: Array<{ name: string }> =
    ds.options.type === 'postgres'
      ? await ds.query(
          `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
        )
      : // Ordinary tables only: FTS5/vec0 virtual tables and their shadow tables are not entities.
        await ds.query(`SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%'`);
  return rows.map((r) => r.name).sort();
}

/** Applies, checks, undoes and re-applies the migrations on a freshly opened, empty database. */
async function migrationRoundTrip(config: AppConfig): Promise<void> {
  const { dataSource, applied } = await openDatabase(config, ENTITIES);
  try {
    expect(applied).toEqual(MIGRATION_NAMES);
    const expected = entityTables(dataSource);
    expect(expected).toEqual(
      expect.arrayContaining([
        'users',
        'identities',
        'api_tokens',
        'sessions',
        'messages',
        'images',
        'memories',
        'learned_skills',
        'beats',
        'beat_runs',
        'plugin_settings',
        'pairing_requests',
        'tool_approvals',
        'audit_log',
        'usage',
      ]),
    );
    expect(await tablesOf(dataSource)).toEqual([...expected, 'migrations'].sort());
    // The entities match what the migrations built: synchronize would change nothing.
    expect(await pendingSchemaDiff(dataSource)).toEqual([]);

    // Undo every migration, newest first: only the bookkeeping table is left.
    for (let i = 0; i < MIGRATIONS.length; i++) await dataSource.undoLastMigration({ transaction: 'each' });
    expect(await tablesOf(dataSource)).toEqual(['migrations']);
    expect(await dataSource.query('SELECT COUNT(*) AS n FROM migrations')).toEqual([
      { n: dataSource.options.type === 'postgres' ? '0' : 0 },
    ]);

    // And forward again.
    const again = await dataSource.runMigrations({ transaction: 'each' });
    expect(again.map((m) => m.name)).toEqual(MIGRATION_NAMES);
    expect(await pendingSchemaDiff(dataSource)).toEqual([]);
  } finally {
    await dataSource.destroy();
  }
  // A second open applies nothing.
  const reopened = await openDatabase(config, ENTITIES);
  expect(reopened.applied).toEqual([]);
  await reopened.dataSource.destroy();
}

describe('SQLite', () => {
  it('applies the initial migration on an empty file; entities match; undo and redo work', async () => {
    await migrationRoundTrip(loadConfig({ raw: { data_dir: tmpDir() }, env: {} }));
  });

  it('App.create reports the applied migrations, and none on the next start', async () => {
    const config = loadConfig({ raw: { data_dir: tmpDir() }, env: {} });
    const first = await App.create({ config, redis: false, logDestination: new LogCapture() });
    expect(first.appliedMigrations).toEqual(MIGRATION_NAMES);
    const pragmas = {
      journal: await first.dataSource.query('PRAGMA journal_mode'),
      fk: await first.dataSource.query('PRAGMA foreign_keys'),
      busy: await first.dataSource.query('PRAGMA busy_timeout'),
    };
    expect(pragmas).toEqual({
      journal: [{ journal_mode: 'wal' }],
      fk: [{ foreign_keys: 1 }],
      busy: [{ timeout: 5000 }],
    });
    await first.dispose();
    const second = await App.create({ config, redis: false, logDestination: new LogCapture() });
    expect(second.appliedMigrations).toEqual([]);
    await second.dispose();
  });
});

describe('PostgreSQL', () => {
  const dbName = `muninn_test_${randomBytes(6).toString('hex')}`;
  const dbUrl = (() => {
    const u = new URL(PG_ADMIN_URL);
    u.pathname = `/${dbName}`;
    return u.toString();
  })();
  let admin: Client;

  beforeAll(async () => {
    admin = new Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
  });

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  });

  it('applies the initial migration on an empty database; entities match; undo and redo work', async () => {
    await migrationRoundTrip(loadConfig({ raw: { data_dir: tmpDir(), database: { url: dbUrl } }, env: {} }));
  });

  it('serves the API on PostgreSQL: users, tokens, memories, sessions and cursor paging', async () => {
    const t = await startTestApp({ config: { database: { url: dbUrl } } });
    try {
      expect(t.app.db.kind).toBe('postgres');
      const owner = t.client(t.ownerToken);
      const member = await createUserWithToken(owner, 'MEMBER', 'Pg member');
      for (let i = 0; i < 5; i++)
        dataOf(await owner.http(CreateUserDocument, { input: { displayName: `pg ${i}` } }));
      const ids: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page: UsersQuery['users'] = dataOf(await owner.http(UsersDocument, { first: 2, after })).users;
        ids.push(...page.edges.map((e) => e.node.id));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(ids).toHaveLength(7);
      expect([...ids].sort()).toEqual(ids);
      const m = t.client(member.token);
      dataOf(
        await m.http(CreateMemoryDocument, { input: { content: 'stored in postgres', importance: 0.25 } }),
      );
      expect(dataOf(await m.http(MemoriesDocument, {})).memories.edges[0]!.node).toMatchObject({
        content: 'stored in postgres',
        importance: 0.25,
      });
      const { sessionId } = await insertSession(t, member.id);
      expect(
        (await t.app.services.sessions.getVisible(t.app.systemCtx('test'), sessionId)).startedAt,
      ).toBeInstanceOf(Date);
      await owner.close();
      await m.close();
    } finally {
      await t.close();
    }
  });
});
