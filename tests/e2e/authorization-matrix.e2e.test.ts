/**
 * Authorization matrix (DESIGN §3, issue 2 acceptance 2): every GraphQL operation, run as every trust level,
 * without a token and with an invalid token, over real HTTP; a representative subset over WebSocket.
 * Denied mutations are also checked to have changed nothing.
 */
import { randomUUID } from 'node:crypto';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient } from 'graphql-ws';
import { IsNull } from 'typeorm';
import WebSocket from 'ws';
import { ApiToken } from '../../server/modules/auth';
import { Memory } from '../../server/modules/memory';
import { PluginSetting } from '../../server/modules/plugins';
import { Identity, User } from '../../server/modules/users';
import { dataOf, type GqlResult, type GraphQLTestClient } from '../support/graphql-client';
import {
  AuditLogDocument,
  CreateApiTokenDocument,
  CreateMemoryDocument,
  CreateUserDocument,
  DeleteMemoryDocument,
  LinkIdentityDocument,
  MeDocument,
  MemoriesDocument,
  MessagesDocument,
  PluginSettingsDocument,
  RevokeApiTokenDocument,
  SessionDocument,
  SessionsDocument,
  SetPluginSettingDocument,
  SetUserTrustDocument,
  UpdateMemoryDocument,
  UserDocument,
  UsersDocument,
  type TrustLevel,
} from '../support/graphql/generated';
import {
  createMemoryFor,
  createUser,
  createUserWithToken,
  insertSession,
  type TestUser,
} from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

const LEVELS = [
  'BLOCKED',
  'GUEST',
  'MEMBER',
  'TRUSTED',
  'ADMIN',
  'OWNER',
] as const satisfies readonly TrustLevel[];
type Level = (typeof LEVELS)[number];
type CallerName = 'no token' | 'invalid token' | Level;
const CALLERS: readonly CallerName[] = ['no token', 'invalid token', ...LEVELS];

type Outcome = 'allowed' | 'UNAUTHENTICATED' | 'FORBIDDEN';
const A: Outcome = 'allowed';
const F: Outcome = 'FORBIDDEN';

/** What the case runner knows about the caller. */
interface Caller {
  name: CallerName;
  client: GraphQLTestClient;
  /** The caller's user; for no/invalid token, null. */
  user: TestUser | null;
}

type Send = <T, V>(
  client: GraphQLTestClient,
  doc: TypedDocumentNode<T, V>,
  variables?: V,
) => Promise<GqlResult<T>>;

interface Case {
  /** Expected outcome for BLOCKED, GUEST, MEMBER, TRUSTED, ADMIN, OWNER. Without a valid token: always UNAUTHENTICATED. */
  expect: readonly [Outcome, Outcome, Outcome, Outcome, Outcome, Outcome];
  /** Prepares fresh data (as OWNER / system), runs the operation as the caller and returns a verifier. */
  run(
    caller: Caller,
    send: Send,
  ): Promise<{
    result: GqlResult<unknown>;
    allowed?: (data: unknown) => void | Promise<void>;
    denied?: () => Promise<void>;
  }>;
}

let t: TestApp;
let owner: GraphQLTestClient;
const users = {} as Record<Level, TestUser>;
/** A MEMBER whose data the others try to reach. */
let other: TestUser;
let otherSessionId: string;
let otherMemoryId: string;
const ownSession = {} as Record<Level, string>;

/** A user id to act on when the caller has none (no or invalid token): someone else's. */
const selfId = (c: Caller) => c.user?.id ?? other.id;
const repo = <E extends object>(entity: new () => E) =>
  t.app.db.repo(t.app.systemCtx('test'), entity as never) as unknown as import('typeorm').Repository<E>;

