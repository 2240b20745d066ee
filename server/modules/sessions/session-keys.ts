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
}

export function sessionKeyFor(input: SessionKeyInput): string {
  if (input.chatKind === 'group') return `agent:main:${input.channel}:group:${input.chatId}`;
  if (input.isOwner && input.dmScope === 'main') return 'agent:main:main';
  if (input.channel === 'web' || input.channel === 'tui') return `${input.channel}:${input.userId}`;
  return `agent:main:${input.channel}:dm:${input.userId}`;
}
