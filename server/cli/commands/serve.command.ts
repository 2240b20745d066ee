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
      // The handlers go on before anything starts: a signal during start-up (the managed Redis, migrations,
      // workers) lets start-up finish, then stops cleanly, instead of killing the process with its Redis.
      let app: App | null = null;
      let starting = true;
      let stopping: string | null = null;
      const stop = (signal: string) => {
        if (stopping) {
          app?.logger.warn('second signal: exiting now');
          process.exit(1);
        }
        stopping = signal;
        if (!app || starting) {
          app?.logger.info({ signal }, 'stopping once start-up is done');
          return;
        }
        void shutDown(app, signal, config.shutdown_timeout_ms);
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
      app = await App.create({ config });
      if (stopping) app.logger.info({ signal: stopping }, 'stopping once start-up is done');
      try {
        await app.run(opts.role);
      } catch (err) {
        await app.dispose();
        throw err;
      }
      starting = false;
      if (stopping) {
        void shutDown(app, stopping, config.shutdown_timeout_ms);
        return;
      }
      const owner = app.services.ownerBootstrap;
      if (owner.tokenFileExists()) {
        app.logger.info(`Owner token: ${config.data_dir}/owner.token — use it as "Authorization: Bearer <token>"`);
      }
    });
}

/** Extra time past `shutdown_timeout_ms` for closing queues, subscriptions, Redis and the database. */
const CLOSE_GRACE_MS = 10_000;

/**
 * A clean stop, exit code 0. Should it hang (a Redis or database that stopped answering), the process
 * exits with code 1 once running turns had their time and closing had its grace, instead of never.
 */
function shutDown(app: App, signal: string, timeoutMs: number): Promise<void> {
  app.logger.info({ signal }, 'shutting down');
  const deadline = setTimeout(() => {
    app.logger.error({ afterMs: timeoutMs + CLOSE_GRACE_MS }, 'shutdown did not finish in time: exiting now');
    app.logger.flush?.();
    process.exit(1);
  }, timeoutMs + CLOSE_GRACE_MS);
  deadline.unref();
  return app.shutdown().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

