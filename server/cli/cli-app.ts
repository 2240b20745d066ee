import { App } from '../app';
import type { Ctx } from '../common/ctx';
import { loadConfig, type AppConfig } from '../config';
import type { CliIO } from './cli-io';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** Loads the configuration from the run's environment and working directory; throws ConfigError. */
export function loadCliConfig(io: CliIO): AppConfig {
  return loadConfig({ env: io.env, cwd: io.cwd });
}

/**
 * Log level for short-lived commands: at most `warn`, so JSON log lines do not bury the command's own
 * output, unless LOG_LEVEL or DEBUG asks for more.
 */
function cliLogLevel(config: AppConfig, env: NodeJS.ProcessEnv): AppConfig['log']['level'] {
  if (env.DEBUG) return 'debug';
  if (env.LOG_LEVEL) return config.log.level;
  return LEVELS.indexOf(config.log.level) > LEVELS.indexOf('warn') ? config.log.level : 'warn';
}

/**
 * Runs `fn` with an App that has the database (migrations applied) but no Redis and no HTTP, and a
 * system context named after the command; the App is always disposed, also when `fn` throws. Logs go
 * to stderr so stdout carries only the command's output.
 */
export async function withApp<T>(
  io: CliIO,
  reason: string,
  fn: (app: App, ctx: Ctx) => Promise<T>,
): Promise<T> {
  const loaded = loadCliConfig(io);
  const config: AppConfig = { ...loaded, log: { ...loaded.log, level: cliLogLevel(loaded, io.env) } };
  const app = await App.create({ config, logDestination: io.stderr, redis: false });
  try {
    return await fn(app, app.systemCtx(reason));
  } finally {
    await app.dispose();
  }
}
