/**
 * Security suite, the MCP OAuth callback (`/oauth/mcp/callback`): missing and oversize parameters, an error
 * reflected from the authorization server (escaped), forged and tampered `state`s (another user's id with
 * one's own nonce), a replayed callback: each is a 400 page that shows no code or token, never a 5xx, and
 * no tokens are stored for anyone but the user who started the sign-in.
 */
import { McpCredential } from '../../../server/modules/mcp';
import { createUserWithToken } from '../../support/chat-helpers';
import { FakeOAuthServer } from '../../support/fakes/fake-oauth-server';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { TestMcpHttpServer } from '../../support/mcp/test-mcp-http-server';
import { startTestApp, type TestApp } from '../../support/test-app';

const START = /* GraphQL */ `mutation($server: String!) { startMcpOAuth(server: $server) }`;

describe('security: /oauth/mcp/callback completes only the sign-in it belongs to', () => {
  let t: TestApp;
  let as: FakeOAuthServer;
  let remote: TestMcpHttpServer;
  let owner: GraphQLTestClient;
  let ann: GraphQLTestClient;
  let ben: GraphQLTestClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    as = await FakeOAuthServer.start();
    remote = await TestMcpHttpServer.start({ oauth: { issuer: as.issuer, check: (a) => as.check(a) } });
    t = await startTestApp({ config: { mcp: { servers: { cal: { transport: 'http', url: remote.url, auth: 'oauth', min_trust: 'MEMBER' } } } } });
    owner = t.client(t.ownerToken);
    const a = await createUserWithToken(owner, 'Ann', 'MEMBER');
    const b = await createUserWithToken(owner, 'Ben', 'MEMBER');
    ids.ann = a.id;
    ids.ben = b.id;
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
  });

  const callback = async (query: string) => {
    const res = await fetch(`${t.url}/oauth/mcp/callback${query}`);
    return { status: res.status, html: await res.text() };
  };

  /** Starts a sign-in and has the authorization server consent; returns the callback URL (not yet opened). */
  async function consent(client: GraphQLTestClient): Promise<URL> {
    const link = dataOf(await client.http<{ startMcpOAuth: string }, unknown>(START, { server: 'cal' })).startMcpOAuth;
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  const tokensOf = async (userId: string) => t.app.db.repo(t.app.systemCtx('t'), McpCredential).findOneBy({ serverName: 'cal', userId });

  it.each([
    ['no parameters', ''],
    ['a code without state', '?code=abc'],
    ['a state without code', '?state=abc'],
    ['a state that is not base64 JSON', '?code=abc&state=%%%'],
    ['a well-formed state for an unknown user', `?code=abc&state=${Buffer.from(JSON.stringify({ s: 'cal', u: 'nobody', n: 'x' })).toString('base64url')}`],
    ['a state for an unknown server', `?code=abc&state=${Buffer.from(JSON.stringify({ s: 'nope', u: 'nobody', n: 'x' })).toString('base64url')}`],
    ['oversize parameters', `?code=${'a'.repeat(5000)}&state=${'b'.repeat(5000)}`],
    ['state of the wrong types', `?code=abc&state=${Buffer.from(JSON.stringify({ s: 1, u: [], n: {} })).toString('base64url')}`],
  ])('%s → 400', async (_name, query) => {
    const res = await callback(query);
    expect(res.status).toBe(400);
    expect(res.html).toContain('Sign-in not completed');
  });

  it('an error from the authorization server is shown escaped', async () => {
    const res = await callback(`?error=${encodeURIComponent('<script>alert(1)</script>')}`);
    expect(res.status).toBe(400);
    expect(res.html).not.toContain('<script>');
    expect(res.html).toContain('&#60;script&#62;');
  });

  it('Ben cannot complete a sign-in onto Ann\'s account with his own nonce and code, nor with a guessed nonce', async () => {
    const annBack = await consent(ann);
    const benBack = await consent(ben);
    const benState = JSON.parse(Buffer.from(benBack.searchParams.get('state')!, 'base64url').toString('utf8')) as { s: string; u: string; n: string };
    expect(benState.u).toBe(ids.ben);
    const forged = Buffer.from(JSON.stringify({ ...benState, u: ids.ann })).toString('base64url');
    expect((await callback(`?code=${benBack.searchParams.get('code')}&state=${forged}`)).status).toBe(400);
    const annState = JSON.parse(Buffer.from(annBack.searchParams.get('state')!, 'base64url').toString('utf8')) as { n: string };
    const guessed = Buffer.from(JSON.stringify({ ...annState, n: `${annState.n.slice(0, -1)}A` })).toString('base64url');
    expect((await callback(`?code=${annBack.searchParams.get('code')}&state=${guessed}`)).status).toBe(400);
    // Nobody got tokens from those attempts.
    expect(as.tokenRequests.filter((r) => r.ok)).toEqual([]);
    // Each completes their own, once: a replay of the same callback is refused.
    const first = await callback(annBack.search);
    expect(first.status).toBe(200);
    expect(first.html).not.toContain(annBack.searchParams.get('code')!);
    const replay = await callback(annBack.search);
    expect(replay.status).toBe(400);
    expect(replay.html).toMatch(/not valid or was already used/);
    expect(as.tokenRequests.filter((r) => r.ok)).toHaveLength(1);
    expect((await tokensOf(ids.ann))?.sealed).toMatch(/^v1:/);
    // Ben's pending sign-in holds no tokens.
    const benRow = await tokensOf(ids.ben);
    const benStored = t.app.services.secretBox.openJson<{ tokens?: unknown; pending?: unknown }>(benRow!.sealed);
    expect(benStored.tokens).toBeUndefined();
    expect(benStored.pending).toBeDefined();
  });
});