const CASES: Record<string, Case> = {
  me: {
    expect: [F, A, A, A, A, A],
    async run(c, send) {
      const result = await send(c.client, MeDocument);
      return { result, allowed: (d) => expect((d as { me: { id: string } }).me.id).toBe(c.user!.id) };
    },
  },
  users: {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const result = await send(c.client, UsersDocument, { first: 100 });
      return {
        result,
        allowed: (d) =>
          expect((d as { users: { totalCount: number } }).users.totalCount).toBeGreaterThanOrEqual(8),
      };
    },
  },
  'user (self)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const result = await send(c.client, UserDocument, { id: selfId(c) });
      return { result, allowed: (d) => expect((d as { user: { id: string } }).user.id).toBe(c.user!.id) };
    },
  },
  'user (another user)': {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const result = await send(c.client, UserDocument, { id: other.id });
      return {
        result,
        allowed: (d) => {
          const user = (d as { user: { id: string; apiTokens: Array<{ id: string }> } }).user;
          expect(user.id).toBe(other.id);
          expect(user.apiTokens.map((x) => x.id)).toContain(other.tokenId);
        },
      };
    },
  },
  'createUser (MEMBER)': {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const displayName = `created ${randomUUID()}`;
      const result = await send(c.client, CreateUserDocument, { input: { displayName, trust: 'MEMBER' } });
      return {
        result,
        allowed: (d) => expect((d as { createUser: { trust: string } }).createUser.trust).toBe('MEMBER'),
        denied: async () => expect(await repo(User).countBy({ displayName })).toBe(0),
      };
    },
  },
  'createUser (TRUSTED)': {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const displayName = `created ${randomUUID()}`;
      const result = await send(c.client, CreateUserDocument, { input: { displayName, trust: 'TRUSTED' } });
      return { result, denied: async () => expect(await repo(User).countBy({ displayName })).toBe(0) };
    },
  },
  'createUser (ADMIN)': {
    expect: [F, F, F, F, F, A],
    async run(c, send) {
      const displayName = `created ${randomUUID()}`;
      const result = await send(c.client, CreateUserDocument, { input: { displayName, trust: 'ADMIN' } });
      return { result, denied: async () => expect(await repo(User).countBy({ displayName })).toBe(0) };
    },
  },
  'setUserTrust MEMBER → TRUSTED': {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const target = await createUser(owner, 'MEMBER');
      const result = await send(c.client, SetUserTrustDocument, { userId: target, trust: 'TRUSTED' });
      return {
        result,
        allowed: async () => expect((await repo(User).findOneByOrFail({ id: target })).trust).toBe('TRUSTED'),
        denied: async () => expect((await repo(User).findOneByOrFail({ id: target })).trust).toBe('MEMBER'),
      };
    },
  },
  'setUserTrust MEMBER → BLOCKED': {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const target = await createUser(owner, 'MEMBER');
      const result = await send(c.client, SetUserTrustDocument, { userId: target, trust: 'BLOCKED' });
      return {
        result,
        denied: async () => expect((await repo(User).findOneByOrFail({ id: target })).trust).toBe('MEMBER'),
      };
    },
  },
  'setUserTrust MEMBER → ADMIN': {
    expect: [F, F, F, F, F, A],
    async run(c, send) {
      const target = await createUser(owner, 'MEMBER');
      const result = await send(c.client, SetUserTrustDocument, { userId: target, trust: 'ADMIN' });
      return {
        result,
        denied: async () => expect((await repo(User).findOneByOrFail({ id: target })).trust).toBe('MEMBER'),
      };
    },
  },
  'setUserTrust MEMBER → OWNER': {
    expect: [F, F, F, F, F, A],
    async run(c, send) {
      const target = await createUser(owner, 'MEMBER');
      const result = await send(c.client, SetUserTrustDocument, { userId: target, trust: 'OWNER' });
      return {
        result,
        denied: async () => expect((await repo(User).findOneByOrFail({ id: target })).trust).toBe('MEMBER'),
      };
    },
  },
  'setUserTrust of an ADMIN (→ MEMBER)': {
    expect: [F, F, F, F, F, A],
    async run(c, send) {
      const target = await createUser(owner, 'ADMIN');
      const result = await send(c.client, SetUserTrustDocument, { userId: target, trust: 'MEMBER' });
      return {
        result,
        denied: async () => expect((await repo(User).findOneByOrFail({ id: target })).trust).toBe('ADMIN'),
      };
    },
  },
  'setUserTrust of an OWNER (→ TRUSTED)': {
    expect: [F, F, F, F, F, A],
    async run(c, send) {
      const target = await createUser(owner, 'OWNER');
      const result = await send(c.client, SetUserTrustDocument, { userId: target, trust: 'TRUSTED' });
      return {
        result,
        denied: async () => expect((await repo(User).findOneByOrFail({ id: target })).trust).toBe('OWNER'),
      };
    },
  },
  'linkIdentity (to a MEMBER)': {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const target = await createUser(owner, 'MEMBER');
      const handle = `h${randomUUID().slice(0, 12)}`;
      const result = await send(c.client, LinkIdentityDocument, {
        input: { userId: target, channel: 'telegram', handle },
      });
      return {
        result,
        allowed: (d) =>
          expect((d as { linkIdentity: { key: string; userId: string } }).linkIdentity).toMatchObject({
            key: `telegram:${handle}`,
            userId: target,
          }),
        denied: async () => expect(await repo(Identity).countBy({ handle })).toBe(0),
      };
    },
  },
  'linkIdentity (to an ADMIN)': {
    expect: [F, F, F, F, F, A],
    async run(c, send) {
      const target = await createUser(owner, 'ADMIN');
      const handle = `h${randomUUID().slice(0, 12)}`;
      const result = await send(c.client, LinkIdentityDocument, {
        input: { userId: target, channel: 'telegram', handle },
      });
      return { result, denied: async () => expect(await repo(Identity).countBy({ handle })).toBe(0) };
    },
  },
  'createApiToken (own)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const name = `own ${randomUUID()}`;
      const result = await send(c.client, CreateApiTokenDocument, { userId: selfId(c), name });
      return {
        result,
        allowed: async (d) => {
          const created = (d as { createApiToken: { token: string; apiToken: { userId: string } } })
            .createApiToken;
          expect(created.apiToken.userId).toBe(c.user!.id);
          expect(created.token).toMatch(/^mun_[A-Za-z0-9_-]{43}$/);
          // The new token works, and is stored only as a hash.
          expect(dataOf(await t.client(created.token).http(MeDocument)).me.id).toBe(c.user!.id);
          const row = await repo(ApiToken).findOneByOrFail({ name });
          expect(row.tokenHash).not.toContain(created.token);
        },
        denied: async () => expect(await repo(ApiToken).countBy({ name })).toBe(0),
      };
    },
  },
  'createApiToken (for another user)': {
    expect: [F, F, F, F, F, A],
    async run(c, send) {
      const name = `foreign ${randomUUID()}`;
      const result = await send(c.client, CreateApiTokenDocument, { userId: other.id, name });
      return {
        result,
        allowed: (d) =>
          expect(
            (d as { createApiToken: { apiToken: { userId: string } } }).createApiToken.apiToken.userId,
          ).toBe(other.id),
        denied: async () => expect(await repo(ApiToken).countBy({ name })).toBe(0),
      };
    },
  },
  'revokeApiToken (own)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const tokenId = dataOf(
        await owner.http(CreateApiTokenDocument, { userId: selfId(c), name: 'to revoke' }),
      ).createApiToken.apiToken.id;
      const result = await send(c.client, RevokeApiTokenDocument, { id: tokenId });
      return {
        result,
        allowed: async () =>
          expect((await repo(ApiToken).findOneByOrFail({ id: tokenId })).revokedAt).not.toBeNull(),
        denied: async () =>
          expect((await repo(ApiToken).findOneByOrFail({ id: tokenId })).revokedAt).toBeNull(),
      };
    },
  },
  "revokeApiToken (another user's)": {
    expect: [F, F, F, F, F, A],
    async run(c, send) {
      const tokenId = dataOf(await owner.http(CreateApiTokenDocument, { userId: other.id, name: 'victim' }))
        .createApiToken.apiToken.id;
      const result = await send(c.client, RevokeApiTokenDocument, { id: tokenId });
      return {
        result,
        denied: async () =>
          expect((await repo(ApiToken).findOneByOrFail({ id: tokenId })).revokedAt).toBeNull(),
      };
    },
  },
  'sessions (own)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const result = await send(c.client, SessionsDocument, { first: 100 });
      return {
        result,
        allowed: (d) => {
          const nodes = (
            d as { sessions: { edges: Array<{ node: { id: string; userId: string } }> } }
          ).sessions.edges.map((e) => e.node);
          expect(nodes.map((n) => n.id)).toContain(ownSession[c.name as Level]);
          const level = c.name as Level;
          if (level === 'ADMIN' || level === 'OWNER')
            expect(nodes.map((n) => n.id)).toContain(otherSessionId);
          else expect(nodes.every((n) => n.userId === c.user!.id)).toBe(true);
        },
      };
    },
  },
  "sessions (filter: another user's)": {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const result = await send(c.client, SessionsDocument, { filter: { userId: other.id } });
      return {
        result,
        allowed: (d) =>
          expect(
            (d as { sessions: { edges: Array<{ node: { id: string } }> } }).sessions.edges.map(
              (e) => e.node.id,
            ),
          ).toEqual([otherSessionId]),
      };
    },
  },
  'session (own)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const id = c.user ? ownSession[c.name as Level] : otherSessionId;
      const result = await send(c.client, SessionDocument, { id });
      return {
        result,
        allowed: (d) => expect((d as { session: { userId: string } }).session.userId).toBe(c.user!.id),
      };
    },
  },
  "session (another user's)": {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const result = await send(c.client, SessionDocument, { id: otherSessionId });
      return {
        result,
        allowed: (d) => expect((d as { session: { id: string } }).session.id).toBe(otherSessionId),
      };
    },
  },
  'messages (own session)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const id = c.user ? ownSession[c.name as Level] : otherSessionId;
      const result = await send(c.client, MessagesDocument, { sessionId: id });
      return {
        result,
        allowed: (d) =>
          expect(
            (d as { messages: { edges: Array<{ node: { content: string } }> } }).messages.edges.map(
              (e) => e.node.content,
            ),
          ).toEqual([`hi from ${c.name}`]),
      };
    },
  },
  "messages (another user's session)": {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const result = await send(c.client, MessagesDocument, { sessionId: otherSessionId });
      return {
        result,
        allowed: (d) =>
          expect(
            (d as { messages: { edges: Array<{ node: { content: string } }> } }).messages.edges.map(
              (e) => e.node.content,
            ),
          ).toEqual(['secret of other']),
      };
    },
  },
  'memories (own)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const result = await send(c.client, MemoriesDocument, { first: 200 });
      return {
        result,
        allowed: (d) => {
          const nodes = (
            d as {
              memories: { edges: Array<{ node: { id: string; userId: string | null; scope: string } }> };
            }
          ).memories.edges.map((e) => e.node);
          const level = c.name as Level;
          if (level === 'ADMIN' || level === 'OWNER') expect(nodes.map((n) => n.id)).toContain(otherMemoryId);
          else expect(nodes.every((n) => n.scope === 'GLOBAL' || n.userId === c.user!.id)).toBe(true);
        },
      };
    },
  },
  "memories (filter: another user's)": {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const result = await send(c.client, MemoriesDocument, { filter: { userId: other.id } });
      return {
        result,
        allowed: (d) =>
          expect(
            (d as { memories: { edges: Array<{ node: { id: string } }> } }).memories.edges.map(
              (e) => e.node.id,
            ),
          ).toContain(otherMemoryId),
      };
    },
  },
  'createMemory (own)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const content = `mine ${randomUUID()}`;
      const result = await send(c.client, CreateMemoryDocument, { input: { content } });
      return {
        result,
        allowed: (d) =>
          expect((d as { createMemory: unknown }).createMemory).toMatchObject({
            content,
            userId: c.user!.id,
            scope: 'USER',
          }),
        denied: async () => expect(await repo(Memory).countBy({ content })).toBe(0),
      };
    },
  },
  'createMemory (for another user)': {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const content = `planted ${randomUUID()}`;
      const result = await send(c.client, CreateMemoryDocument, { input: { content, userId: other.id } });
      return {
        result,
        allowed: (d) =>
          expect((d as { createMemory: { userId: string } }).createMemory.userId).toBe(other.id),
        denied: async () => expect(await repo(Memory).countBy({ content })).toBe(0),
      };
    },
  },
  'createMemory (global)': {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const content = `global ${randomUUID()}`;
      const result = await send(c.client, CreateMemoryDocument, { input: { content, scope: 'GLOBAL' } });
      return { result, denied: async () => expect(await repo(Memory).countBy({ content })).toBe(0) };
    },
  },
  'updateMemory (own)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const id = await createMemoryFor(owner, selfId(c), 'before');
      const result = await send(c.client, UpdateMemoryDocument, { id, input: { content: 'after' } });
      return {
        result,
        allowed: async () => expect((await repo(Memory).findOneByOrFail({ id })).content).toBe('after'),
        denied: async () => expect((await repo(Memory).findOneByOrFail({ id })).content).toBe('before'),
      };
    },
  },
  "updateMemory (another user's)": {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const id = await createMemoryFor(owner, other.id, 'before');
      const result = await send(c.client, UpdateMemoryDocument, {
        id,
        input: { content: 'after', importance: 1 },
      });
      return {
        result,
        denied: async () =>
          expect(await repo(Memory).findOneByOrFail({ id })).toMatchObject({
            content: 'before',
            importance: 0.5,
          }),
      };
    },
  },
  'deleteMemory (own)': {
    expect: [F, F, A, A, A, A],
    async run(c, send) {
      const id = await createMemoryFor(owner, selfId(c));
      const result = await send(c.client, DeleteMemoryDocument, { id });
      return {
        result,
        allowed: async () => expect(await repo(Memory).countBy({ id })).toBe(0),
        denied: async () => expect(await repo(Memory).countBy({ id })).toBe(1),
      };
    },
  },
  "deleteMemory (another user's)": {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const id = await createMemoryFor(owner, other.id);
      const result = await send(c.client, DeleteMemoryDocument, { id });
      return {
        result,
        allowed: async () => expect(await repo(Memory).countBy({ id })).toBe(0),
        denied: async () => expect(await repo(Memory).countBy({ id })).toBe(1),
      };
    },
  },
  pluginSettings: {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const result = await send(c.client, PluginSettingsDocument);
      return {
        result,
        allowed: (d) => expect(Array.isArray((d as { pluginSettings: unknown[] }).pluginSettings)).toBe(true),
      };
    },
  },
  setPluginSetting: {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const plugin = `tool_${randomUUID().slice(0, 8)}`;
      const result = await send(c.client, SetPluginSettingDocument, {
        input: { plugin, channel: 'telegram', enabled: false },
      });
      return {
        result,
        allowed: async () =>
          expect(await repo(PluginSetting).findOneByOrFail({ plugin })).toMatchObject({
            channel: 'telegram',
            enabled: false,
          }),
        denied: async () => expect(await repo(PluginSetting).countBy({ plugin })).toBe(0),
      };
    },
  },
  auditLog: {
    expect: [F, F, F, F, A, A],
    async run(c, send) {
      const result = await send(c.client, AuditLogDocument, {
        first: 200,
        filter: { action: 'user.create' },
      });
      return {
        result,
        allowed: (d) =>
          expect((d as { auditLog: { totalCount: number } }).auditLog.totalCount).toBeGreaterThanOrEqual(8),
      };
    },
  },
};

