import { startTestApp, type TestApp } from '../support/test-app';
import { dataOf } from '../support/graphql-client';
import { MeDocument } from '../support/graphql/generated';

describe('first start', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers /healthz and /readyz', async () => {
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { database: 'ok', redis: 'ok' } });
  });

  it('the owner token answers me { trust } with OWNER over HTTP and WebSocket', async () => {
    const client = t.client(t.ownerToken);
    expect(dataOf(await client.http(MeDocument)).me.trust).toBe('OWNER');
    expect(dataOf(await client.wsRun(MeDocument)).me.trust).toBe('OWNER');
    await client.close();
  });

  it('refuses a request without a token with UNAUTHENTICATED', async () => {
    const res = await t.client().http(MeDocument);
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(res.data ?? null).toBeNull();
  });
});
