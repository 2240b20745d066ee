/**
 * Every privileged mutation writes the audit log (issue 2 "Auth"; DESIGN §3): who did what to what, never a
 * secret. Run as an ADMIN (and as the OWNER for what only an OWNER may do), read back as the OWNER.
 */
import { dataOf, type GraphQLTestClient } from '../support/graphql-client';
import {
  AuditLogDocument,
  CreateApiTokenDocument,
  CreateMemoryDocument,
  CreateUserDocument,
  DeleteMemoryDocument,
  LinkIdentityDocument,
  MeDocument,
  RevokeApiTokenDocument,
  SetPluginSettingDocument,
  SetUserTrustDocument,
  UpdateMemoryDocument,
  type AuditLogQuery,
} from '../support/graphql/generated';
import { createMemoryFor, createUserWithToken, type TestUser } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

type Entry = AuditLogQuery['auditLog']['edges'][number]['node'];

let t: TestApp;
let owner: GraphQLTestClient;
let ownerId: string;
let admin: TestUser;
let adminClient: GraphQLTestClient;
let member: TestUser;
let memberClient: GraphQLTestClient;

beforeAll(async () => {
  t = await startTestApp();
  owner = t.client(t.ownerToken);
  ownerId = dataOf(await owner.http(MeDocument)).me.id;
  admin = await createUserWithToken(owner, 'ADMIN', 'Auditor');
  member = await createUserWithToken(owner, 'MEMBER', 'Member');
  adminClient = t.client(admin.token);
  memberClient = t.client(member.token);
});

afterAll(async () => {
  await Promise.all([owner.close(), adminClient.close(), memberClient.close()]);
  await t.close();
});

/** The newest audit entry with this action and target, as the OWNER reads it. */
async function entry(action: string, targetId: string): Promise<Entry | undefined> {
  const edges = dataOf(await owner.http(AuditLogDocument, { first: 200, filter: { action } })).auditLog.edges;
  return edges.map((e) => e.node).find((n) => n.targetId === targetId);
}

it('createUser', async () => {
  const user = dataOf(
    await adminClient.http(CreateUserDocument, { input: { displayName: 'New', trust: 'TRUSTED' } }),
  ).createUser;
  expect(await entry('user.create', user.id)).toMatchObject({
    actorUserId: admin.id,
    actor: 'user',
    targetType: 'User',
    details: { trust: 'TRUSTED' },
  });
});

it('setUserTrust, with the levels before and after', async () => {
  dataOf(await adminClient.http(SetUserTrustDocument, { userId: member.id, trust: 'TRUSTED' }));
  expect(await entry('user.trust.set', member.id)).toMatchObject({
    actorUserId: admin.id,
    details: { from: 'MEMBER', to: 'TRUSTED' },
  });
});

it('linkIdentity', async () => {
  dataOf(
    await adminClient.http(LinkIdentityDocument, {
      input: { userId: member.id, channel: 'telegram', handle: '4242' },
    }),
  );
  expect(await entry('identity.link', member.id)).toMatchObject({
    actorUserId: admin.id,
    details: { identity: 'telegram:4242' },
  });
});

it('createApiToken and revokeApiToken, without the secret', async () => {
  const created = dataOf(
    await owner.http(CreateApiTokenDocument, { userId: member.id, name: 'for member' }),
  ).createApiToken;
  const made = await entry('token.create', created.apiToken.id);
  expect(made).toMatchObject({ actorUserId: ownerId, details: { userId: member.id, name: 'for member' } });
  expect(JSON.stringify(made)).not.toContain(created.token);
  dataOf(await owner.http(RevokeApiTokenDocument, { id: created.apiToken.id }));
  expect(await entry('token.revoke', created.apiToken.id)).toMatchObject({
    actorUserId: ownerId,
    details: { userId: member.id },
  });
});

it('setPluginSetting, with the previous value', async () => {
  const first = dataOf(
    await adminClient.http(SetPluginSettingDocument, { input: { plugin: 'web_search', enabled: false } }),
  ).setPluginSetting;
  dataOf(
    await adminClient.http(SetPluginSettingDocument, { input: { plugin: 'web_search', enabled: true } }),
  );
  const edges = dataOf(
    await owner.http(AuditLogDocument, { filter: { action: 'plugin.set' } }),
  ).auditLog.edges.map((e) => e.node);
  expect(edges.filter((e) => e.targetId === first.id).map((e) => e.details)).toEqual([
    { plugin: 'web_search', channel: null, enabled: true, previous: false },
    { plugin: 'web_search', channel: null, enabled: false, previous: null },
  ]);
});

it("creating, changing and deleting someone else's memory", async () => {
  const created = dataOf(
    await adminClient.http(CreateMemoryDocument, { input: { content: 'about member', userId: member.id } }),
  ).createMemory;
  expect(await entry('memory.create', created.id)).toMatchObject({
    actorUserId: admin.id,
    details: { ownerUserId: member.id, scope: 'user' },
  });
  dataOf(await adminClient.http(UpdateMemoryDocument, { id: created.id, input: { content: 'changed' } }));
  expect(await entry('memory.update', created.id)).toMatchObject({
    actorUserId: admin.id,
    details: { ownerUserId: member.id },
  });
  dataOf(await adminClient.http(DeleteMemoryDocument, { id: created.id }));
  expect(await entry('memory.delete', created.id)).toMatchObject({
    actorUserId: admin.id,
    details: { ownerUserId: member.id },
  });
});

it('a global memory', async () => {
  const created = dataOf(
    await adminClient.http(CreateMemoryDocument, { input: { content: 'for everyone', scope: 'GLOBAL' } }),
  ).createMemory;
  expect(await entry('memory.create', created.id)).toMatchObject({
    actorUserId: admin.id,
    details: { scope: 'global', ownerUserId: null },
  });
});

it('a user working on their own memories is not audited', async () => {
  const own = dataOf(
    await memberClient.http(CreateMemoryDocument, { input: { content: 'mine' } }),
  ).createMemory;
  dataOf(await memberClient.http(UpdateMemoryDocument, { id: own.id, input: { importance: 0.9 } }));
  const ownTwo = await createMemoryFor(owner, member.id);
  dataOf(await memberClient.http(DeleteMemoryDocument, { id: ownTwo }));
  for (const action of ['memory.create', 'memory.update', 'memory.delete']) {
    expect(await entry(action, own.id)).toBeUndefined();
  }
  expect(await entry('memory.delete', ownTwo)).toBeUndefined();
});

it('the audit log is newest first and pages with cursors', async () => {
  const all = dataOf(await owner.http(AuditLogDocument, { first: 200 })).auditLog;
  const times = all.edges.map((e) => e.node.createdAt);
  expect([...times].sort().reverse()).toEqual(times);
  const firstPage = dataOf(await owner.http(AuditLogDocument, { first: 3 })).auditLog;
  expect(firstPage.totalCount).toBe(all.totalCount);
  expect(firstPage.edges.map((e) => e.node.id)).toEqual(all.edges.slice(0, 3).map((e) => e.node.id));
});
