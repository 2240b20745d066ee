/**
 * Backup and restore (issue 22, acceptance 2): a backup taken with `muninn backup` while a real
 * `muninn serve` answers 20 sessions at once, restored with `muninn restore` into a fresh data folder,
 * holds every message the server had acknowledged before the backup began, and `--verify` passes. A
 * truncated or foreign file is refused with a clear error, and a restore never overwrites without --force.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSqliteDriver } from '../../../server/persistence/sqlite-driver';

/** better-sqlite3 12 or 13, as the server loads it on this Node. */
const Database = loadSqliteDriver();
import { Client } from 'pg';
import * as tar from 'tar';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, SEND_MESSAGE, type SentTurn } from '../../support/chat-helpers';
import { GraphQLTestClient } from '../../support/graphql-client';
import { startServeProcess, type ServeProcess } from '../../support/serve-process';
import { dropTestDatabase, testDatabaseUrl } from '../../support/test-database';
import { pidAlive } from '../../support/pid-alive';
import { runCli } from '../cli/run-cli';

const SESSIONS = 20;

const root = mkdtempSync(path.join(os.tmpdir(), 'muninn-backup-e2e-'));
const sourceDir = path.join(root, 'source');
const restoreDir = path.join(root, 'restored');
const urls: Array<string | null> = [];
let model: FakeOpenAIServer;
let server: ServeProcess | null = null;

/** A config file outside the data folder, for the server and the CLI. */
async function configFor(name: string, dataDir: string): Promise<string> {
  const url = await testDatabaseUrl(dataDir.replace(/$/, '')).catch(() => null);
  urls.push(url);
  const file = path.join(root, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      data_dir: dataDir,
      server: { host: '127.0.0.1', port: 0 },
      database: { url },
      redis: { url: null },
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 8 } } },
      session: { summarizer_mode: 'manual' },
      log: { level: 'info' },
    }),
  );
  return file;
}

/** Ids of the user messages stored in the database of a config (SQLite file or PostgreSQL). */
async function storedMessageIds(dataDir: string, url: string | null): Promise<Set<string>> {
  if (url) {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return new Set((await client.query<{ id: string }>(`SELECT id FROM messages WHERE role = 'USER'`)).rows.map((r) => r.id));
    } finally {
      await client.end();
    }
  }
  const db = new Database(path.join(dataDir, 'muninn.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return new Set((db.prepare(`SELECT id FROM messages WHERE role = 'USER'`).all() as Array<{ id: string }>).map((r) => r.id));
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  model = await FakeOpenAIServer.start();
  model.setDefault(() => ({ text: 'noted', delayMs: 5, chunks: 2, chunkDelayMs: 5 }));
});

afterAll(async () => {
  if (server) {
    // A clean stop; should it hang, the process and its managed Redis are killed so nothing outlives the suite.
    const stopped = await Promise.race([server.kill('SIGTERM').then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))]);
    if (!stopped) {
      await server.kill('SIGKILL');
      const pidFile = path.join(sourceDir, 'redis', 'redis.pid');
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : 0;
      if (pid && pidAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  }
  await model.close();
  for (const url of urls) await dropTestDatabase(url);
  rmSync(root, { recursive: true, force: true });
}, 60_000);

