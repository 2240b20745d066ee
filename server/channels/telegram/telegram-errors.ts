import { GrammyError } from 'grammy';
import { PermanentDeliveryError } from '../channel.types';

/**
 * A one-line description of a Bot API failure for `status().lastError` and the logs, with a hint for the
 * cases an operator must act on (409: another poller, 401: a wrong token). Never contains the token.
 */
export function describeTelegramError(err: unknown, token: string | null): string {
  if (err instanceof GrammyError && err.error_code === 409) {
    return /webhook/i.test(err.description)
      ? '409 Conflict: a webhook is set for this bot token by another process'
      : '409 Conflict: another process is polling this bot token; stop the other instance (or revoke the token)';
  }
  if (err instanceof GrammyError && err.error_code === 401) return '401 Unauthorized: Telegram rejected the bot token; check channels.telegram.bot_token';
  if (err instanceof GrammyError) return `${err.error_code}: ${err.description} (${err.method})`;
  return withoutToken(err, token).message;
}

/**
 * The error with the bot token cut out of its message. Defence in depth: grammY keeps URLs out of its
 * errors already, but an error from a file download or a proxy might not.
 */
export function withoutToken(err: unknown, token: string | null): Error {
  const message = err instanceof Error ? err.message : String(err);
  // 403: blocked by the user or kicked from the group; 400 chat not found: no retry can deliver it.
  if (err instanceof GrammyError && (err.error_code === 403 || /chat not found|user is deactivated/i.test(err.description))) {
    return new PermanentDeliveryError(token ? message.split(token).join('[bot token]') : message);
  }
  if (!token || !message.includes(token)) return err instanceof Error ? err : new Error(message);
  return new Error(message.split(token).join('[bot token]'));
}
