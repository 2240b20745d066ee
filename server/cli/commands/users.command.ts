import type { Command } from 'commander';
import { withApp } from '../cli-app';
import { println, type CliRun } from '../cli-io';
import { formatTable } from '../format-table';
import { registerUserDataCommands } from './user-data.command';

/** `muninn users list`: every user, oldest first, as a table of id, trust, display name and identities. */
export function registerUsersCommand(program: Command, run: CliRun): void {
  const users = program.command('users').description('inspect users; export or erase their data');
  registerUserDataCommands(users, run);
  users
    .command('list')
    .description('list users with their trust level and identities')
    .action(async () => {
      const { io } = run;
      await withApp(io, 'cli users list', async (app, ctx) => {
        const all = await app.services.users.listAll(ctx);
        if (!all.length) {
          println(
            io.stdout,
            'No users yet. The first "muninn serve" creates the OWNER, or run "muninn token create --user owner".',
          );
          return;
        }
        const identities = await app.services.users.identitiesOf(
          ctx,
          all.map((u) => u.id),
        );
        const rows = all.map((u, i) => [
          u.id,
          u.trust,
          u.displayName,
          identities[i]!.map((id) => id.key).join(', ') || '-',
        ]);
        println(io.stdout, formatTable(['ID', 'TRUST', 'DISPLAY NAME', 'IDENTITIES'], rows));
      });
    });
}