function expected(caseName: string, caller: CallerName): Outcome {
  if (caller === 'no token' || caller === 'invalid token') return 'UNAUTHENTICATED';
  return CASES[caseName]!.expect[LEVELS.indexOf(caller)]!;
}

const clients: GraphQLTestClient[] = [];
function callerOf(name: CallerName): Caller {
  const client =
    name === 'no token'
      ? t.client()
      : name === 'invalid token'
        ? t.client(`mun_${'x'.repeat(43)}`)
        : t.client(users[name].token);
  clients.push(client);
  return { name, client, user: name === 'no token' || name === 'invalid token' ? null : users[name] };
}

async function runCase(caseName: string, callerName: CallerName, send: Send): Promise<void> {
  const outcome = expected(caseName, callerName);
  const { result, allowed, denied } = await CASES[caseName]!.run(callerOf(callerName), send);
  if (outcome === 'allowed') {
    expect(result.errors ?? []).toEqual([]);
    expect(result.data).toBeTruthy();
    await allowed?.(result.data);
  } else {
    expect(result.errors?.map((e) => e.extensions?.code)).toEqual([outcome]);
    // A refusal says why, without internals.
    expect(result.errors?.[0]?.message).toMatch(
      outcome === 'UNAUTHENTICATED' ? /token/i : /trust|only|own|OWNER|BLOCKED/,
    );
    expect(result.data ?? null).toBeNull();
    await denied?.();
  }
}

