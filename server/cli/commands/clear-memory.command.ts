import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { OWNER_TOKEN_FILE } from '../../modules/auth';
import { databaseKind, sqliteFilePath } from '../../persistence/data-source';
import { loadCliConfig } from '../cli-app';
import { ask, CliError, println, type CliRun } from '../cli-io';

/**
 * `muninn clear-memory [--yes]` (`npm run clear:memory`): deletes the SQLite database (the file and its
 * -wal/-shm companions) after a y/N confirmation on stdin, or at once with `--yes`. Deleting the database
 * also deletes `owner.token`, whose token lived in it; nothing else in the data folder is touched. With
 * PostgreSQL it refuses: dropping a shared server database is left to its administrator.
 *
 * Exit codes: 0 deleted (or nothing to delete), 1 refused or not confirmed.
 */
export function registerClearMemoryCommand(program: Command, run: CliRun): void {
  program
    .command('clear-memory')
    .description(
      'delete the SQLite database (users, sessions, memories) and owner.token; stop the server first',
    )
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (opts: { yes?: boolean }) => {
      const { io } = run;
      const config = loadCliConfig(io);
      if (databaseKind(config) === 'postgres') {
        throw new CliError(
          'clear-memory only deletes the embedded SQLite database, and DATABASE_URL (database.url) points to PostgreSQL. ' +
            'Drop and recreate that database yourself (e.g. "dropdb muninn && createdb muninn"), then run "muninn migrate".',
        );
      }
      const dbFile = sqliteFilePath(config);
      const files = [dbFile, `${dbFile}-wal`, `${dbFile}-shm`].filter((f) => existsSync(f));
      if (!files.length) {
        println(io.stdout, `Nothing to delete: there is no database at ${dbFile}.`);
        return;
      }
      const tokenFile = path.join(config.data_dir, OWNER_TOKEN_FILE);
      const withToken = existsSync(tokenFile) ? [...files, tokenFile] : files;
      if (!opts.yes) {
        println(io.stderr, 'This permanently deletes every user, token, session, message and memory:');
        for (const file of withToken) println(io.stderr, `  ${file}`);
        println(
          io.stderr,
          'Stop "muninn serve" first: a running server would keep writing to the deleted file.',
        );
        const answer = await ask(io, 'Delete them? [y/N] ');
        if (!/^y(es)?$/i.test(answer)) {
          println(io.stderr, 'Cancelled; nothing was deleted.');
          run.exitCode = 1;
          return;
        }
      }
      for (const file of files) {
        rmSync(file, { force: true });
        println(io.stdout, `deleted ${file}`);
      }
      if (withToken.includes(tokenFile)) {
        rmSync(tokenFile, { force: true });
        println(io.stdout, `deleted ${tokenFile} (its token was stored in the deleted database)`);
      }
      println(
        io.stdout,
        'Memory cleared. The next "muninn serve" creates a fresh database, a new OWNER and a new owner.token.',
      );
    });
}
