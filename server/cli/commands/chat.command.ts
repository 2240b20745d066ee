import type { Command } from 'commander';
import { trustAtLeast, TrustLevel } from '../../common/trust';
import { CliError, println, type CliIO, type CliRun } from '../cli-io';
import { ChatApi, ChatApiError, ServerUnreachableError } from '../tui/chat-api';
import type { ChatUser } from '../tui/chat-events';
import { ChatSession, type SignalSource } from '../tui/chat-session';
import { resolveChatTarget, type ChatCommandOptions } from '../tui/chat-target';
import { InputHistory } from '../tui/input-history';

/** What `muninn chat` takes from its process besides the CLI streams; tests pass fakes. */
export interface ChatCommandDeps {
  /** Source of SIGINT signals. @default process */
  signals?: SignalSource;
}

function isTTY(stream: unknown): boolean {
  return (stream as { isTTY?: boolean } | null)?.isTTY === true;
}

/**
 * `muninn chat [--url <url>] [--token <token>] [--no-history]`: the terminal client (DESIGN §8). It talks
 * to a running server over GraphQL like any client, as the token's user on the `tui` channel. Before the
 * prompt it checks the token with `me`, so an unreachable server, a rejected token or a user below
 * MEMBER exit 1 with a message that says what to do.
 */
export function registerChatCommand(program: Command, run: CliRun, deps: ChatCommandDeps = {}): void {
  program
    .command('chat')
    .description('chat with a running server in the terminal (Ctrl-C stops a reply, Ctrl-C again or Ctrl-D quits)')
    .option('--url <url>', 'server address (default http://127.0.0.1:<PORT or 4000>)')
    .option('--token <token>', 'API token (default env MUNINN_TOKEN, else <data_dir>/owner.token)')
    .option('--no-history', 'do not read or write the input history file')
    .action(async (opts: ChatCommandOptions) => {
      run.exitCode = await runChat(run.io, opts, deps);
    });
}

/** Connects, checks the token and runs the conversation; returns the exit code. */
export async function runChat(io: CliIO, opts: ChatCommandOptions, deps: ChatCommandDeps = {}): Promise<number> {
  const target = resolveChatTarget(io, opts);
  const api = new ChatApi({ baseUrl: target.baseUrl, token: target.token });
  const user = await checkToken(api, target.baseUrl, target.tokenSource);
  const terminal = isTTY(io.stdin) && isTTY(io.stdout);
  println(
    io.stderr,
    `Connected to ${target.baseUrl} as ${user.displayName} (${user.trust}). ` +
      'Type a message, or /help for commands. Ctrl-C stops a reply; Ctrl-C again or Ctrl-D quits.',
  );
  const session = new ChatSession(
    { input: io.stdin, output: io.stdout, errors: io.stderr, terminal, signals: deps.signals ?? process },
    { api, history: target.historyFile ? new InputHistory(target.historyFile) : null },
  );
  return session.run();
}

async function checkToken(api: ChatApi, baseUrl: string, tokenSource: string): Promise<ChatUser> {
  let user: ChatUser;
  try {
    user = await api.me();
  } catch (err) {
    if (err instanceof ServerUnreachableError) {
      throw new CliError(`Cannot reach the Muninn server at ${baseUrl} (${err.reason}). Is it running ("muninn serve")? Use --url to point elsewhere.`);
    }
    if (err instanceof ChatApiError && err.code === 'UNAUTHENTICATED') {
      throw new CliError(`The server at ${baseUrl} rejected the API token from ${tokenSource}: ${err.message} Create one with "muninn token create --user <id|owner>".`);
    }
    if (err instanceof ChatApiError) throw new CliError(`The server at ${baseUrl} refused: ${err.message}${err.code ? ` (${err.code})` : ''}`);
    throw err;
  }
  const known = (Object.values(TrustLevel) as string[]).includes(user.trust);
  if (known && !trustAtLeast(user.trust as TrustLevel, TrustLevel.MEMBER)) {
    throw new CliError(`${user.displayName} is ${user.trust}; chatting needs MEMBER or higher. Ask an ADMIN to raise your trust.`);
  }
  return user;
}
