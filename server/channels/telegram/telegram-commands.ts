import type { BotCommand } from 'grammy/types';

/**
 * The slash commands offered in Telegram's command menu (DESIGN §4): those the server answers today.
 * Add /compact, /memories and /beats here when they are implemented.
 */
export const TELEGRAM_COMMANDS: readonly BotCommand[] = [
  { command: 'help', description: 'What I can do' },
  { command: 'whoami', description: 'Who you are to me' },
  { command: 'status', description: 'Model, context use, tokens, queue' },
  { command: 'new', description: 'Start a new session' },
  { command: 'stop', description: 'Stop the running turn' },
  { command: 'usage', description: 'Tokens used in this session' },
  { command: 'tools', description: 'Tools you may use' },
  { command: 'skills', description: 'Skills you may use' },
  { command: 'skill', description: 'Use a skill for your next message' },
  { command: 'approve', description: 'Approve a pairing code or a tool call' },
  { command: 'trust', description: 'Set the trust of a user (admins)' },
];
