import type { FakeChatReply, FakeOpenAIServer, RecordedRequest } from '../../support/fakes/fake-openai-server';
import type { GraphQLTestClient } from '../../support/graphql-client';
import { EventCollector, type EventRecord } from '../../support/session-events';

/** What kind of call the fake model got: a turn of the main agent, or one of the summarizer role's. */
export type CallKind = 'main' | 'extract' | 'compact';

function systemText(req: RecordedRequest): string {
  const system = req.body?.messages?.find((m) => m.role === 'system');
  return typeof system?.content === 'string' ? system.content : '';
}

export function callKind(req: RecordedRequest): CallKind {
  const system = systemText(req);
  if (system.startsWith('You maintain the long-term memory')) return 'extract';
  if (system.startsWith('You compact a conversation')) return 'compact';
  return 'main';
}

/** The conversation the summarizer was given (its user message). */
export function summarizerInput(req: RecordedRequest): string {
  const user = req.body?.messages?.find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : '';
}

export function lastUserText(req: RecordedRequest): string {
  const users = (req.body?.messages ?? []).filter((m) => m.role === 'user');
  const content = users[users.length - 1]?.content;
  if (typeof content === 'string') return content;
  // Vision messages: the text parts only.
  return Array.isArray(content) ? content.map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : '')).join('') : '';
}

export interface SummarizerScript {
  /** Answer to a memory-extraction call. @default no memories */
  extract?: (req: RecordedRequest) => string;
  /** Answer to a compaction call. @default a five-section summary naming the last user line */
  compact?: (req: RecordedRequest) => string;
  /** Answer to a main call (a turn). @default `Echo: <last user message>` */
  main?: (req: RecordedRequest) => FakeChatReply;
}

export const FIVE_SECTION_SUMMARY = [
  '## Decisions',
  '- Use PostgreSQL 16 for the Falcon project.',
  '## Open tasks',
  '- Write the migration for the orders table.',
  '## Constraints',
  '- Budget is 500 EUR per month.',
  '## Pending asks',
  '- Which region should host the database?',
  '## Exact identifiers',
  '- `orders_v2`',
].join('\n');

/** Makes the fake model answer by call kind; scripted replies (`enqueue`) still come first. */
export function scriptModel(model: FakeOpenAIServer, script: SummarizerScript = {}): void {
  model.setDefault((req) => {
    switch (callKind(req)) {
      case 'extract':
        return { text: script.extract?.(req) ?? '{"memories":[]}' };
      case 'compact':
        return { text: script.compact?.(req) ?? FIVE_SECTION_SUMMARY };
      case 'main':
        return script.main?.(req) ?? { text: `Echo: ${lastUserText(req)}` };
    }
  });
}

export function callsOf(model: FakeOpenAIServer, kind: CallKind): RecordedRequest[] {
  return model.chatRequests().filter((r) => callKind(r) === kind);
}

/** Distinct words `<seed>0 <seed>1 …`, so texts differ and their size is predictable. */
export const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(' ');

/** Waits until the turn answering `messageId` finished in `sessionId`; returns that session's events. */
export async function turnOf(client: GraphQLTestClient, sessionId: string, messageId: string): Promise<EventRecord[]> {
  const events = new EventCollector(client.wsClient(), sessionId);
  try {
    return await events.waitFor((es) => {
      const started = es.find((e) => e.__typename === 'TurnStarted' && (e.messageIds as string[]).includes(messageId));
      return !!started && es.some((e) => e.__typename === 'TurnFinished' && e.turnId === started.turnId);
    }, 20_000);
  } finally {
    events.stop();
  }
}
