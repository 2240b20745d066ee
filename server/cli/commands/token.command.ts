import type { Command } from 'commander';
import type { App } from '../../app';
import type { Ctx } from '../../common/ctx';
import type { User } from '../../modules/users';
import { withApp } from '../cli-app';
import { CliError, println, type CliRun } from '../cli-io';

/**
 * `muninn token create --user <id|owner> [--name <name>]`: creates an API token and prints it once, alone
 * on stdout (so `TOKEN=$(muninn token create --user owner)` works); the note goes to stderr. `owner` means
 * the first OWNER, created on an empty database exactly as the first `serve` does (with data/owner.token).
 * The token service audit-logs the creation with the CLI as system actor.
 */
export function registerTokenCommand(program: Command, run: CliRun): void {
  const token = program.command('token').description('manage API tokens');
  token
    .command('create')
    .description('create an API token for a user and print it once')
    .requiredOption(
      '--user <id|owner>',
      'user id, or "owner" for the first OWNER (created on an empty database)',
    )
    .option('--name <name>', 'label shown in token lists', 'cli')
    .action(async (opts: { user: string; name: string }) => {
      const { io } = run;
      await withApp(io, 'cli token create', async (app, ctx) => {
        const user = await resolveUser(app, ctx, opts.user, (line) => println(io.stderr, line));
        const { token: secret, apiToken } = await app.services.tokens.create(ctx, user.id, opts.name);
        println(io.stdout, secret);
        println(
          io.stderr,
          `Created API token "${apiToken.name}" (${apiToken.prefix}…) for ${user.displayName} (${user.trust}, id ${user.id}). ` +
            'It is shown only this once; send it as "Authorization: Bearer <token>".',
        );
      });
    });
}

/** The user behind `--user`: an id, or `owner` (bootstrapped on an empty database). */
async function resolveUser(app: App, ctx: Ctx, ref: string, note: (line: string) => void): Promise<User> {
  if (ref.trim().toLowerCase() === 'owner') {
    const { created, tokenFile, ownerId } = await app.services.ownerBootstrap.ensureOwner(ctx);
    if (created) note(`There was no OWNER yet: created one; its first token is in ${tokenFile} (mode 0600).`);
    return app.services.users.get(ctx, ownerId);
  }
  const user = await app.services.users.findOne(ctx, ref.trim());
  if (!user) {
    throw new CliError(
      `No user with id "${ref}". Run "muninn users list" to see the ids, or use --user owner.`,
    );
  }
  return user;
}
