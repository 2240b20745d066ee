import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MIGRATIONS } from '../../../server/persistence/migrations';
import { runCli, tempDir } from './run-cli';

const migrationNames = MIGRATIONS.map((M) => new M().name ?? M.name);

describe('muninn migrate', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('applies every migration to an empty data folder and lists them', async () => {
    const res = await runCli(['migrate'], { env: { MUNINN_DATA_DIR: dir } });
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(res.stdout).toBe(
      [
        ...migrationNames.map((n) => `applied ${n}`),
        `${migrationNames.length} migration${migrationNames.length === 1 ? '' : 's'} applied.`,
        '',
      ].join('\n'),
    );
    expect(existsSync(path.join(dir, 'muninn.sqlite'))).toBe(true);
  });

  it('then says the database is up to date', async () => {
    const res = await runCli(['migrate'], { env: { MUNINN_DATA_DIR: dir } });
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(res.stdout).toBe('The database is up to date; no migrations to apply.\n');
  });
});

describe('muninn clear-memory', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const dbFiles = () =>
    ['muninn.sqlite', 'muninn.sqlite-wal', 'muninn.sqlite-shm'].map((f) => path.join(dir, f));

  /** A data folder with a real database, an owner.token, WAL companions and files that must survive. */
  beforeEach(async () => {
    dir = tempDir();
    env = { MUNINN_DATA_DIR: dir };
    expect((await runCli(['token', 'create', '--user', 'owner'], { env })).code).toBe(0);
    // SQLite removes -wal/-shm on a clean close; a crashed or running server leaves them behind.
    for (const file of dbFiles().slice(1)) if (!existsSync(file)) writeFileSync(file, '');
    mkdirSync(path.join(dir, 'redis'));
    writeFileSync(path.join(dir, 'redis', 'muninn.aof'), '');
    writeFileSync(path.join(dir, 'notes.txt'), 'keep me');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answering "n" keeps every file and exits 1', async () => {
    const res = await runCli(['clear-memory'], { env, stdin: 'n\n' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Delete them? [y/N] ');
    expect(res.stderr).toContain(path.join(dir, 'owner.token'));
    expect(res.stderr).toContain('Cancelled; nothing was deleted.');
    expect(res.stdout).toBe('');
    for (const file of [...dbFiles(), path.join(dir, 'owner.token')]) expect(existsSync(file)).toBe(true);
  });

  it('an empty answer or a closed stdin counts as no', async () => {
    expect((await runCli(['clear-memory'], { env, stdin: '\n' })).code).toBe(1);
    expect((await runCli(['clear-memory'], { env })).code).toBe(1);
    expect(existsSync(dbFiles()[0]!)).toBe(true);
  });

  it('answering "y" deletes the database files and owner.token', async () => {
    const res = await runCli(['clear-memory'], { env, stdin: 'y\n' });
    expect(res.code).toBe(0);
    for (const file of [...dbFiles(), path.join(dir, 'owner.token')]) expect(existsSync(file)).toBe(false);
  });

  it('--yes deletes without asking, says so for owner.token, and leaves other files alone', async () => {
    const res = await runCli(['clear-memory', '--yes'], { env });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    for (const file of dbFiles()) expect(res.stdout).toContain(`deleted ${file}\n`);
    expect(res.stdout).toContain(
      `deleted ${path.join(dir, 'owner.token')} (its token was stored in the deleted database)`,
    );
    expect(readdirSync(dir).sort()).toEqual(['notes.txt', 'redis']);
    expect(readdirSync(path.join(dir, 'redis'))).toEqual(['muninn.aof']);

    // Starting over works: the next run creates a fresh OWNER.
    const again = await runCli(['token', 'create', '--user', 'owner'], { env });
    expect(again.stderr).toContain('There was no OWNER yet');
  });

  it('with no database there is nothing to delete, and owner.token stays', async () => {
    for (const file of dbFiles()) rmSync(file);
    const res = await runCli(['clear-memory', '--yes'], { env });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`Nothing to delete: there is no database at ${dbFiles()[0]}.\n`);
    expect(existsSync(path.join(dir, 'owner.token'))).toBe(true);
  });

  it('refuses with PostgreSQL configured and deletes nothing', async () => {
    const res = await runCli(['clear-memory', '--yes'], {
      env: { ...env, DATABASE_URL: 'postgres://muninn:secret@127.0.0.1:1/muninn' },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^muninn: clear-memory only deletes the embedded SQLite database, and DATABASE_URL .* points to PostgreSQL\./,
    );
    expect(res.stderr).not.toContain('secret');
    for (const file of dbFiles()) expect(existsSync(file)).toBe(true);
  });
});
