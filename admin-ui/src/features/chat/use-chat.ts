import { useCallback, useEffect, useRef, useState } from 'react';
import { ChatEventsDocument, ChatMessagesDocument, ChatSessionDocument, SendChatMessageDocument, SendChatVoiceNoteDocument, StopChatTurnDocument, type ChatEventsSubscription, type ChatMessagesQuery, type ImageInput } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { GraphQLRequestError } from '../../lib/graphql-client';
import { saveSlashExchange, withSlashItems } from './slash-history';

/** One line of the transcript; `at` (ISO time) keeps history and replayed events in order. */
export type ChatItem = { key: string; at: string } & (
  | { kind: 'message'; role: string; content: string; /** Transcript of a voice note of this length. */ voiceSeconds?: number | null }
  | { kind: 'streaming'; content: string }
  | { kind: 'tool'; tool: string; phase: string; outcome: string | null; summary: string | null }
  | { kind: 'notice'; level: string; text: string; approvalId: string | null; beat?: { id: string; name: string } | null }
);

/** Replaces the item with the same key in place, or inserts a new one in time order. */
function put(list: ChatItem[], item: ChatItem): ChatItem[] {
  const i = list.findIndex((x) => x.key === item.key);
  if (i >= 0) {
    const next = [...list];
    next[i] = { ...item, at: list[i]!.at };
    return next;
  }
  let at = list.length;
  while (at > 0 && list[at - 1]!.at > item.at) at--;
  return [...list.slice(0, at), item, ...list.slice(at)];
}

type Event = ChatEventsSubscription['sessionEvents'];

interface ToolCallJson {
  id?: string;
  name?: string;
  function?: { name?: string };
}

