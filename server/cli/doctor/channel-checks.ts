import type { AppConfig } from '../../config';
import type { CheckResult } from './check';

/** Telegram: when the channel is enabled, a bot token is set and looks like one from @BotFather. */
export function checkTelegram(config: AppConfig): CheckResult {
  const telegram = config.channels.telegram;
  if (!telegram.enabled) return { name: 'telegram', verdict: 'ok', message: 'channel disabled' };
  if (!telegram.bot_token) {
    return {
      name: 'telegram',
      verdict: 'FAIL',
      message: 'the channel is enabled but has no bot token',
      hint: 'set TELEGRAM_BOT_TOKEN (or channels.telegram.bot_token), or disable channels.telegram',
    };
  }
  if (!/^\d+:[A-Za-z0-9_-]{20,}$/.test(telegram.bot_token)) {
    return {
      name: 'telegram',
      verdict: 'warn',
      message: 'the bot token does not look like "<digits>:<secret>"',
      hint: 'copy it again from @BotFather',
    };
  }
  return { name: 'telegram', verdict: 'ok', message: 'channel enabled; bot token present' };
}
