import type { TelegramTokenCheck } from '../../modules/channel-setup';

/** Options of {@link BotApiTokenCheck}. */
export interface BotApiTokenCheckOptions {
  /** Bot API server (`channels.telegram.api_root`). */
  apiRoot: string;
  /** How long getMe may take. @default 10000 */
  timeoutMs?: number;
}

/**
 * Asks the Bot API whom a token belongs to (`getMe`), before the console stores it. Plain fetch, so the
 * check does not load grammY; the token is in the URL only, and never in a returned reason.
 */
export class BotApiTokenCheck implements TelegramTokenCheck {
  private readonly apiRoot: string;
  private readonly timeoutMs: number;

  constructor(options: BotApiTokenCheckOptions) {
    this.apiRoot = options.apiRoot.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async check(token: string, signal?: AbortSignal): Promise<{ ok: true; username: string } | { ok: false; reason: string }> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    try {
      res = await fetch(`${this.apiRoot}/bot${token}/getMe`, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout, redirect: 'error' });
    } catch (err) {
      const why = timeout.aborted ? `no answer within ${Math.round(this.timeoutMs / 1000)} s` : describeCause(err);
      return { ok: false, reason: `the Bot API at ${this.apiRoot} could not be reached (${why.split(token).join('[bot token]')}).` };
    }
    const body = (await res.json().catch(() => null)) as { ok?: boolean; description?: string; result?: { username?: string; is_bot?: boolean } } | null;
    if (res.status === 401 || res.status === 404) return { ok: false, reason: `${res.status} ${res.status === 401 ? 'Unauthorized' : 'Not Found'}: the token is wrong or was revoked; copy it again from @BotFather.` };
    if (!res.ok || !body?.ok || !body.result?.username) {
      const description = (body?.description ?? res.statusText).split(token).join('[bot token]').slice(0, 200);
      return { ok: false, reason: `the Bot API answered ${res.status}${description ? `: ${description}` : ''}.` };
    }
    return { ok: true, username: body.result.username };
  }
}

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message ?? 'network error';
}
