import { dataOf, type GraphQLTestClient } from './graphql-client';
import { CreateApiTokenDocument, CreateUserDocument } from './graphql/generated';

export const SEND_MESSAGE = /* GraphQL */ `
  mutation SendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) { sessionId messageId status duplicate reply }
  }
`;

export interface SentTurn {
  sessionId: string;
  messageId: string | null;
  status: string;
  duplicate: boolean;
  reply: string | null;
}

/** Sends a chat message through GraphQL `sendMessage` and returns the Turn. */
export async function send(client: GraphQLTestClient, text: string, sessionId?: string): Promise<SentTurn> {
  const res = await client.http<{ sendMessage: SentTurn }, unknown>(SEND_MESSAGE, { input: { text, sessionId } });
  return dataOf(res).sendMessage;
}

/** Creates a user with a trust level and returns its id and a fresh API token (as the owner). */
export async function createUserWithToken(owner: GraphQLTestClient, displayName: string, trust: string): Promise<{ id: string; token: string }> {
  const user = dataOf(await owner.http(CreateUserDocument, { input: { displayName, trust: trust as never } })).createUser;
  const token = dataOf(await owner.http(CreateApiTokenDocument, { userId: user.id, name: 'test' })).createApiToken.token;
  return { id: user.id, token };
}

/** Polls `check` until it returns a value (not undefined/false) or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