describe('muninn backup / restore', () => {
  let sourceConfig: string;
  let restoreConfig: string;
  const archive = path.join(root, 'out', 'muninn-backup.tar.gz');
  let acknowledgedBefore: string[] = [];
  let backupOutput = '';

  beforeAll(async () => {
    sourceConfig = await configFor('source', sourceDir);
    restoreConfig = await configFor('restored', restoreDir);
    server = await startServeProcess('backup-source', 'all', sourceConfig);
    // A workspace file and a secret key in the data folder travel with the backup.
    writeFileSync(path.join(sourceDir, 'secret.key'), 'k'.repeat(64), { mode: 0o600 });
    const ownerToken = readFileSync(path.join(sourceDir, 'owner.token'), 'utf8').trim();
    const owner = new GraphQLTestClient(server.url, ownerToken);
    const tokens: string[] = [];
    for (let i = 0; i < SESSIONS; i++) tokens.push((await createUserWithToken(owner, `load ${i}`, 'MEMBER')).token);
    await owner.close();

    const acknowledged: string[] = [];
    let stop = false;
    let seq = 0;
    const writers = tokens.map(async (token, u) => {
      const client = new GraphQLTestClient(server!.url, token);
      try {
        while (!stop) {
          const res = await client.http<{ sendMessage: SentTurn }, unknown>(SEND_MESSAGE, { input: { text: `u${u} m${seq++}` } });
          const id = res.data?.sendMessage?.messageId;
          if (id) acknowledged.push(id);
        }
      } finally {
        await client.close();
      }
    });
    await eventually(() => acknowledged.length >= SESSIONS * 2, 60_000, 'the load to get going');
    // Everything acknowledged before the backup starts must be in it; writers keep going meanwhile.
    acknowledgedBefore = [...acknowledged];
    const result = await runCli(['backup', archive], { env: { MUNINN_CONFIG: sourceConfig, PATH: process.env.PATH } });
    // The server keeps answering the load once the backup is written (a backup that held the database
    // would leave the writers waiting). How many land while it runs depends on how fast it is, so the
    // count during the backup is not asserted.
    const afterBackup = acknowledged.length;
    await eventually(() => acknowledged.length >= afterBackup + SESSIONS, 60_000, 'the load to go on after the backup');
    stop = true;
    await Promise.all(writers);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    backupOutput = result.stdout;
  }, 180_000);

  it('writes one archive (mode 0600) with a manifest of counts and checksums', async () => {
    expect(backupOutput).toMatch(/^Backup written: .*muninn-backup\.tar\.gz: (sqlite|postgres) database, \d+ tables, \d+ rows/);
    const { statSync } = await import('node:fs');
    expect(statSync(archive).mode & 0o777).toBe(0o600);
    const entries: string[] = [];
    await tar.list({ file: archive, onReadEntry: (e) => void entries.push(e.path) } as tar.TarOptionsWithAliasesAsyncFile);
    expect(entries[0]).toBe('manifest.json');
    expect(entries).toEqual(expect.arrayContaining(['data/secret.key', 'data/owner.token']));
    expect(entries.some((e) => e.startsWith('database/muninn.'))).toBe(true);
    expect(entries.some((e) => e.startsWith('data/redis'))).toBe(false);
  });

  it('--verify opens it and checks checksums, integrity and counts', async () => {
    const result = await runCli(['backup', '--verify', archive], { env: { MUNINN_CONFIG: sourceConfig, PATH: process.env.PATH } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^OK .*muninn-backup\.tar\.gz/);
    expect(result.stdout).toContain('Checksums, database integrity and row counts match the manifest.');
  });

  it('restores into a fresh folder with every message acknowledged before the backup', async () => {
    const result = await runCli(['restore', archive], { env: { MUNINN_CONFIG: restoreConfig, PATH: process.env.PATH } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Restored /);
    const stored = await storedMessageIds(restoreDir, urls[1] ?? null);
    const missing = acknowledgedBefore.filter((id) => !stored.has(id));
    expect({ acknowledged: acknowledgedBefore.length, missing }).toEqual({ acknowledged: acknowledgedBefore.length, missing: [] });
    expect(readFileSync(path.join(restoreDir, 'secret.key'), 'utf8')).toBe('k'.repeat(64));
    expect(readFileSync(path.join(restoreDir, 'owner.token'), 'utf8')).toBe(readFileSync(path.join(sourceDir, 'owner.token'), 'utf8'));

    // The restored folder opens as a Muninn data folder: the 20 users and the OWNER are there.
    const users = await runCli(['users', 'list'], { env: { MUNINN_CONFIG: restoreConfig, PATH: process.env.PATH } });
    expect(users.code).toBe(0);
    expect(users.stdout.split('\n').filter((l) => / load \d+ /.test(` ${l} `)).length).toBe(SESSIONS);
  });

  it('refuses to restore over existing data without --force', async () => {
    const again = await runCli(['restore', archive], { env: { MUNINN_CONFIG: restoreConfig, PATH: process.env.PATH } });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^muninn: Restore refused: .*--force/);
    const forced = await runCli(['restore', '--force', archive], { env: { MUNINN_CONFIG: restoreConfig, PATH: process.env.PATH } });
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);
  });

  it('refuses a truncated file and a foreign file with a clear error, writing nothing', async () => {
    const whole = readFileSync(archive);
    const truncated = path.join(root, 'truncated.tar.gz');
    writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length * 0.6)));
    const foreign = path.join(root, 'foreign.tar.gz');
    writeFileSync(foreign, 'PK\u0003\u0004 this is some zip file, not a Muninn backup');
    const alien = path.join(root, 'alien.tar.gz');
    mkdtempSync(path.join(root, 'alien-'));
    writeFileSync(path.join(root, 'notes.txt'), 'hello');
    await tar.create({ gzip: true, file: alien, cwd: root } as tar.TarOptionsWithAliasesAsyncFile, ['notes.txt']);
    const env = { MUNINN_CONFIG: sourceConfig, PATH: process.env.PATH };

    const t = await runCli(['backup', '--verify', truncated], { env });
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(/^muninn: .*truncated\.tar\.gz is not a usable Muninn backup: it is truncated or damaged/);
    const f = await runCli(['backup', '--verify', foreign], { env });
    expect(f.code).toBe(1);
    expect(f.stderr).toMatch(/^muninn: .*foreign\.tar\.gz is not a usable Muninn backup: it is not a backup archive/);
    const a = await runCli(['backup', '--verify', alien], { env });
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/alien\.tar\.gz is not a usable Muninn backup: it has no manifest\.json/);

    const emptyDir = path.join(root, 'empty');
    const emptyConfig = await configFor('empty', emptyDir);
    for (const bad of [truncated, foreign, alien]) {
      const r = await runCli(['restore', bad], { env: { MUNINN_CONFIG: emptyConfig, PATH: process.env.PATH } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/is not a usable Muninn backup/);
    }
    expect(existsSync(path.join(emptyDir, 'muninn.sqlite'))).toBe(false);
    expect(existsSync(path.join(emptyDir, 'owner.token'))).toBe(false);
  });
});
