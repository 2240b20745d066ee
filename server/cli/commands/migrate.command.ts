import type { Command } from 'commander';
import { withApp } from '../cli-app';
import { println, type CliRun } from '../cli-io';

/**
 * `muninn migrate`: applies pending database migrations and lists them. Opening the App applies them
 * (the same path `serve` takes at start), so this only reports what that did.
 */
export function registerMigrateCommand(program: Command, run: CliRun): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const { io } = run;
      await withApp(io, 'cli migrate', async (app) => {
        const applied = app.appliedMigrations;
        if (!applied.length) {
          println(io.stdout, 'The database is up to date; no migrations to apply.');
          return;
        }
        for (const name of applied) println(io.stdout, `applied ${name}`);
        println(io.stdout, `${applied.length} migration${applied.length === 1 ? '' : 's'} applied.`);
      });
    });
}
