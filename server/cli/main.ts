import 'reflect-metadata';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../common/errors';
import { CliError, println, processIO, type CliIO, type CliRun } from './cli-io';
import { registerBackupCommands } from './commands/backup.command';
import { registerChatCommand } from './commands/chat.command';
import { registerClearMemoryCommand } from './commands/clear-memory.command';
import { registerDoctorCommand } from './commands/doctor.command';
import { registerMigrateCommand } from './commands/migrate.command';
import { registerPairingCommand } from './commands/pairing.command';
import { registerServeCommand } from './commands/serve.command';
import { registerTokenCommand } from './commands/token.command';
import { registerTrustCommand } from './commands/trust.command';
import { registerUsersCommand } from './commands/users.command';

export { processIO, type CliIO } from './cli-io';

/**
 * Builds the `muninn` command line for one run. Each command loads the config from `run.io` and builds
 * only what it needs. Commander's own output (help, usage errors) goes to the run's streams too.
 */
export function buildCli(run: CliRun): Command {
  const program = new Command('muninn')
    .description('Muninn — self-hosted, multi-user AI assistant server')
    .configureOutput({
      writeOut: (s) => void run.io.stdout.write(s),
      writeErr: (s) => void run.io.stderr.write(s),
    })
    .showHelpAfterError()
    .exitOverride();
  registerServeCommand(program, run);
  registerChatCommand(program, run);
  registerTokenCommand(program, run);
  registerUsersCommand(program, run);
  registerTrustCommand(program, run);
  registerPairingCommand(program, run);
  registerMigrateCommand(program, run);
  registerClearMemoryCommand(program, run);
  registerDoctorCommand(program, run);
  registerBackupCommands(program, run);
  return program;
}

/**
 * Runs the CLI with `argv` (the user's arguments, without node and the script) and returns the exit
 * code; bin/muninn.js sets `process.exitCode` from it. Never rejects: a ConfigError exits 2 with its
 * message, a CliError with its own code, anything else 1 with a one-line message (the stack too when
 * DEBUG is set). `serve` resolves once the server listens; the process then stays alive until a signal.
 *
 * @example
 * const code = await main(['users', 'list'], { ...processIO(), env: { MUNINN_DATA_DIR: dir } });
 */
export async function main(
  argv: readonly string[] = process.argv.slice(2),
  io: CliIO = processIO(),
): Promise<number> {
  const run: CliRun = { io, exitCode: 0 };
  try {
    await buildCli(run).parseAsync(argv, { from: 'user' });
    return run.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ConfigError) {
      println(io.stderr, `muninn: ${err.message}`);
      return 2;
    }
    if (err instanceof CliError) {
      println(io.stderr, `muninn: ${err.message}`);
      return err.exitCode;
    }
    // Duck-typed: errors from another realm (Node internals under jest's vm) fail `instanceof Error`.
    const { message, stack } = (err ?? {}) as { message?: unknown; stack?: unknown };
    println(io.stderr, `muninn: ${(typeof message === 'string' ? message : String(err)).split('\n')[0]}`);
    if (io.env.DEBUG && typeof stack === 'string') println(io.stderr, stack);
    return 1;
  }
}
