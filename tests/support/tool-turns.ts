import { Message } from '../../server/modules/sessions';
import { eventually, send } from './chat-helpers';
import type { GraphQLTestClient } from './graphql-client';
import type { TestApp } from './test-app';

/**
 * Waits for the stored final reply to the message `sent` (the session's last ASSISTANT message answering it,
 * with no tool calls left) and returns its text.
 */
export async function finalReply(t: TestApp, sent: { sessionId: string; messageId: string | null }, what = 'the reply'): Promise<string> {
  const ctx = t.app.systemCtx('test');
  const reply = await eventually(
    async () => {
      const rows = await t.app.db.repo(ctx, Message).find({ where: { sessionId: sent.sessionId, role: 'ASSISTANT' as never }, order: { id: 'ASC' } });
      const last = rows[rows.length - 1];
      return last && last.replyToId === sent.messageId && !(last.toolCalls as unknown[] | null)?.length ? last : undefined;
    },
    30_000,
    what,
  );
  return reply.content;
}

/** Sends `text` as `client` and waits for the stored final reply (tool calls done). */
export async function turn(t: TestApp, client: GraphQLTestClient, text: string): Promise<string> {
  return finalReply(t, await send(client, text), `the reply to "${text}"`);
}