const viaHttp: Send = (client, doc, variables) => client.http(doc, variables);
const viaWs: Send = (client, doc, variables) => client.wsRun(doc, variables);

beforeAll(async () => {
  t = await startTestApp();
  owner = t.client(t.ownerToken);
  for (const level of LEVELS) users[level] = await createUserWithToken(owner, level, `${level} user`);
  other = await createUserWithToken(owner, 'MEMBER', 'Other member');
  otherSessionId = (await insertSession(t, other.id, 'secret of other')).sessionId;
  otherMemoryId = await createMemoryFor(owner, other.id, 'private note of other');
  for (const level of LEVELS)
    ownSession[level] = (await insertSession(t, users[level].id, `hi from ${level}`)).sessionId;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await owner.close();
  await t.close();
});

describe('the table covers every operation of the foundation', () => {
  it('has at least one case per operation', () => {
    const ops = [
      'me',
      'users',
      'user',
      'createUser',
      'setUserTrust',
      'linkIdentity',
      'createApiToken',
      'revokeApiToken',
      'sessions',
      'session',
      'messages',
      'memories',
      'createMemory',
      'updateMemory',
      'deleteMemory',
      'pluginSettings',
      'setPluginSetting',
      'auditLog',
    ];
    const covered = new Set(Object.keys(CASES).map((name) => name.split(' ')[0]));
    expect(ops.filter((op) => !covered.has(op))).toEqual([]);
  });
});

