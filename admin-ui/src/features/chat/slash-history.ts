import type { ChatItem } from './use-chat';

/**
 * Slash commands answer at once and are not part of the stored conversation (they never reach the model),
 * so this browser keeps the last ones of each session and puts them back into the transcript on reload.
 */
const KEY = (sessionId: string) => `muninn.slash.${sessionId}`;
const KEEP = 50;

export function loadSlashItems(sessionId: string): ChatItem[] {
  try {
    const raw = localStorage.getItem(KEY(sessionId));
    return raw ? (JSON.parse(raw) as ChatItem[]).filter((i) => i && i.kind === 'message') : [];
  } catch {
    return [];
  }
}

export function saveSlashExchange(sessionId: string, command: ChatItem, reply: ChatItem): void {
  try {
    const items = [...loadSlashItems(sessionId), command, reply].slice(-KEEP * 2);
    localStorage.setItem(KEY(sessionId), JSON.stringify(items));
  } catch {
    // Storage full or off: the answer is still on screen until the next reload.
  }
}

/** History and kept slash exchanges in time order. */
export function withSlashItems(history: ChatItem[], sessionId: string): ChatItem[] {
  const slash = loadSlashItems(sessionId).filter((s) => !history.some((h) => h.key === s.key));
  return [...history, ...slash].sort((a, b) => a.at.localeCompare(b.at));
}
