import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { ask, CliError, println, type CliRun } from '../cli-io';
import { resolveChatTarget } from '../tui/chat-target';

const EXPORT = /* GraphQL */ `mutation CliExport($userId: ID!) { exportUserData(userId: $userId) { exportId jobId downloadUrl expiresAt } }`;
const ERASE = /* GraphQL */ `mutation CliErase($userId: ID!) { eraseUser(userId: $userId) { userId existed rows tables outside } }`;

interface Target {
  baseUrl: string;
  token: string;
}

/** One GraphQL call to the running server; errors become CliErrors that say what happened. */
async function call<T>(target: Target, query: string, variables: Record<string, unknown>): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    throw new CliError(`Cannot reach the server at ${target.baseUrl} (${(err as Error).message}). Start "muninn serve", or pass --url.`);
  }
  const body = (await res.json().catch(() => ({}))) as { data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> };
  if (body.errors?.length) throw new CliError(`${body.errors[0]!.message}${body.errors[0]!.extensions?.code ? ` (${body.errors[0]!.extensions.code})` : ''}`);
  if (!body.data) throw new CliError(`The server answered ${res.status} without data.`);
  return body.data;
}

/**
 * `muninn users export <id>` and `muninn users erase <id>`: the GraphQL `exportUserData` / `eraseUser` of
 * the running server (so the erasure reaches its Redis and its files too), with the owner token by default.
 */
export function registerUserDataCommands(users: Command, run: CliRun): void {
  users
    .command('export')
    .argument('<userId>', 'the user whose data to export')
    .option('--out <file>', 'where to write the archive (default muninn-export-<userId>.tar.gz)')
    .option('--url <url>', 'server URL (default http://127.0.0.1:<server.port>)')
    .option('--token <token>', 'API token (default env MUNINN_TOKEN, else <data_dir>/owner.token)')
    .description("export a user's data (profile, sessions, messages, memories, beats, usage, …) from the running server")
    .action(async (userId: string, opts: { out?: string; url?: string; token?: string }) => {
      const { io } = run;
      const target = resolveChatTarget(io, { url: opts.url, token: opts.token, history: false });
      const requested = (await call<{ exportUserData: { downloadUrl: string; expiresAt: string } }>(target, EXPORT, { userId })).exportUserData;
      const url = `${target.baseUrl}${requested.downloadUrl}`;
      const out = path.resolve(io.cwd, opts.out ?? `muninn-export-${userId}.tar.gz`);
      const deadline = Date.now() + 10 * 60_000;
      for (;;) {
        // HEAD tells whether the archive is built without using the one-time link up.
        const head = await fetch(url, { method: 'HEAD' });
        if (head.status === 200) break;
        if (head.status !== 409 || Date.now() > deadline) throw new CliError(`The export did not complete (the link answered ${head.status}).`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const res = await fetch(url);
      if (res.status !== 200 || !res.body) throw new CliError(`The download failed (${res.status}).`);
      await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), createWriteStream(out, { mode: 0o600 }));
      println(io.stdout, `Export of ${userId} written to ${out}`);
    });
  users
    .command('erase')
    .argument('<userId>', 'the user to erase')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--url <url>', 'server URL (default http://127.0.0.1:<server.port>)')
    .option('--token <token>', 'API token (default env MUNINN_TOKEN, else <data_dir>/owner.token)')
    .description("erase everything of a user (rows, memory index, Redis keys, files) on the running server")
    .action(async (userId: string, opts: { yes?: boolean; url?: string; token?: string }) => {
      const { io } = run;
      const target = resolveChatTarget(io, { url: opts.url, token: opts.token, history: false });
      if (!opts.yes) {
        const answer = await ask(io, `Erase user ${userId} and all their data for good? [y/N] `);
        if (!/^y(es)?$/i.test(answer)) {
          println(io.stderr, 'Cancelled; nothing was erased.');
          run.exitCode = 1;
          return;
        }
      }
      const report = (await call<{ eraseUser: { existed: boolean; rows: number; tables: Record<string, number>; outside: Record<string, number> } }>(target, ERASE, { userId })).eraseUser;
      const outside = Object.entries(report.outside).map(([k, v]) => `${k} ${v}`).join(', ');
      println(io.stdout, report.existed ? `Erased ${userId}: ${report.rows} rows (${Object.entries(report.tables).map(([k, v]) => `${k} ${v}`).join(', ')}); ${outside}.` : `No user ${userId} any more; swept what was left (${outside}).`);
    });
}
