/**
 * Hostile cases of the user data doors (issue 22): another user's export, a reused, wrong or expired
 * download link, someone else's export job, a MEMBER or an ADMIN erasing someone else.
 */
import Redis from 'ioredis';
import { TrustLevel } from '../../../server/common/trust';
import { createUserWithToken, type TestUser } from '../../support/fixtures';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { startTestApp, type TestApp } from '../../support/test-app';

const EXPORT = /* GraphQL */ `mutation Export($userId: ID!) { exportUserData(userId: $userId) { exportId jobId downloadUrl expiresAt } }`;
const ERASE = /* GraphQL */ `mutation Erase($userId: ID!) { eraseUser(userId: $userId) { userId existed rows } }`;
const ME = /* GraphQL */ `query { me { id } }`;
const JOB_PROGRESS = /* GraphQL */ `subscription JobProgress($jobId: ID!) { jobProgress(jobId: $jobId) { jobId state } }`;

interface Requested {
  exportId: string;
  jobId: string;
  downloadUrl: string;
}

let t: TestApp;
let owner: GraphQLTestClient;
let ada: TestUser;
let bob: TestUser;
let admin: TestUser;
const clients: GraphQLTestClient[] = [];

const client = (u: TestUser) => {
  const c = t.client(u.token);
  clients.push(c);
  return c;
};
const codeOf = (r: { errors?: Array<{ extensions?: { code?: unknown } }> }) => r.errors?.[0]?.extensions?.code;

async function exportAs(c: GraphQLTestClient, userId: string): Promise<Requested> {
  return dataOf(await c.http<{ exportUserData: Requested }, unknown>(EXPORT, { userId })).exportUserData;
}

/** Waits until the archive is built: the link answers 409 while it is not (without using it up). */
async function whenReady(downloadUrl: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await fetch(`${t.url}${downloadUrl}`, { method: 'HEAD' });
    if (res.status !== 409 || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  t = await startTestApp();
  owner = t.client(t.ownerToken);
  ada = await createUserWithToken(owner, TrustLevel.MEMBER, 'Ada');
  bob = await createUserWithToken(owner, TrustLevel.MEMBER, 'Bob');
  admin = await createUserWithToken(owner, TrustLevel.ADMIN, 'Adm');
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await owner.close();
  await t.close();
});

describe('exportUserData', () => {
  it("refuses someone else's export to a MEMBER, an ADMIN and an anonymous caller", async () => {
    expect(codeOf(await client(bob).http(EXPORT, { userId: ada.id }))).toBe('FORBIDDEN');
    expect(codeOf(await client(admin).http(EXPORT, { userId: ada.id }))).toBe('FORBIDDEN');
    expect(codeOf(await t.client(null).http(EXPORT, { userId: ada.id }))).toBe('UNAUTHENTICATED');
  });

  it("hides another user's export job from jobProgress", async () => {
    const requested = await exportAs(client(ada), ada.id);
    const result = await client(bob).wsRun(JOB_PROGRESS, { jobId: requested.jobId });
    expect(codeOf(result)).toBe('FORBIDDEN');
    await whenReady(requested.downloadUrl);
  });

  it('serves a link once; wrong, missing, foreign and traversing links get 404', async () => {
    const requested = await exportAs(client(ada), ada.id);
    await whenReady(requested.downloadUrl);
    const base = `${t.url}/exports/${requested.exportId}`;
    const token = new URL(`${t.url}${requested.downloadUrl}`).searchParams.get('token')!;
    for (const url of [
      `${base}?token=${token.slice(0, -2)}xx`,
      base,
      `${base}?token=`,
      `${t.url}/exports/${crypto.randomUUID()}?token=${token}`,
      `${t.url}/exports/..%2F..%2Fowner.token?token=${token}`,
      `${base}?token[]=${token}`,
    ]) {
      const res = await fetch(url);
      expect({ url, status: res.status }).toEqual({ url, status: 404 });
    }
    // The wrong tries did not use the link up; the right one works once.
    const first = await fetch(`${base}?token=${token}`);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    await first.arrayBuffer();
    expect((await fetch(`${base}?token=${token}`)).status).toBe(404);
  });

  it('refuses an expired link', async () => {
    const requested = await exportAs(owner, bob.id);
    await whenReady(requested.downloadUrl);
    const redis = new Redis(t.config.redis.url!);
    try {
      // The link's lifetime ends now (exports.expire_minutes is at least a minute).
      expect(await redis.pexpire(`${t.config.redis.prefix}:export:${requested.exportId}`, 1)).toBe(1);
    } finally {
      redis.disconnect();
    }
    await new Promise((r) => setTimeout(r, 20));
    expect((await fetch(`${t.url}${requested.downloadUrl}`)).status).toBe(404);
  });
});

describe('eraseUser', () => {
  it('refuses a MEMBER or an ADMIN erasing someone else, and leaves them as they were', async () => {
    expect(codeOf(await client(bob).http(ERASE, { userId: ada.id }))).toBe('FORBIDDEN');
    expect(codeOf(await client(admin).http(ERASE, { userId: ada.id }))).toBe('FORBIDDEN');
    expect(codeOf(await t.client(null).http(ERASE, { userId: ada.id }))).toBe('UNAUTHENTICATED');
    expect(dataOf(await client(ada).http<{ me: { id: string } }, unknown>(ME)).me.id).toBe(ada.id);
  });
});
