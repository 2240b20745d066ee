import { spawn } from 'node:child_process';
import type { Client } from 'pg';
import { BackupRefusedError } from './backup.errors';

// === PostgreSQL backups through pg_dump / pg_restore
// The counts of the manifest and the dump come from one snapshot: a REPEATABLE READ transaction exports
// its snapshot, pg_dump dumps exactly that (`--snapshot`), and the counts are read inside it.

/** Runs a client program; resolves with its stdout, rejects with its stderr's last lines. */
function run(program: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      reject(err);
      return;
    }
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', (e: NodeJS.ErrnoException) => {
      reject(e.code === 'ENOENT' ? missing(program) : e);
    });
    child.once('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${program} failed (exit code ${code}): ${err.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

function missing(program: string): BackupRefusedError {
  return new BackupRefusedError(
    `${program} was not found on the PATH. Backups of a PostgreSQL database use the PostgreSQL client tools: install them (Debian/Ubuntu: apt-get install postgresql-client, of the server's major version or newer) and run the command again.`,
  );
}

/** Tables of the `public` schema with their row counts, read in the given client's transaction. */
async function countTables(client: Client): Promise<Record<string, number>> {
  const { rows } = await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
  const tables: Record<string, number> = {};
  for (const { tablename } of rows) {
    const res = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "public"."${tablename.replace(/"/g, '""')}"`);
    tables[tablename] = Number(res.rows[0]!.n);
  }
  return tables;
}

/** Dumps the database at `url` into `target` (custom format) and returns the row counts of the same snapshot. */
export async function dumpPostgres(url: string, target: string): Promise<Record<string, number>> {
  const client = await connectPg(url);
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows } = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
    const tables = await countTables(client);
    await run('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--snapshot=${rows[0]!.id}`, '--file', target, '--dbname', url]);
    await client.query('COMMIT');
    return tables;
  } finally {
    await client.end();
  }
}

/** Table names in the dump's table of contents (`pg_restore --list`); throws when the dump is unreadable. */
export async function listPostgresDump(file: string): Promise<string[]> {
  const toc = await run('pg_restore', ['--list', file]);
  const names: string[] = [];
  for (const line of toc.split('\n')) {
    const m = /^\d+;\s+\d+\s+\d+\s+TABLE\s+public\s+(\S+)\s/.exec(line);
    if (m) names.push(m[1]!);
  }
  return names;
}

/** Whether the database at `url` already holds tables in `public`. */
export async function postgresHasTables(url: string): Promise<boolean> {
  const client = await connectPg(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'");
    return Number(rows[0]!.n) > 0;
  } finally {
    await client.end();
  }
}

/** Restores a dump into the database at `url`; `clean` drops what is there first. Returns the restored row counts. */
export async function restorePostgres(url: string, file: string, clean: boolean): Promise<Record<string, number>> {
  await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', ...(clean ? ['--clean', '--if-exists'] : []), '--dbname', url, file]);
  const client = await connectPg(url);
  await client.connect();
  try {
    return await countTables(client);
  } finally {
    await client.end();
  }
}

/** `pg` is loaded only when a PostgreSQL database is backed up (a SQLite server never loads it). */
async function connectPg(url: string): Promise<Client> {
  const { Client: PgClient } = await import('pg');
  return new PgClient({ connectionString: url });
}

