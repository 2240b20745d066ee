import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

/**
 * The database of a test app. Without `MUNINN_TEST_DATABASE_URL` it is SQLite in the app's data folder.
 * With it (CI's PostgreSQL pass), every test app gets a fresh PostgreSQL database created next to that
 * one (`<name>_<random>`), remembered in the data folder so a restarted app finds it again, and dropped
 * when the app is closed for good.
 */
export const TEST_DATABASE_URL_ENV = 'MUNINN_TEST_DATABASE_URL';

const URL_FILE = '.test-database-url';

export function testDatabaseBase(): string | null {
  return process.env[TEST_DATABASE_URL_ENV] || null;
}

/** The URL for an app with this data folder, creating the database on first use; null on SQLite. */
export async function testDatabaseUrl(dataDir: string): Promise<string | null> {
  const base = testDatabaseBase();
  if (!base) return null;
  const file = path.join(dataDir, URL_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const url = new URL(base);
  const name = `${url.pathname.slice(1) || 'muninn'}_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  writeFileSync(file, url.toString());
  return url.toString();
}

/** Drops the database of a test app (PostgreSQL pass only). */
export async function dropTestDatabase(url: string | null): Promise<void> {
  const base = testDatabaseBase();
  if (!base || !url) return;
  const name = new URL(url).pathname.slice(1);
  const admin = new Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
