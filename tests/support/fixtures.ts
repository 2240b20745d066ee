import { randomUUID } from 'node:crypto';
import {
  ChatKind,
  Message,
  MessageRole,
  MessageStatus,
  Session,
  SessionStatus,
} from '../../server/modules/sessions';
import { dataOf, type GraphQLTestClient } from './graphql-client';
import {
  CreateApiTokenDocument,
  CreateMemoryDocument,
  CreateUserDocument,
  type TrustLevel,
} from './graphql/generated';
import type { TestApp } from './test-app';

export interface TestUser {
  id: string;
  trust: TrustLevel;
  displayName: string;
  token: string;
  tokenId: string;
}

/** Creates a user and an API token for it through the API, as the given (OWNER) client. */
export async function createUserWithToken(
  owner: GraphQLTestClient,
  trust: TrustLevel,
  displayName = `${trust} ${randomUUID().slice(0, 6)}`,
): Promise<TestUser> {
  const user = dataOf(await owner.http(CreateUserDocument, { input: { displayName, trust } })).createUser;
  const created = dataOf(
    await owner.http(CreateApiTokenDocument, { userId: user.id, name: `${displayName} token` }),
  ).createApiToken;
  return { id: user.id, trust: user.trust, displayName, token: created.token, tokenId: created.apiToken.id };
}

/** A user without a token, created through the API. */
export async function createUser(
  owner: GraphQLTestClient,
  trust: TrustLevel,
  displayName = `${trust} ${randomUUID().slice(0, 6)}`,
): Promise<string> {
  return dataOf(await owner.http(CreateUserDocument, { input: { displayName, trust } })).createUser.id;
}

/** A user-scoped memory of `userId`, created through the API by an OWNER client. */
export async function createMemoryFor(
  owner: GraphQLTestClient,
  userId: string,
  content = `note ${randomUUID()}`,
): Promise<string> {
  return dataOf(
    await owner.http(CreateMemoryDocument, { input: { content, userId, scope: 'USER', type: 'FACT' } }),
  ).createMemory.id;
}

/**
 * A session with one user message, written straight to the database: there is no write API for sessions
 * yet (they come from the message pipeline).
 */
export async function insertSession(
  t: TestApp,
  userId: string,
  text = 'hello',
): Promise<{ sessionId: string; messageId: string }> {
  const ctx = t.app.systemCtx('test');
  const now = new Date();
  const sessions = t.app.db.repo(ctx, Session);
  const session = await sessions.save(
    sessions.create({
      key: `web:${userId}:${randomUUID().slice(0, 8)}`,
      userId,
      channel: 'web',
      chatId: userId,
      chatKind: ChatKind.DM,
      status: SessionStatus.ACTIVE,
      startedAt: now,
      endedAt: null,
      lastActivityAt: now,
      previousSessionId: null,
      messageCount: 1,
    }),
  );
  const messages = t.app.db.repo(ctx, Message);
  const message = await messages.save(
    messages.create({
      sessionId: session.id,
      userId,
      role: MessageRole.USER,
      content: text,
      status: MessageStatus.DONE,
      dedupeKey: null,
      replyToId: null,
      turnId: null,
      toolCalls: null,
      toolCallId: null,
    }),
  );
  return { sessionId: session.id, messageId: message.id };
}
