import type { Command } from 'commander';
import { App } from '../../app';
import { isRole } from '../../composition/roles';
import { loadCliConfig } from '../cli-app';
import type { CliRun } from '../cli-io';

/**
 * `muninn serve`: API and workers in one process; stops cleanly on SIGINT/SIGTERM. The action returns once
 * the server listens; the open server keeps the process alive and the signal handlers end it.
 */
export function registerServeCommand(program: Command, run: CliRun): void {
  program
    .command('serve')
    .description('start the server (GraphQL on PORT, default 4000)')
    .option('--role <role>', 'all | api | worker', 'all')
    .action(async (opts: { role: string }) => {
      if (!isRole(opts.role)) {
        throw new Error(`--role must be all, api or worker; got "${opts.role}".`);
      }
      const config = loadCliConfig(run.io);
      // Everything the server writes (database, WAL, tokens, the managed Redis's files) is private to its user.
      process.umask(0o077);
      const app = await App.create({ config });
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) {
          app.logger.warn('second signal: exiting now');
          process.exit(1);
        }
        stopping = true;
        app.logger.info({ signal }, 'shutting down');
        void app.shutdown().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
      try {
        await app.run(opts.role);
      } catch (err) {
        await app.dispose();
        throw err;
      }
      const owner = app.services.ownerBootstrap;
      if (owner.tokenFileExists()) {
        app.logger.info(`Owner token: ${config.data_dir}/owner.token — use it as "Authorization: Bearer <token>"`);
      }
    });
}
