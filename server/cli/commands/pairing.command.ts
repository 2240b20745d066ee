import type { Command } from 'commander';
import { AppError } from '../../common/errors';
import { PairingService, PairingStatus } from '../../modules/pairing';
import type { App } from '../../app';
import type { Ctx } from '../../common/ctx';
import { withApp } from '../cli-app';
import { CliError, println, type CliRun } from '../cli-io';
import { formatTable } from '../format-table';

const STATUSES = Object.values(PairingStatus);

/**
 * `muninn pairing list|approve <CODE>|deny <CODE>`: pairing requests of unknown DM senders (DESIGN §3),
 * decided as the system (OWNER powers) straight in the database, so it works while the server runs or
 * not. The CLI has no connection to the chat platforms: an approval from here does not message the
 * requester (approve in chat or by GraphQL for that); they are answered as soon as they write again.
 */
export function registerPairingCommand(program: Command, run: CliRun): void {
  const pairing = program.command('pairing').description('let unknown chat senders in (pairing codes)');

  pairing
    .command('list')
    .description('list pairing requests (PENDING unless --status or --all)')
    .option('--status <status>', STATUSES.join(' | '))
    .option('--all', 'every request, whatever its status')
    .action(async (opts: { status?: string; all?: boolean }) => {
      const { io } = run;
      const status = opts.all ? null : parseStatus(opts.status ?? PairingStatus.PENDING);
      await withPairing(run, 'cli pairing list', async (service, ctx) => {
        const requests = await service.list(ctx, status);
        if (!requests.length) {
          println(io.stdout, status ? `No ${status} pairing requests.` : 'No pairing requests.');
          return;
        }
        const rows = requests.map((r) => [
          r.code,
          r.status,
          `${r.channel}:${r.handle}`,
          r.displayName ?? '-',
          r.createdAt.toISOString(),
          r.expiresAt.toISOString(),
        ]);
        println(io.stdout, formatTable(['CODE', 'STATUS', 'IDENTITY', 'NAME', 'REQUESTED', 'EXPIRES'], rows));
      });
    });

  pairing
    .command('approve')
    .description('let the sender of a pairing code in as a MEMBER')
    .argument('<code>', 'the 8-character code the sender was given')
    .action(async (code: string) => {
      const { io } = run;
      await withPairing(run, 'cli pairing approve', async (service, ctx) => {
        const { request, user, created } = await service.approve(ctx, code);
        const identity = `${request.channel}:${request.handle}`;
        println(
          io.stdout,
          created
            ? `Approved ${request.code}: ${identity} is now ${user.displayName} (${user.id}), ${user.trust}.`
            : `Approved ${request.code}: ${identity} belongs to ${user.displayName} (${user.id}), ${user.trust}.`,
        );
        println(io.stderr, 'Note: the CLI cannot message the requester; they are answered as soon as they write again.');
      });
    });

  pairing
    .command('deny')
    .description('turn a pairing request down (the sender is not told)')
    .argument('<code>', 'the 8-character code the sender was given')
    .action(async (code: string) => {
      await withPairing(run, 'cli pairing deny', async (service, ctx) => {
        const request = await service.deny(ctx, code);
        println(run.io.stdout, `Denied ${request.code} (${request.channel}:${request.handle}).`);
      });
    });
}

function parseStatus(value: string): PairingStatus {
  const upper = value.trim().toUpperCase();
  if (!(STATUSES as string[]).includes(upper)) throw new CliError(`"${value}" is not a pairing status. Use one of: ${STATUSES.join(', ')}.`);
  return upper as PairingStatus;
}

/** Runs `fn` with a DB-only pairing service; expected failures (unknown or expired code) become CliErrors. */
async function withPairing(run: CliRun, reason: string, fn: (service: PairingService, ctx: Ctx) => Promise<void>): Promise<void> {
  await withApp(run.io, reason, async (app: App, ctx) => {
    const service = new PairingService(app.db, app.services.audit, app.services.users, null);
    try {
      await fn(service, ctx);
    } catch (err) {
      if (err instanceof AppError) throw new CliError(err.message);
      throw err;
    }
  });
}