describe('over HTTP', () => {
  const rows = Object.keys(CASES).flatMap((caseName) =>
    CALLERS.map((caller) => [caseName, caller, expected(caseName, caller)] as const),
  );
  it.each(rows)('%s as %s → %s', async (caseName, caller) => {
    await runCase(caseName, caller, viaHttp);
  });
});

describe('over WebSocket', () => {
  // At least one allowed and one denied operation per trust level (BLOCKED has nothing allowed, OWNER nothing denied).
  const subset = [
    'me',
    "session (another user's)",
    'memories (own)',
    'setUserTrust MEMBER → TRUSTED',
    'createApiToken (for another user)',
    'auditLog',
  ];
  const rows = subset.flatMap((caseName) =>
    CALLERS.map((caller) => [caseName, caller, expected(caseName, caller)] as const),
  );
  it.each(rows)('%s as %s → %s', async (caseName, caller) => {
    await runCase(caseName, caller, viaWs);
  });

  it('covers an allowed and a denied operation for each trust level', () => {
    for (const level of LEVELS) {
      const outcomes = new Set(subset.map((c) => expected(c, level)));
      if (level !== 'BLOCKED') expect(outcomes).toContain('allowed');
      if (level !== 'OWNER') expect(outcomes).toContain('FORBIDDEN');
    }
  });
});

