import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AppConfig } from '../../config';
import { OWNER_TOKEN_FILE } from '../../modules/auth';
import { loadCliConfig } from '../cli-app';
import { CliError, type CliIO } from '../cli-io';

/** The options of `muninn chat`. */
export interface ChatCommandOptions {
  url?: string;
  token?: string;
  /** false with `--no-history`. @default true */
  history?: boolean;
}

/** Where and as whom `muninn chat` connects, and where it keeps its input history. */
export interface ChatTarget {
  /** `http(s)://host:port[/prefix]`, without `/graphql`. */
  baseUrl: string;
  token: string;
  /** Where the token came from, for messages: `--token`, `MUNINN_TOKEN` or the file. */
  tokenSource: string;
  /** null with `--no-history`. */
  historyFile: string | null;
}

/** The name of the history file in the data folder. */
export const HISTORY_FILE = 'tui-history';

/** `--url` as a base URL: a scheme is added when missing, a trailing `/graphql` or `/` is dropped. */
export function normalizeServerUrl(raw: string): string {
  const text = raw.trim();
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    throw new CliError(`--url "${raw}" is not a URL. Use the server's address, e.g. --url http://127.0.0.1:4000.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`--url "${raw}" must start with http:// or https:// (the WebSocket address is derived from it).`);
  }
  const prefix = url.pathname.replace(/\/+$/, '').replace(/\/graphql$/, '');
  return `${url.origin}${prefix}`;
}

/**
 * Resolves the server URL (`--url`, else `http://127.0.0.1:<server.port>`, PORT overriding the config,
 * 4000 by default), the token (`--token`, else `MUNINN_TOKEN`, else `<data_dir>/owner.token`) and the
 * history file (`<data_dir>/tui-history` when the data folder exists, else `~/.muninn_history`). The
 * config is read only when a value needs it; a missing token is a CliError that says how to get one.
 */
export function resolveChatTarget(io: CliIO, opts: ChatCommandOptions): ChatTarget {
  let config: AppConfig | undefined;
  const cfg = (): AppConfig => (config ??= loadCliConfig(io));

  const baseUrl = opts.url ? normalizeServerUrl(opts.url) : `http://127.0.0.1:${cfg().server.port || 4000}`;

  let token = opts.token?.trim() ?? '';
  let tokenSource = '--token';
  if (opts.token !== undefined && !token) throw new CliError('--token is empty.');
  if (!token && io.env.MUNINN_TOKEN?.trim()) {
    token = io.env.MUNINN_TOKEN.trim();
    tokenSource = 'MUNINN_TOKEN';
  }
  if (!token) {
    const file = path.join(cfg().data_dir, OWNER_TOKEN_FILE);
    tokenSource = file;
    if (!existsSync(file)) {
      throw new CliError(
        `No API token: pass --token <token>, set MUNINN_TOKEN, or run where the server's data folder is (${file} does not exist). ` +
          'Create a token with "muninn token create --user <id|owner>".',
      );
    }
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new CliError(`Cannot read the owner token from ${file}: ${(err as Error).message}`);
    }
    if (!token) throw new CliError(`${file} is empty. Pass --token <token> or set MUNINN_TOKEN.`);
  }

  let historyFile: string | null = null;
  if (opts.history !== false) {
    let dataDir: string | null = null;
    try {
      dataDir = cfg().data_dir;
    } catch {
      // An unreadable config only costs the history its usual place.
    }
    historyFile =
      dataDir && existsSync(dataDir) ? path.join(dataDir, HISTORY_FILE) : path.join(io.env.HOME || os.homedir(), '.muninn_history');
  }
  return { baseUrl, token, tokenSource, historyFile };
}
