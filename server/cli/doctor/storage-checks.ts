import { accessSync, constants, existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AppConfig } from '../../config';
import { createDataSource, databaseKind, sqliteFilePath } from '../../persistence/data-source';
import { ENTITIES } from '../../entities';
import { describeError, withTimeout, type CheckResult } from './check';

const DB_TIMEOUT_MS = 5000;

/** The data folder exists and takes a file, or does not exist yet but can be created. */
export function checkDataFolder(config: AppConfig): CheckResult {
  const name = 'data folder';
  const dir = config.data_dir;
  const hint = 'fix its permissions or point MUNINN_DATA_DIR (data_dir) at a writable folder';
  if (!existsSync(dir)) {
    let parent = path.dirname(dir);
    while (!existsSync(parent) && path.dirname(parent) !== parent) parent = path.dirname(parent);
    try {
      accessSync(parent, constants.W_OK);
      return { name, verdict: 'ok', message: `${dir} does not exist yet; it will be created at first start` };
    } catch {
      return { name, verdict: 'FAIL', message: `${dir} does not exist and ${parent} is not writable`, hint };
    }
  }
  if (!statSync(dir).isDirectory()) return { name, verdict: 'FAIL', message: `${dir} is not a folder`, hint };
  // access(W_OK) can be wrong on some mounts; writing a file is the real test.
  const probe = path.join(dir, `.muninn-doctor-${process.pid}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
    return { name, verdict: 'ok', message: `${dir} is writable` };
  } catch (err) {
    return { name, verdict: 'FAIL', message: `cannot write to ${dir}: ${describeError(err)}`, hint };
  }
}

/**
 * The database opens, answers a query and has every migration applied. Read-mostly: a missing SQLite file
 * is reported, not created. Pending migrations are a warning because `serve` applies them at start.
 */
export async function checkDatabase(config: AppConfig): Promise<CheckResult> {
  const name = 'database';
  const kind = databaseKind(config);
  const where = kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : sqliteFilePath(config);
  if (kind === 'sqlite' && !existsSync(where)) {
    return {
      name,
      verdict: 'warn',
      message: `no database yet at ${where}`,
      hint: 'run "muninn migrate", or let the first "muninn serve" create it',
    };
  }
  const dataSource = createDataSource(config, ENTITIES);
  try {
    await withTimeout(dataSource.initialize(), DB_TIMEOUT_MS);
    await dataSource.query('SELECT 1');
    if (await dataSource.showMigrations()) {
      return {
        name,
        verdict: 'warn',
        message: `${where} opens but has pending migrations`,
        hint: 'run "muninn migrate" ("muninn serve" also applies them at start)',
      };
    }
    return {
      name,
      verdict: 'ok',
      message: `${where} opens; all ${dataSource.migrations.length} migrations applied`,
    };
  } catch (err) {
    const hint =
      kind === 'postgres'
        ? 'check DATABASE_URL and that the server accepts connections'
        : 'check the file; "muninn clear-memory" starts over with an empty database';
    return { name, verdict: 'FAIL', message: `cannot use ${where}: ${describeError(err)}`, hint };
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
  }
}