/** One graphql-ws connection kept open (not lazy), so several operations share it. */
function persistentWs(token: string) {
  let connections = 0;
  const client = createClient({
    url: t.url.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: false,
    retryAttempts: 0,
    on: { connected: () => void (connections += 1) },
  });
  const run = <T, V>(doc: TypedDocumentNode<T, V>, variables?: V) =>
    new Promise<GqlResult<T>>((resolve, reject) => {
      let result: GqlResult<T> = { status: 0 };
      client.subscribe<T>(
        { query: print(doc), variables: variables as Record<string, unknown> | undefined },
        {
          next: (value) =>
            void (result = {
              status: 0,
              data: value.data as T,
              errors: value.errors as GqlResult<T>['errors'],
            }),
          error: (err) =>
            Array.isArray(err)
              ? resolve({ status: 0, errors: err as GqlResult<T>['errors'] })
              : reject(err as Error),
          complete: () => resolve(result),
        },
      );
    });
  return { run, connections: () => connections, close: () => client.dispose() };
}

describe('token and trust changes take effect at once', () => {
  it('a revoked token is refused, also on a WebSocket opened before the revocation', async () => {
    const u = await createUserWithToken(owner, 'MEMBER');
    const ws = persistentWs(u.token);
    try {
      expect(dataOf(await ws.run(MeDocument)).me.id).toBe(u.id);
      dataOf(await owner.http(RevokeApiTokenDocument, { id: u.tokenId }));
      expect((await t.client(u.token).http(MeDocument)).errors?.[0]?.extensions?.code).toBe(
        'UNAUTHENTICATED',
      );
      expect((await ws.run(MeDocument)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(ws.connections()).toBe(1);
    } finally {
      await ws.close();
    }
  });

  it('a user set to BLOCKED loses access at once, also on an open WebSocket', async () => {
    const u = await createUserWithToken(owner, 'MEMBER');
    const ws = persistentWs(u.token);
    try {
      expect(dataOf(await ws.run(MemoriesDocument, {})).memories).toBeTruthy();
      dataOf(await owner.http(SetUserTrustDocument, { userId: u.id, trust: 'BLOCKED' }));
      expect((await t.client(u.token).http(MemoriesDocument, {})).errors?.[0]?.extensions?.code).toBe(
        'FORBIDDEN',
      );
      expect((await ws.run(MemoriesDocument, {})).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(ws.connections()).toBe(1);
    } finally {
      await ws.close();
    }
  });

  it('a WebSocket sees fresh data on every operation (no per-connection DataLoader cache)', async () => {
    const u = await createUserWithToken(owner, 'ADMIN');
    const subject = await createUserWithToken(owner, 'MEMBER', 'Old name');
    const { sessionId } = await insertSession(t, subject.id);
    const ws = persistentWs(u.token);
    try {
      const nameOf = async () =>
        dataOf(await ws.run(SessionsDocument, { filter: { userId: subject.id } })).sessions.edges.find(
          (e) => e.node.id === sessionId,
        )?.node.user?.displayName;
      expect(await nameOf()).toBe('Old name');
      await repo(User).update({ id: subject.id }, { displayName: 'New name' });
      expect(await nameOf()).toBe('New name');
      expect(ws.connections()).toBe(1);
    } finally {
      await ws.close();
    }
  });

  it('every privileged mutation of the matrix left an audit entry', async () => {
    const entries = dataOf(await owner.http(AuditLogDocument, { first: 200 })).auditLog.edges.map(
      (e) => e.node.action,
    );
    for (const action of [
      'user.create',
      'user.trust.set',
      'identity.link',
      'token.create',
      'token.revoke',
      'plugin.set',
      'memory.delete',
    ]) {
      expect(entries).toContain(action);
    }
    const unrevoked = await repo(ApiToken).countBy({ userId: users.OWNER.id, revokedAt: IsNull() });
    expect(unrevoked).toBeGreaterThanOrEqual(1);
  });
});
