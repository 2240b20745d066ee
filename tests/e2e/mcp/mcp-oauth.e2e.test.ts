import { McpCredential } from '../../../server/modules/mcp';
import { createUserWithToken } from '../../support/chat-helpers';
import { FakeOAuthServer } from '../../support/fakes/fake-oauth-server';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { TestMcpHttpServer } from '../../support/mcp/test-mcp-http-server';
import { startTestApp, type TestApp } from '../../support/test-app';
import { lastToolResult } from '../../support/model-requests';
import { turn } from '../../support/tool-turns';

const START = /* GraphQL */ `mutation($server: String!) { startMcpOAuth(server: $server) }`;

/** What a browser does with a sign-in link: the authorization server (consenting as `who`) sends it back to Muninn's callback. */
async function signIn(link: string, who: string): Promise<{ status: number; html: string; callback: string }> {
  const url = new URL(link);
  url.searchParams.set('login_hint', who);
  const consent = await fetch(url, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const callback = consent.headers.get('location')!;
  const back = await fetch(callback);
  return { status: back.status, html: await back.text(), callback };
}

describe('MCP OAuth: sign-in with PKCE and dynamic registration, tokens per user, sealed at rest, refreshed on 401', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let as: FakeOAuthServer;
  let remote: TestMcpHttpServer;
  let owner: GraphQLTestClient;
  let ann: GraphQLTestClient;
  let ben: GraphQLTestClient;
  let annId: string;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    as = await FakeOAuthServer.start();
    remote = await TestMcpHttpServer.start({ oauth: { issuer: as.issuer, check: (a) => as.check(a) } });
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 16384 } } },
        mcp: { servers: { cal: { transport: 'http', url: remote.url, auth: 'oauth', min_trust: 'MEMBER' } } },
      },
    });
    owner = t.client(t.ownerToken);
    const a = await createUserWithToken(owner, 'Ann', 'MEMBER');
    const b = await createUserWithToken(owner, 'Ben', 'MEMBER');
    annId = a.id;
    ann = t.client(a.token);
    ben = t.client(b.token);
  });
  afterAll(async () => {
    await ann?.close();
    await ben?.close();
    await owner?.close();
    await t?.close();
    await remote?.close();
    await as?.close();
    await model?.close();
  });


  function whoami(id: string): void {
    model.enqueue({ toolCalls: [{ id, name: 'cal__whoami', arguments: {} }] }, (req) => ({ text: `result: ${lastToolResult(req)}` }));
  }

  /** Subjects of the tokens the MCP server saw on tool calls, in order. */
  const callSubjects = () => remote.calls.map((c) => as.tokens.find((x) => `Bearer ${x.access}` === c.authorization)?.subject ?? 'unknown');

  it('startMcpOAuth gives a sign-in link (registration, PKCE S256); the callback stores the tokens sealed; the call carries Ann\'s token', async () => {
    const link = dataOf(await ann.http<{ startMcpOAuth: string }, unknown>(START, { server: 'cal' })).startMcpOAuth;
    const url = new URL(link);
    expect(url.origin).toBe(as.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe(`${t.url}/oauth/mcp/callback`);
    expect(as.clients.size).toBe(1);
    const done = await signIn(link, 'ann');
    expect(done.status).toBe(200);
    expect(done.html).toContain('connected to the MCP server &#34;cal&#34;');
    expect(as.tokenRequests).toEqual([expect.objectContaining({ grantType: 'authorization_code', ok: true })]);

    const row = await t.app.db.repo(t.app.systemCtx('t'), McpCredential).findOneByOrFail({ serverName: 'cal', userId: annId });
    expect(row.kind).toBe('oauth');
    expect(row.sealed).toMatch(/^v1:/);
    const issued = as.tokens.find((x) => x.subject === 'ann')!;
    expect(row.sealed).not.toContain(issued.access);
    expect(row.sealed).not.toContain(issued.refresh);
    expect(t.logs.lines.join('\n')).not.toContain(issued.access);

    whoami('w1');
    expect(await turn(t, ann, 'who am I there?')).toBe(`result: token=${issued.access}`);
    expect(callSubjects()).toEqual(['ann']);
  });

  it('Ben, not signed in, gets a tool error with his own sign-in link in the chat; after signing in his calls carry only his token', async () => {
    whoami('w2');
    const reply = await turn(t, ben, 'who am I there?');
    expect(reply).toMatch(/^result: The tool "cal__whoami" cannot run yet: You are not signed in to the MCP server "cal"\. Open this link to sign in, then ask again: http/);
    const link = /(http:\/\/\S+)/.exec(reply)![1]!;
    expect(new URL(link).origin).toBe(as.issuer);
    expect((await signIn(link, 'ben')).status).toBe(200);
    whoami('w3');
    const benToken = as.tokens.find((x) => x.subject === 'ben')!.access;
    expect(await turn(t, ben, 'and now?')).toBe(`result: token=${benToken}`);
    whoami('w4');
    await turn(t, ann, 'me again');
    expect(callSubjects()).toEqual(['ann', 'ben', 'ann']);
    // Ann's calls never carried Ben's token and the other way round.
    for (const c of remote.calls) {
      const subject = as.tokens.find((x) => `Bearer ${x.access}` === c.authorization)!.subject;
      expect(['ann', 'ben']).toContain(subject);
    }
  });

  it('an access token the server no longer accepts (401) is refreshed with the refresh token and the call goes through', async () => {
    as.expireAccessTokens();
    const before = as.tokenRequests.length;
    whoami('w5');
    const reply = await turn(t, ann, 'after expiry');
    const fresh = as.tokens.filter((x) => x.subject === 'ann' && !x.revoked);
    expect(fresh).toHaveLength(1);
    expect(reply).toBe(`result: token=${fresh[0]!.access}`);
    expect(as.tokenRequests.slice(before)).toEqual([expect.objectContaining({ grantType: 'refresh_token', ok: true })]);
    expect(callSubjects().at(-1)).toBe('ann');
  });
});
