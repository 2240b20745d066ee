/**
 * Invalid input is answered with BAD_USER_INPUT naming the field (issue 2 acceptance 2), over HTTP and
 * WebSocket, and never reaches the database as an internal error.
 */
import { randomUUID } from 'node:crypto';
import { dataOf, type GqlError, type GqlResult, type GraphQLTestClient } from '../support/graphql-client';
import {
  CreateApiTokenDocument,
  CreateMemoryDocument,
  CreateUserDocument,
  LinkIdentityDocument,
  MemoriesDocument,
  MessagesDocument,
  SessionsDocument,
  SetPluginSettingDocument,
  SetUserTrustDocument,
  UpdateMemoryDocument,
  UsersDocument,
} from '../support/graphql/generated';
import { createMemoryFor, createUser, insertSession } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
let owner: GraphQLTestClient;
let ownerId: string;

beforeAll(async () => {
  t = await startTestApp();
  owner = t.client(t.ownerToken);
  ownerId = dataOf(await owner.http(UsersDocument, { trust: 'OWNER' })).users.edges[0]!.node.id;
});

afterAll(async () => {
  await owner.close();
  await t.close();
});

/** Every name the error gives for the bad field: `extensions.field`, `extensions.fields[].field` and the message. */
function namesField(error: GqlError | undefined, field: string): boolean {
  if (!error) return false;
  const ext = error.extensions ?? {};
  const fields = Array.isArray(ext.fields)
    ? (ext.fields as Array<{ field?: string }>).map((f) => f.field)
    : [];
  return (
    ext.field === field || fields.includes(field) || new RegExp(`\\b\\$?${field}\\b`).test(error.message)
  );
}

function expectBadInput(result: GqlResult<unknown>, field: string): void {
  expect(result.errors).toHaveLength(1);
  const error = result.errors![0]!;
  expect(error.extensions?.code).toBe('BAD_USER_INPUT');
  expect(namesField(error, field)).toBe(true);
  expect(result.data ?? null).toBeNull();
}

describe.each([
  ['HTTP', (c: GraphQLTestClient) => c.http.bind(c)],
  ['WebSocket', (c: GraphQLTestClient) => c.wsRun.bind(c)],
] as const)('over %s', (_transport, via) => {
  const send = <T, V>(
    doc: import('@graphql-typed-document-node/core').TypedDocumentNode<T, V>,
    variables: V,
  ) => via(owner)(doc, variables) as Promise<GqlResult<T>>;

  it('createUser with an empty displayName names displayName', async () => {
    expectBadInput(await send(CreateUserDocument, { input: { displayName: '' } }), 'displayName');
  });

  it('createUser with a blank displayName names displayName', async () => {
    const result = await send(CreateUserDocument, { input: { displayName: '   ' } });
    expectBadInput(result, 'displayName');
    expect(result.errors![0]!.extensions?.field).toBe('displayName');
  });

  it('createUser with a 300-character displayName names displayName and the limit', async () => {
    const result = await send(CreateUserDocument, { input: { displayName: 'x'.repeat(300) } });
    expectBadInput(result, 'displayName');
    expect(result.errors![0]!.message).toMatch(/200/);
  });

  it('createMemory with importance 2 names importance', async () => {
    expectBadInput(
      await send(CreateMemoryDocument, { input: { content: 'a', importance: 2 } }),
      'importance',
    );
  });

  it('createMemory with empty content names content', async () => {
    expectBadInput(await send(CreateMemoryDocument, { input: { content: '' } }), 'content');
  });

  it('createMemory for a user that does not exist is NOT_FOUND, not an internal error', async () => {
    const result = await send(CreateMemoryDocument, { input: { content: 'a', userId: randomUUID() } });
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(result.errors?.[0]?.message).toMatch(/User/);
  });

  it('createMemory in the group scope without groupId names groupId', async () => {
    expectBadInput(await send(CreateMemoryDocument, { input: { content: 'a', scope: 'GROUP' } }), 'groupId');
  });

  it('updateMemory with importance -0.5 names importance', async () => {
    const id = await createMemoryFor(owner, ownerId);
    expectBadInput(await send(UpdateMemoryDocument, { id, input: { importance: -0.5 } }), 'importance');
  });

  it('setUserTrust with an invalid enum value in variables names the variable', async () => {
    const target = await createUser(owner, 'MEMBER');
    const result = await send(SetUserTrustDocument, { userId: target, trust: 'SUPERUSER' as never });
    expectBadInput(result, 'trust');
    expect(result.errors![0]!.message).toMatch(/SUPERUSER/);
  });

  it('users(first: -1) names first', async () => {
    expectBadInput(await send(UsersDocument, { first: -1 }), 'first');
  });

  it('users(first: 100000) names first and the maximum', async () => {
    const result = await send(UsersDocument, { first: 100000 });
    expectBadInput(result, 'first');
  });

  it('sessions(first: 201) above graphql.max_page_size names first', async () => {
    const result = await send(SessionsDocument, { first: 201 });
    expectBadInput(result, 'first');
    expect(result.errors![0]!.message).toMatch(/200/);
  });

  it('a garbage `after` cursor names after', async () => {
    expectBadInput(await send(MemoriesDocument, { after: 'garbage!' }), 'after');
  });

  it('a cursor that decodes to nothing names after', async () => {
    expectBadInput(await send(UsersDocument, { after: Buffer.from('id:').toString('base64url') }), 'after');
  });

  it('messages with a garbage cursor names after', async () => {
    const { sessionId } = await insertSession(t, ownerId);
    expectBadInput(await send(MessagesDocument, { sessionId, after: '%%%' }), 'after');
  });

  it('linkIdentity with an unknown channel names channel and lists the valid ones', async () => {
    const target = await createUser(owner, 'MEMBER');
    const result = await send(LinkIdentityDocument, {
      input: { userId: target, channel: 'irc', handle: '42' },
    });
    expectBadInput(result, 'channel');
    expect(result.errors![0]!.message).toMatch(/telegram.*whatsapp.*web.*tui/);
  });

  it('linkIdentity with a blank handle names handle', async () => {
    const target = await createUser(owner, 'MEMBER');
    expectBadInput(
      await send(LinkIdentityDocument, { input: { userId: target, channel: 'telegram', handle: '  ' } }),
      'handle',
    );
  });

  it('setPluginSetting with an invalid plugin name names plugin', async () => {
    expectBadInput(
      await send(SetPluginSettingDocument, { input: { plugin: 'Not A Name!', enabled: true } }),
      'plugin',
    );
  });

  it('createApiToken with an empty name names name', async () => {
    expectBadInput(await send(CreateApiTokenDocument, { userId: ownerId, name: '  ' }), 'name');
  });

  it('createApiToken with a 500-character name names name (the column holds 100)', async () => {
    expectBadInput(await send(CreateApiTokenDocument, { userId: ownerId, name: 'n'.repeat(500) }), 'name');
  });

  it('a missing required variable names it', async () => {
    const result = await send(CreateUserDocument, {} as never);
    expectBadInput(result, 'input');
  });

  it('setUserTrust on an unknown user is NOT_FOUND', async () => {
    const result = await send(SetUserTrustDocument, { userId: randomUUID(), trust: 'MEMBER' });
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('demoting the last OWNER is a CONFLICT that says what to do', async () => {
    const result = await send(SetUserTrustDocument, { userId: ownerId, trust: 'ADMIN' });
    expect(result.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(result.errors?.[0]?.message).toMatch(/last OWNER/);
  });
});

it('nothing above reached the server as an unexpected error', () => {
  expect(t.logs.text).not.toMatch(/unexpected error in GraphQL operation/);
});
