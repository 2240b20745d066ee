import type { Command } from 'commander';
import { AppError } from '../../common/errors';
import { BackupService, type BackupReport } from '../../modules/backup';
import { sqliteFilePath } from '../../persistence/data-source';
import { loadCliConfig } from '../cli-app';
import { CliError, println, type CliIO, type CliRun } from '../cli-io';

function backupService(io: CliIO): BackupService {
  const config = loadCliConfig(io);
  return new BackupService({ dataDir: config.data_dir, sqliteFile: sqliteFilePath(config), databaseUrl: config.database.url });
}

/** Expected failures (a foreign or truncated file, a refused restore) print one line and exit 1. */
async function expected<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) throw new CliError(err.message);
    throw err;
  }
}

function summary(report: BackupReport): string {
  const m = report.manifest;
  const rows = Object.values(m.tables).reduce((a, b) => a + b, 0);
  const tables = Object.keys(m.tables).length;
  return `${report.file}: ${m.database.kind} database, ${tables} tables, ${rows} rows, ${m.files.length} files, ${(report.bytes / 1024).toFixed(1)} KiB (format ${m.formatVersion}, taken ${m.createdAt})`;
}

/**
 * `muninn backup <file>` (a consistent backup while the server runs), `muninn backup --verify <file>` (open
 * it and check checksums, integrity and row counts) and `muninn restore <file> [--force]` (into an empty
 * data folder). See README "Backup and restore".
 */
export function registerBackupCommands(program: Command, run: CliRun): void {
  program
    .command('backup')
    .argument('<file>', 'archive to write (a .tar.gz), or with --verify the archive to check')
    .option('--verify', 'check an existing backup instead of taking one')
    .description('back up the database and the data folder into one archive (safe while the server runs)')
    .action(async (file: string, opts: { verify?: boolean }) => {
      const { io } = run;
      const service = backupService(io);
      if (opts.verify) {
        const report = await expected(() => service.verify(file));
        println(io.stdout, `OK ${summary(report)}`);
        println(io.stdout, 'Checksums, database integrity and row counts match the manifest.');
        return;
      }
      const report = await expected(() => service.create(file));
      println(io.stdout, `Backup written: ${summary(report)}`);
    });
  program
    .command('restore')
    .argument('<file>', 'archive made by "muninn backup"')
    .option('--force', 'replace the database and files already in the data folder (stop the server first)')
    .description('restore a backup into an empty data folder (MUNINN_DATA_DIR) and database')
    .action(async (file: string, opts: { force?: boolean }) => {
      const { io } = run;
      const report = await expected(() => backupService(io).restore(file, { force: opts.force }));
      println(io.stdout, `Restored ${summary(report)}`);
      println(io.stdout, `${report.restoredFiles} file(s) of the data folder restored. Start the server with "muninn serve".`);
    });
}
