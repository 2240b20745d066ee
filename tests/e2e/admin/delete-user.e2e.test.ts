import { startTestApp, type TestApp } from '../../support/test-app';
import { createUserWithToken, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { Memory } from '../../../server/modules/memory';
import { Session } from '../../../server/modules/sessions';

const DELETE = /* GraphQL */ `mutation D($id: ID!) { deleteUser(id: $id) }`;
const USER = /* GraphQL */ `query U($id: ID!) { user(id: $id) { id } }`;
const ME = /* GraphQL */ `query { me { id } }`;
const CREATE_MEMORY = /* GraphQL */ `mutation M($content: String!) { createMemory(input: { content: $content }) { id } }`;
const AUDIT = /* GraphQL */ `query { auditLog(filter: { action: "user.delete" }) { edges { node { targetId details } } } }`;

/** Issue 10 / DESIGN §3: deleteUser (OWNER) removes a user and their data. */
describe('deleteUser', () => {
  let t: TestApp;
  let owner: GraphQLTestClient;

  beforeAll(async () => {
    t = await startTestApp({ config: { session: { summarizer_mode: 'manual' }, log: { level: 'warn' } } });
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
  });

  it('deletes the user with sessions, messages, memories and tokens, and audits it', async () => {
    const victim = await createUserWithToken(owner, 'Vic', 'MEMBER');
    const vic = t.client(victim.token);
    await send(vic, '/whoami');
    dataOf(await vic.http(CREATE_MEMORY, { content: 'Vic likes tea' }));
    const ctx = t.app.systemCtx('test');
    expect(await t.app.db.repo(ctx, Session).countBy({ userId: victim.id })).toBeGreaterThan(0);

    expect(dataOf(await owner.http<{ deleteUser: boolean }, unknown>(DELETE, { id: victim.id })).deleteUser).toBe(true);
    expect((await owner.http(USER, { id: victim.id })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await t.app.db.repo(ctx, Session).countBy({ userId: victim.id })).toBe(0);
    expect(await t.app.db.repo(ctx, Memory).countBy({ userId: victim.id })).toBe(0);
    expect((await vic.http(ME)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const audit = dataOf(await owner.http<{ auditLog: { edges: Array<{ node: { targetId: string; details: unknown } }> } }, unknown>(AUDIT));
    expect(audit.auditLog.edges[0]?.node).toMatchObject({ targetId: victim.id, details: { displayName: 'Vic', trust: 'MEMBER' } });
    await vic.close();
  });

  it('is OWNER only, refuses yourself and unknown ids', async () => {
    const admin = await createUserWithToken(owner, 'Ada', 'ADMIN');
    const other = await createUserWithToken(owner, 'Otto', 'MEMBER');
    const adminClient = t.client(admin.token);
    expect((await adminClient.http(DELETE, { id: other.id })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const me = dataOf(await owner.http<{ me: { id: string } }, unknown>(ME)).me.id;
    const self = await owner.http(DELETE, { id: me });
    expect(self.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect((await owner.http(DELETE, { id: '00000000-0000-0000-0000-000000000000' })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await owner.http(USER, { id: other.id })).data).toBeTruthy();
    await adminClient.close();
  });
});
