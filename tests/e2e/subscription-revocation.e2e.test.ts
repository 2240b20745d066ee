import { startTestApp, type TestApp } from '../support/test-app';
import { dataOf } from '../support/graphql-client';
import { FakeOpenAIServer } from '../support/fakes/fake-openai-server';
import { EventCollector } from '../support/session-events';
import { createUserWithToken, send } from '../support/chat-helpers';
import { RevokeApiTokenDocument, SetUserTrustDocument, UserDocument } from '../support/graphql/generated';

describe('a running sessionEvents subscription', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({
      config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' } } }, graphql: { subscription_recheck_ms: 100 } },
    });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  async function subscribedMember(name: string) {
    const owner = t.client(t.ownerToken);
    const member = await createUserWithToken(owner, name, 'MEMBER');
    const client = t.client(member.token);
    const first = await send(client, 'hello');
    const events = new EventCollector(client.wsClient(), first.sessionId);
    await events.waitFor((es) => es.some((e) => e.__typename === 'TurnFinished'));
    return { owner, member, client, events, sessionId: first.sessionId };
  }

  it('ends with an error once its token is revoked', async () => {
    const { owner, member, client, events, sessionId } = await subscribedMember('revoked');
    const tokenId = dataOf(await owner.http(UserDocument, { id: member.id })).user.apiTokens![0]!.id;
    await new Promise((r) => setTimeout(r, 150));
    dataOf(await owner.http(RevokeApiTokenDocument, { id: tokenId }));
    // New events of the session reach the guard, which now refuses.
    await t.app.chat!.events.publish(sessionId, { type: 'Notice', level: 'info', text: 'ping' });
    await expect(events.waitFor(() => false, 5000)).rejects.toThrow(/subscription error.*access to this subscription ended/);
    events.stop();
    await client.close();
    await owner.close();
  });

  it('keeps streaming while the token and trust stay valid, and ends when the user is BLOCKED', async () => {
    const { owner, member, client, events, sessionId } = await subscribedMember('blocked later');
    await new Promise((r) => setTimeout(r, 150));
    await t.app.chat!.events.publish(sessionId, { type: 'Notice', level: 'info', text: 'still here' });
    await events.waitFor((es) => es.some((e) => e.__typename === 'Notice' && e.text === 'still here'));
    dataOf(await owner.http(SetUserTrustDocument, { userId: member.id, trust: 'BLOCKED' }));
    await new Promise((r) => setTimeout(r, 150));
    await t.app.chat!.events.publish(sessionId, { type: 'Notice', level: 'info', text: 'after block' });
    await expect(events.waitFor(() => false, 5000)).rejects.toThrow(/access to this subscription ended/);
    expect(events.events.some((e) => e.text === 'after block')).toBe(false);
    events.stop();
    await client.close();
    await owner.close();
  });
});
