import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { listFiles, muninnVersion, packArchive, sha256File, unpackArchive } from './backup-archive';
import { BackupFileError, BackupRefusedError } from './backup.errors';
import { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, DATA_DIR, DATABASE_DIR, MANIFEST_FILE, parseManifest, type BackupFileEntry, type BackupManifest } from './backup-manifest';
import { dumpPostgres, listPostgresDump, postgresHasTables, restorePostgres } from './postgres-dump';
import { inspectSqlite, snapshotSqlite } from './sqlite-snapshot';

/** Where the data lives: the data folder and its database. */
export interface BackupOptions {
  /** `data_dir`, absolute. */
  dataDir: string;
  /** The SQLite file, absolute (ignored when `databaseUrl` is set). */
  sqliteFile: string;
  /** `database.url` (PostgreSQL); null for SQLite. */
  databaseUrl: string | null;
}

/** What a backup holds, as written or as checked. */
export interface BackupReport {
  file: string;
  bytes: number;
  manifest: BackupManifest;
}

export interface RestoreReport extends BackupReport {
  /** Files of the data folder written (besides the database). */
  restoredFiles: number;
}

/**
 * Top-level entries of the data folder that are not part of a backup: the managed Redis (queues are
 * rebuilt from the database at start), export downloads and scheduled backups.
 */
const SKIPPED_TOP = new Set(['redis', 'exports', 'backups']);

/**
 * `muninn backup`, `backup --verify` and `restore` (README "Backup and restore"): one gzip'd tar holding a
 * manifest (format version, rows per table, a checksum per file), a consistent snapshot of the database
 * (SQLite online backup API, or pg_dump of one exported snapshot) and the data folder's other files —
 * memory indexes (LanceDB), workspaces, the secret key, the owner token, the WhatsApp link.
 */
export class BackupService {
  constructor(private readonly options: BackupOptions) {}

  private get kind(): 'sqlite' | 'postgres' {
    return this.options.databaseUrl ? 'postgres' : 'sqlite';
  }

