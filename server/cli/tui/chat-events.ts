// === What `muninn chat` reads from the server: the sessionEvents union and the Turn of sendMessage
// Hand-written (the CLI is a plain GraphQL client; it does not import the server's modules) and parsed at
// the boundary, so a server that answers something else fails with a message naming the field.

/** The subscription document: every member of the `SessionEvent` union with the fields the client uses. */
export const SESSION_EVENTS_SUBSCRIPTION = /* GraphQL */ `
  subscription TuiSessionEvents($sessionId: ID!, $afterSeq: Int) {
    sessionEvents(sessionId: $sessionId, afterSeq: $afterSeq) {
      __typename
      ... on TurnStarted { seq turnId messageIds }
      ... on ReplyDelta { seq turnId text }
      ... on ToolCallEvent { seq turnId callId tool phase outcome summary }
      ... on MessageAdded { seq messageId role content }
      ... on TurnFinished { seq turnId status replyMessageId error }
      ... on SessionRotated { seq previousSessionId newSessionId reason }
      ... on Notice { seq level text }
    }
  }
`;

export type ChatEvent =
  | { type: 'TurnStarted'; seq: number; turnId: string; messageIds: string[] }
  | { type: 'ReplyDelta'; seq: number; turnId: string; text: string }
  | { type: 'ToolCallEvent'; seq: number; turnId: string; callId: string; tool: string; phase: string; outcome: string | null; summary: string | null }
  | { type: 'MessageAdded'; seq: number; messageId: string; role: string; content: string }
  | { type: 'TurnFinished'; seq: number; turnId: string; status: string; replyMessageId: string | null; error: string | null }
  | { type: 'SessionRotated'; seq: number; previousSessionId: string; newSessionId: string; reason: string }
  | { type: 'Notice'; seq: number; level: string; text: string };

/** What `sendMessage` answers: the session the message went to and, for slash commands, the answer. */
export interface SentTurn {
  sessionId: string;
  messageId: string | null;
  status: string;
  duplicate: boolean;
  reply: string | null;
}

/** The token's user, as `me` reports it. */
export interface ChatUser {
  id: string;
  displayName: string;
  trust: string;
}

/** A value from the server that does not have the expected shape. */
export class ChatProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChatProtocolError';
  }
}

type Json = Record<string, unknown>;

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function obj(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ChatProtocolError(`${what} must be an object, got ${describe(value)}`);
  return value as Json;
}

function str(o: Json, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new ChatProtocolError(`${what}.${key} must be a string, got ${describe(v)}`);
  return v;
}

function optStr(o: Json, key: string, what: string): string | null {
  const v = o[key];
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new ChatProtocolError(`${what}.${key} must be a string or null, got ${describe(v)}`);
  return v;
}

function int(o: Json, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new ChatProtocolError(`${what}.${key} must be an integer, got ${describe(v)}`);
  return v;
}

function bool(o: Json, key: string, what: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean') throw new ChatProtocolError(`${what}.${key} must be a boolean, got ${describe(v)}`);
  return v;
}

/** Parses one `sessionEvents` value; null for union members this client does not know (newer servers). */
export function parseChatEvent(value: unknown): ChatEvent | null {
  const o = obj(value, 'sessionEvents');
  const type = str(o, '__typename', 'sessionEvents');
  const what = type;
  const seq = int(o, 'seq', what);
  switch (type) {
    case 'TurnStarted': {
      const ids = o.messageIds;
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) throw new ChatProtocolError(`TurnStarted.messageIds must be a list of strings, got ${describe(ids)}`);
      return { type, seq, turnId: str(o, 'turnId', what), messageIds: ids as string[] };
    }
    case 'ReplyDelta':
      return { type, seq, turnId: str(o, 'turnId', what), text: str(o, 'text', what) };
    case 'ToolCallEvent':
      return {
        type,
        seq,
        turnId: str(o, 'turnId', what),
        callId: str(o, 'callId', what),
        tool: str(o, 'tool', what),
        phase: str(o, 'phase', what),
        outcome: optStr(o, 'outcome', what),
        summary: optStr(o, 'summary', what),
      };
    case 'MessageAdded':
      return { type, seq, messageId: str(o, 'messageId', what), role: str(o, 'role', what), content: str(o, 'content', what) };
    case 'TurnFinished':
      return { type, seq, turnId: str(o, 'turnId', what), status: str(o, 'status', what), replyMessageId: optStr(o, 'replyMessageId', what), error: optStr(o, 'error', what) };
    case 'SessionRotated':
      return { type, seq, previousSessionId: str(o, 'previousSessionId', what), newSessionId: str(o, 'newSessionId', what), reason: str(o, 'reason', what) };
    case 'Notice':
      return { type, seq, level: str(o, 'level', what), text: str(o, 'text', what) };
    default:
      return null;
  }
}

/** Parses the `sendMessage` result. */
export function parseSentTurn(value: unknown): SentTurn {
  const o = obj(value, 'sendMessage');
  return {
    sessionId: str(o, 'sessionId', 'sendMessage'),
    messageId: optStr(o, 'messageId', 'sendMessage'),
    status: str(o, 'status', 'sendMessage'),
    duplicate: bool(o, 'duplicate', 'sendMessage'),
    reply: optStr(o, 'reply', 'sendMessage'),
  };
}

/** Parses the `me` result. */
export function parseChatUser(value: unknown): ChatUser {
  const o = obj(value, 'me');
  return { id: str(o, 'id', 'me'), displayName: str(o, 'displayName', 'me'), trust: str(o, 'trust', 'me') };
}
