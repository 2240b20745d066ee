import type { Command } from 'commander';
import { parseTrustLevel, TRUST_ORDER } from '../../common/trust';
import { withApp } from '../cli-app';
import { CliError, println, type CliRun } from '../cli-io';

/**
 * `muninn trust set <userId> <LEVEL>`: sets a user's trust with OWNER powers (the CLI acts as the system).
 * LEVEL is case-insensitive; the user service enforces the rest (e.g. never demote the last OWNER) and
 * writes the audit entry.
 */
export function registerTrustCommand(program: Command, run: CliRun): void {
  const trust = program.command('trust').description('manage trust levels');
  trust
    .command('set')
    .description(`set the trust level of a user (${TRUST_ORDER.join(' < ')})`)
    .argument('<userId>', 'id of the user (see "muninn users list")')
    .argument('<level>', TRUST_ORDER.join(' | '))
    .action(async (userId: string, levelArg: string) => {
      const { io } = run;
      const level = parseTrustLevel(levelArg);
      if (!level) {
        throw new CliError(`"${levelArg}" is not a trust level. Use one of: ${TRUST_ORDER.join(', ')}.`);
      }
      await withApp(io, 'cli trust set', async (app, ctx) => {
        const before = await app.services.users.findOne(ctx, userId);
        if (!before) {
          throw new CliError(`No user with id "${userId}". Run "muninn users list" to see the ids.`);
        }
        const previous = before.trust;
        const user = await app.services.users.setTrust(ctx, userId, level);
        const change = previous === user.trust ? `stays ${user.trust}` : `${previous} → ${user.trust}`;
        println(io.stdout, `${user.displayName} (${user.id}): ${change}`);
      });
    });
}
