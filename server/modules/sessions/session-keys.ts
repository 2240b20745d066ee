/**
 * Session keys of DESIGN §4. DMs are always per user, except OWNER identities when `session.dm_scope`
 * is `main`, which share `agent:main:main` across channels.
 */
export interface SessionKeyInput {
  channel: string;
  chatKind: 'dm' | 'group';
  chatId: string;
  userId: string;
  isOwner: boolean;
  dmScope: 'per-user' | 'main';
  /** A DM key the channel names itself (the web and TUI clients: `<channel>:<userId>`). */
  clientKey?: string | null;
}

export function sessionKeyFor(input: SessionKeyInput): string {
  if (input.chatKind === 'group') return `agent:main:${input.channel}:group:${input.chatId}`;
  if (input.isOwner && input.dmScope === 'main') return 'agent:main:main';
  if (input.clientKey) return input.clientKey;
  return `agent:main:${input.channel}:dm:${input.userId}`;
}