  /** Writes a backup of the running (or stopped) server to `file` (mode 0600), replacing it atomically. */
  async create(file: string): Promise<BackupReport> {
    const target = path.resolve(file);
    await mkdir(path.dirname(target), { recursive: true });
    const staging = await mkdtemp(path.join(path.dirname(target), '.muninn-backup-'));
    try {
      // The data folder's files first, then the database: what the files point at (a LanceDB version, a
      // workspace file) is then never newer than the rows that refer to it.
      const dataFiles = await this.dataFolderFiles([staging, target]);
      await mkdir(path.join(staging, DATA_DIR), { recursive: true });
      for (const rel of lanceManifestsFirst(dataFiles)) {
        const dest = path.join(staging, DATA_DIR, rel);
        await mkdir(path.dirname(dest), { recursive: true });
        try {
          await copyFile(path.join(this.options.dataDir, rel), dest);
        } catch (err) {
          // A file removed while we walked (a workspace file deleted, a LanceDB version cleaned up) is left out.
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
      await mkdir(path.join(staging, DATABASE_DIR), { recursive: true });
      let tables: Record<string, number>;
      let dbFile: string;
      if (this.options.databaseUrl) {
        dbFile = `${DATABASE_DIR}/muninn.pgdump`;
        tables = await dumpPostgres(this.options.databaseUrl, path.join(staging, dbFile));
      } else {
        if (!existsSync(this.options.sqliteFile)) {
          throw new BackupRefusedError(`There is no database at ${this.options.sqliteFile}; check data_dir (MUNINN_DATA_DIR) and database.sqlite_file.`);
        }
        dbFile = `${DATABASE_DIR}/muninn.sqlite`;
        const inspection = await snapshotSqlite(this.options.sqliteFile, path.join(staging, dbFile));
        if (inspection.integrity !== 'ok') throw new Error(`the database snapshot failed its integrity check: ${inspection.integrity}`);
        tables = inspection.tables;
      }
      const entries = await listFiles(staging);
      const files: BackupFileEntry[] = [];
      for (const rel of entries) {
        const abs = path.join(staging, rel);
        files.push({ path: rel, bytes: (await stat(abs)).size, sha256: await sha256File(abs) });
      }
      const manifest: BackupManifest = {
        format: BACKUP_FORMAT,
        formatVersion: BACKUP_FORMAT_VERSION,
        createdAt: new Date().toISOString(),
        muninnVersion: muninnVersion(),
        database: { kind: this.kind, file: dbFile },
        tables,
        files,
      };
      await writeFile(path.join(staging, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
      const partial = path.join(staging, 'archive.tar.gz');
      await packArchive(staging, [MANIFEST_FILE, ...entries], partial);
      await chmod(partial, 0o600);
      await rename(partial, target);
      return { file: target, bytes: (await stat(target)).size, manifest };
    } finally {
      await rm(staging, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    }
  }

  /** Opens a backup and checks it: manifest, every checksum, the database's integrity and its row counts. */
  async verify(file: string): Promise<BackupReport> {
    const source = path.resolve(file);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'muninn-verify-'));
    try {
      const manifest = await this.checkArchive(source, dir);
      return { file: source, bytes: (await stat(source)).size, manifest };
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    }
  }

  /**
   * Restores a backup into this data folder (and database). Refuses when the folder already has a
   * database or any of the backup's files, unless `force`, which replaces them. The archive is checked
   * completely before anything is written.
   */
  async restore(file: string, opts: { force?: boolean } = {}): Promise<RestoreReport> {
    const source = path.resolve(file);
    const { dataDir, sqliteFile, databaseUrl } = this.options;
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const staging = await mkdtemp(path.join(dataDir, '.restore-'));
    try {
      const manifest = await this.checkArchive(source, staging);
      if (manifest.database.kind !== this.kind) {
        throw new BackupRefusedError(
          `${source} holds a ${manifest.database.kind} database but this server is configured for ${this.kind}; ` +
            (this.kind === 'postgres' ? 'unset DATABASE_URL (database.url) to restore it into SQLite.' : 'set DATABASE_URL (database.url) to the PostgreSQL database to restore it into.'),
        );
      }
      const dataEntries = manifest.files.filter((f) => f.path.startsWith(`${DATA_DIR}/`)).map((f) => f.path.slice(DATA_DIR.length + 1));
      const existing = dataEntries.filter((rel) => existsSync(path.join(dataDir, rel)));
      const hasDatabase = databaseUrl ? await postgresHasTables(databaseUrl) : existsSync(sqliteFile);
      if (!opts.force && (hasDatabase || existing.length)) {
        const what = hasDatabase ? (databaseUrl ? 'the PostgreSQL database already has tables' : `${sqliteFile} already exists`) : `${existing.length} file(s) of the backup already exist there (${existing.slice(0, 3).join(', ')})`;
        throw new BackupRefusedError(`Restore refused: ${what}. Restore into an empty data folder (MUNINN_DATA_DIR), or add --force to replace what is there (stop the server first).`);
      }
      if (databaseUrl) {
        await restorePostgres(databaseUrl, path.join(staging, manifest.database.file), !!opts.force);
      } else {
        for (const suffix of ['-wal', '-shm', '-journal']) await rm(`${sqliteFile}${suffix}`, { force: true });
        await mkdir(path.dirname(sqliteFile), { recursive: true });
        await rename(path.join(staging, manifest.database.file), sqliteFile);
        await chmod(sqliteFile, 0o600);
      }
      for (const rel of dataEntries) {
        const dest = path.join(dataDir, rel);
        await mkdir(path.dirname(dest), { recursive: true });
        await rename(path.join(staging, DATA_DIR, rel), dest);
      }
      return { file: source, bytes: (await stat(source)).size, manifest, restoredFiles: dataEntries.length };
    } finally {
      await rm(staging, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    }
  }

  /** Unpacks into `dir` and checks everything; returns the manifest or throws BackupFileError. */
  private async checkArchive(file: string, dir: string): Promise<BackupManifest> {
    await unpackArchive(file, dir);
    const manifest = parseManifest(await readFile(path.join(dir, MANIFEST_FILE), 'utf8'), file);
    const present = new Set((await listFiles(dir)).filter((p) => p !== MANIFEST_FILE));
    for (const entry of manifest.files) {
      if (!present.delete(entry.path)) throw new BackupFileError(file, `${entry.path} is missing (the archive is truncated)`);
      const abs = path.join(dir, entry.path);
      const bytes = (await stat(abs)).size;
      if (bytes !== entry.bytes || (await sha256File(abs)) !== entry.sha256) {
        throw new BackupFileError(file, `${entry.path} does not match its checksum (the archive is damaged)`);
      }
    }
    if (present.size) throw new BackupFileError(file, `it holds files its manifest does not list (${[...present].slice(0, 3).join(', ')})`);
    if (!manifest.files.some((f) => f.path === manifest.database.file)) throw new BackupFileError(file, 'its manifest names no database file');
    const dbPath = path.join(dir, manifest.database.file);
    if (manifest.database.kind === 'sqlite') {
      let inspection;
      try {
        inspection = await inspectSqlite(dbPath);
      } catch (err) {
        throw new BackupFileError(file, `its database cannot be opened (${(err as Error).message})`);
      }
      if (inspection.integrity !== 'ok') throw new BackupFileError(file, `its database fails the integrity check (${inspection.integrity.slice(0, 200)})`);
      for (const [table, rows] of Object.entries(manifest.tables)) {
        if (inspection.tables[table] !== rows) {
          throw new BackupFileError(file, `table ${table} has ${inspection.tables[table] ?? 'no'} rows, the manifest says ${rows}`);
        }
      }
    } else {
      let listed: string[];
      try {
        listed = await listPostgresDump(dbPath);
      } catch (err) {
        if (err instanceof BackupRefusedError) throw err;
        throw new BackupFileError(file, `its PostgreSQL dump cannot be read (${(err as Error).message})`);
      }
      const missing = Object.keys(manifest.tables).filter((t) => !listed.includes(t));
      if (missing.length) throw new BackupFileError(file, `its PostgreSQL dump lacks tables of the manifest (${missing.slice(0, 3).join(', ')})`);
    }
    return manifest;
  }

  /** Files of the data folder that go into a backup (see SKIPPED_TOP); `exclude`: absolute paths left out too. */
  private async dataFolderFiles(exclude: string[]): Promise<string[]> {
    const { dataDir, sqliteFile } = this.options;
    const skipped = new Set(exclude.map((p) => path.resolve(p)));
    for (const suffix of ['', '-wal', '-shm', '-journal']) skipped.add(path.resolve(`${sqliteFile}${suffix}`));
    return listFiles(dataDir, (rel) => {
      const top = rel.split('/')[0]!;
      if (SKIPPED_TOP.has(top) || top.startsWith('.')) return true;
      return skipped.has(path.resolve(dataDir, rel));
    });
  }
}

/** LanceDB version manifests before the data files they name (data files are written first, so all are then copied). */
function lanceManifestsFirst(files: string[]): string[] {
  const isManifest = (f: string) => f.includes('/_versions/') || f.includes('/_latest');
  return [...files.filter(isManifest), ...files.filter((f) => !isManifest(f))];
}