/** The web chat: history, live events (deduplicated by seq, resumed with afterSeq), send and stop. */
export function useChat() {
  const { client, me } = useAuth();
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [items, setItems] = useState<ChatItem[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<GraphQLRequestError | null>(null);
  const [running, setRunning] = useState(false);
  const seen = useRef(new Set<string>());
  /** Turns that ended: late deltas (a model call retried from the queue view) are not shown. */
  const finished = useRef(new Set<string>());
  const vars = useRef<{ sessionId: string; afterSeq: number } | null>(null);

  const upsert = useCallback((item: ChatItem) => setItems((list) => put(list, item)), []);

  const onEvent = useCallback(
    (e: Event) => {
      const v = vars.current;
      if (!v || e.seq <= v.afterSeq) return;
      v.afterSeq = e.seq; // graphql-ws re-sends these variables when it reconnects
      switch (e.__typename) {
        case 'TurnStarted':
          setRunning(true);
          break;
        case 'ReplyDelta':
          if (finished.current.has(e.turnId)) break;
          setItems((list) => {
            const key = `stream:${e.turnId}`;
            const cur = list.find((x) => x.key === key) as Extract<ChatItem, { kind: 'streaming' }> | undefined;
            return put(list, { kind: 'streaming', key, at: e.at, content: (cur?.content ?? '') + e.text });
          });
          break;
        case 'ToolCallEvent':
          upsert({ kind: 'tool', key: `tool:${e.callId}`, at: e.at, tool: e.tool, phase: e.phase, outcome: e.outcome ?? null, summary: e.summary ?? null });
          break;
        case 'MessageAdded': {
          if (seen.current.has(e.messageId)) {
            // Replayed turn whose reply is already in the history: drop its streamed copy.
            if (e.role === 'ASSISTANT') setItems((list) => list.filter((x) => x.kind !== 'streaming'));
            break;
          }
          seen.current.add(e.messageId);
          if (e.role === 'TOOL' || !e.content) break;
          setItems((list) => {
            // The stored reply replaces the text streamed for it.
            const streaming = list.findIndex((x) => x.kind === 'streaming');
            if (e.role === 'ASSISTANT' && streaming >= 0) {
              const next = [...list];
              next[streaming] = { kind: 'message', key: `msg:${e.messageId}`, at: list[streaming]!.at, role: e.role, content: e.content };
              return next;
            }
            // A voice note's transcript replaces its "transcribing" line.
            const rest = e.voiceSeconds != null ? list.filter((x) => !x.key.startsWith('voice-pending:')) : list;
            return put(rest, { kind: 'message', key: `msg:${e.messageId}`, at: e.at, role: e.role, content: e.content, voiceSeconds: e.voiceSeconds ?? null });
          });
          break;
        }
        case 'TurnFinished':
          setRunning(false);
          finished.current.add(e.turnId);
          if (e.status === 'failed') upsert({ kind: 'notice', key: `fin:${e.turnId}`, at: e.at, level: 'error', text: `The turn failed${e.error ? `: ${e.error.replace(/\.$/, '')}` : ''}.`, approvalId: null });
          // A turn that ended without a stored reply (stopped) keeps what was streamed, without the cursor.
          setItems((list) => list.map((x) => (x.key === `stream:${e.turnId}` ? { kind: 'message', key: x.key, at: x.at, role: 'ASSISTANT', content: (x as { content: string }).content } : x)));
          break;
        case 'SessionRotated':
          upsert({ kind: 'notice', key: `rot:${e.seq}`, at: e.at, level: 'info', text: `New session (${e.reason}).`, approvalId: null });
          setSessionId(e.newSessionId);
          break;
        case 'Notice': {
          const approvalId = /^Approval needed for /.test(e.text) ? (/\/approve (\S+) allow_once/.exec(e.text)?.[1] ?? null) : null;
          const beat = e.origin?.kind === 'beat' ? { id: e.origin.id, name: e.origin.name } : null;
          upsert({ kind: 'notice', key: `notice:${e.seq}`, at: e.at, level: e.level, text: e.text, approvalId, beat });
          break;
        }
      }
    },
    [upsert],
  );

  // Find the active web session and its history.
  useEffect(() => {
    if (!client || !me) return;
    let alive = true;
    (async () => {
      try {
        const s = await client.request(ChatSessionDocument, { key: `web:${me.id}` });
        const session = s.sessions.edges[0]?.node;
        if (!session) return;
        const history: ChatItem[] = [];
        let after: string | null = null;
        for (let page = 0; page < 10; page++) {
          const m: ChatMessagesQuery = await client.request(ChatMessagesDocument, { sessionId: session.id, after });
          for (const { node } of m.messages.edges) {
            seen.current.add(node.id);
            for (const call of Array.isArray(node.toolCalls) ? (node.toolCalls as ToolCallJson[]) : []) {
              history.push({ kind: 'tool', key: `tool:${call.id}`, at: node.createdAt, tool: call.function?.name ?? call.name ?? 'tool', phase: 'finished', outcome: null, summary: null });
            }
            if (node.role !== 'TOOL' && node.content) history.push({ kind: 'message', key: `msg:${node.id}`, at: node.createdAt, role: node.role, content: node.content, voiceSeconds: node.voiceSeconds ?? null });
          }
          if (!m.messages.pageInfo.hasNextPage) break;
          after = m.messages.pageInfo.endCursor ?? null;
        }
        if (!alive) return;
        setItems(withSlashItems(history, session.id));
        setSessionId(session.id);
      } catch (e) {
        if (alive) setError(e as GraphQLRequestError);
      } finally {
        if (alive) setLoading(false);
      }
    })();
    return () => {
      alive = false;
    };
  }, [client, me]);

  // Live events of the current session.
  useEffect(() => {
    if (!client || !sessionId) return;
    const v = { sessionId, afterSeq: 0 };
    vars.current = v;
    const stop = client.subscribe(ChatEventsDocument, v, { next: (d) => onEvent(d.sessionEvents), error: setError });
    return () => {
      stop();
      if (vars.current === v) vars.current = null;
    };
  }, [client, sessionId, onEvent]);

  const send = useCallback(
    async (text: string, images: ImageInput[]) => {
      if (!client) return false;
      setError(null);
      try {
        const r = await client.request(SendChatMessageDocument, { input: { text, sessionId, images: images.length ? images : null } });
        const local = r.sendMessage.messageId ?? `local:${Date.now()}`;
        if (!seen.current.has(local)) {
          seen.current.add(local);
          upsert({ kind: 'message', key: `msg:${local}`, at: new Date().toISOString(), role: 'USER', content: images.length ? `${text}\n[${images.length} image${images.length > 1 ? 's' : ''}]` : text });
        }
        if (r.sendMessage.reply) {
          const at = new Date().toISOString();
          const reply: ChatItem = { kind: 'message', key: `reply:${local}`, at, role: 'SYSTEM', content: r.sendMessage.reply };
          upsert(reply);
          // A command's exchange is not stored with the conversation: keep it in this browser.
          if (!r.sendMessage.messageId) saveSlashExchange(r.sendMessage.sessionId, { kind: 'message', key: `msg:${local}`, at, role: 'USER', content: text }, reply);
        }
        if (r.sendMessage.sessionId !== sessionId) setSessionId(r.sendMessage.sessionId);
        return true;
      } catch (e) {
        setError(e as GraphQLRequestError);
        return false;
      }
    },
    [client, sessionId, upsert],
  );

  /** Sends a recording as a voice note: "transcribing" until its transcript arrives, or the refusal. */
  const sendVoice = useCallback(
    async (blob: Blob, mimeType: string, seconds: number) => {
      if (!client) return false;
      setError(null);
      try {
        const dataBase64 = await blobToBase64(blob);
        const r = await client.request(SendChatVoiceNoteDocument, { input: { sessionId, mimeType, dataBase64, durationSeconds: seconds } });
        const at = new Date().toISOString();
        const length = `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')}`;
        if (r.sendVoiceNote.status === 'TRANSCRIBING') {
          upsert({ kind: 'notice', key: `voice-pending:${at}`, at, level: 'info', text: `Voice note (${length}) sent, transcribing…`, approvalId: null });
        } else if (r.sendVoiceNote.reply) {
          upsert({ kind: 'message', key: `voice-refused:${at}`, at, role: 'SYSTEM', content: r.sendVoiceNote.reply });
        }
        if (r.sendVoiceNote.sessionId !== sessionId) setSessionId(r.sendVoiceNote.sessionId);
        return true;
      } catch (e) {
        setError(e as GraphQLRequestError);
        return false;
      }
    },
    [client, sessionId, upsert],
  );

  const stop = useCallback(async () => {
    if (client && sessionId) await client.request(StopChatTurnDocument, { sessionId }).catch((e) => setError(e as GraphQLRequestError));
  }, [client, sessionId]);

  return { sessionId, items, loading, error, running, send, sendVoice, stop };
}

/** The bytes of a blob as base64 (FileReader's data URL without its prefix). */
function blobToBase64(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onerror = () => reject(new Error('Cannot read the recording'));
    r.onload = () => {
      const url = String(r.result);
      resolve(url.slice(url.indexOf(',') + 1));
    };
    r.readAsDataURL(blob);
  });
}
