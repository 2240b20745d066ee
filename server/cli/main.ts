import 'reflect-metadata';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../common/errors';
import { registerServeCommand } from './commands/serve.command';

/** Builds the `muninn` command line. Each command loads the config and builds only what it needs. */
export function buildCli(): Command {
  const program = new Command('muninn')
    .description('Muninn — self-hosted, multi-user AI assistant server')
    .showHelpAfterError()
    .exitOverride();
  registerServeCommand(program);
  return program;
}

/** Entry point used by bin/muninn.js. */
export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    if (err instanceof ConfigError) {
      console.error(`muninn: ${err.message}`);
      process.exitCode = 2;
      return;
    }
    console.error(`muninn: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
