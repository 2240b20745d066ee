/**
 * Security suite, the doors of issue 28: `/link CODE` (codes work once, for their user only, in direct
 * chats on Telegram and WhatsApp; guessing is cut off after five wrong codes; a handle of another user is
 * never taken over), `createLinkCode` (signed-in users only, for themselves), `cronPreview` (long or
 * hostile input gets an answer, not an error), and the new webhook mutations and fields (ADMIN only).
 */
import { startTestApp, type TestApp } from '../../support/test-app';
import { createUserWithToken } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import type { InboundMessage } from '../../../server/channels/channel.types';

const LINK_CODE = /* GraphQL */ `mutation { createLinkCode { code command expiresAt } }`;
const IDENTITIES = /* GraphQL */ `query U($id: ID!) { user(id: $id) { identities { key } } }`;
const PREVIEW = /* GraphQL */ `query P($cron: String!, $tz: String) { cronPreview(cron: $cron, timezone: $tz) { valid error description nextRuns } }`;
const ROTATE = /* GraphQL */ `mutation R($name: String!) { rotateWebhookSecret(name: $name) { secret } }`;
const DISABLE = /* GraphQL */ `mutation D($name: String!) { setWebhookEnabled(name: $name, enabled: false) { enabled } }`;
const CREATE_HOOK = /* GraphQL */ `mutation C($name: String!) { createWebhook(input: { name: $name }) { secret } }`;

describe('self-service linking and the new console APIs under attack', () => {
  let t: TestApp;
  let owner: GraphQLTestClient;
  let mia: { id: string; token: string };
  let bob: { id: string; token: string };
  let n = 0;

  /** Sends `text` as a Telegram (or other) sender through the real inbound pipeline; returns the answers. */
  const say = async (text: string, from: { channel?: string; handle: string; kind?: 'dm' | 'group' }) => {
    const message: InboundMessage = {
      channel: from.channel ?? 'telegram',
      chatId: from.kind === 'group' ? '-100500' : from.handle,
      chatKind: from.kind ?? 'dm',
      sender: { handle: from.handle, displayName: 'Someone' },
      text,
      mentionsBot: true,
      platformMessageId: `m${++n}`,
    } as InboundMessage;
    const c = await t.app.chat!.pipeline.handle(message);
    return c.replies.join('\n');
  };
  const codeFor = async (token: string) => dataOf(await t.client(token).http<{ createLinkCode: { code: string; command: string } }, unknown>(LINK_CODE)).createLinkCode;
  const identities = async (id: string) => dataOf(await owner.http<{ user: { identities: Array<{ key: string }> } }, unknown>(IDENTITIES, { id })).user.identities.map((i) => i.key);

  beforeAll(async () => {
    t = await startTestApp({ workers: false, config: { log: { level: 'warn' } } });
    owner = t.client(t.ownerToken);
    mia = await createUserWithToken(owner, 'Mia', 'MEMBER');
    bob = await createUserWithToken(owner, 'Bob', 'MEMBER');
  });
  afterAll(async () => {
    await owner?.close();
    await t?.close();
  });

  it('needs a signed-in user', async () => {
    const anonymous = t.client(null);
    expect((await anonymous.http(LINK_CODE)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await anonymous.close();
  });

  it('a code links only in a direct chat, only on Telegram or WhatsApp, and only once', async () => {
    const { code, command } = await codeFor(mia.token);
    expect(await say(command, { handle: '900', kind: 'group' })).toMatch(/direct chat/);
    expect(await say(command, { channel: 'tui', handle: '900' })).toMatch(/Telegram and WhatsApp/);
    expect(await identities(mia.id)).toEqual([]);
    expect(await say(`/link ${code.toLowerCase().slice(0, 4)}-${code.toLowerCase().slice(4)}`, { handle: '900' })).toMatch(/now belongs to Mia/);
    expect(await identities(mia.id)).toContain('telegram:900');
    expect(await say(command, { handle: '901' })).toMatch(/unknown or expired/);
    expect(await identities(mia.id)).not.toContain('telegram:901');
  });

  it("a handle that is someone else's is never moved, and the code's owner is who gets linked", async () => {
    const { command } = await codeFor(bob.token);
    // telegram:900 is Mia's now; Bob's code cannot take it.
    expect(await say(command, { handle: '900' })).toMatch(/another Muninn user/);
    expect(await identities(mia.id)).toContain('telegram:900');
    expect(await identities(bob.id)).toEqual([]);
  });

  it('a new code replaces the previous one', async () => {
    const first = await codeFor(bob.token);
    const second = await codeFor(bob.token);
    expect(await say(first.command, { handle: '950' })).toMatch(/unknown or expired/);
    expect(await say(second.command, { handle: '950' })).toMatch(/now belongs to Bob/);
  });

  it('guessing is cut off after five wrong codes, even for a right one', async () => {
    for (let i = 0; i < 5; i++) expect(await say(`/link WRONG${i + 2}AB`.slice(0, 14), { handle: '666' })).toMatch(/unknown or expired/);
    const { command } = await codeFor(mia.token);
    expect(await say(command, { handle: '666' })).toMatch(/Too many wrong codes/);
    expect(await identities(mia.id)).not.toContain('telegram:666');
    // Other senders are not affected.
    expect(await say(command, { handle: '667' })).toMatch(/now belongs to Mia/);
  });

  it('odd /link messages get help, never an error or a model call', async () => {
    for (const text of ['/link', '/link    ', `/link ${'A'.repeat(5000)}`, '/link <script>alert(1)</script>', '/link@muninn_bot', '/LINK zz']) {
      const answer = await say(text, { handle: '777' });
      expect(answer).toMatch(/Send \/link followed by the code|unknown or expired|Too many/);
    }
  });

  it('cronPreview answers hostile input with an explanation', async () => {
    const m = t.client(mia.token);
    for (const cron of ['', '* * *', '61 * * * *', '0 0 31 2 *', 'x'.repeat(5000), '0 7 * * * * * *', '@reboot']) {
      const res = await m.http<{ cronPreview: { valid: boolean; error: string | null; nextRuns: string[] } }, unknown>(PREVIEW, { cron, tz: 'UTC' });
      expect(res.errors).toBeUndefined();
      expect(res.data?.cronPreview.valid).toBe(false);
      expect(res.data?.cronPreview.error).toMatch(/cron|schedule/i);
    }
    const badZone = dataOf(await m.http<{ cronPreview: { valid: boolean; error: string } }, unknown>(PREVIEW, { cron: '0 7 * * *', tz: 'Mars/Olympus' })).cronPreview;
    expect(badZone).toMatchObject({ valid: false, error: expect.stringContaining('Unknown time zone') });
    // Below ADMIN the frequency floor applies, as it does for createBeat.
    const often = dataOf(await m.http<{ cronPreview: { valid: boolean; error: string } }, unknown>(PREVIEW, { cron: '* * * * *', tz: 'UTC' })).cronPreview;
    expect(often).toMatchObject({ valid: false, error: expect.stringContaining('at most every') });
    const fine = dataOf(await m.http<{ cronPreview: { valid: boolean; nextRuns: string[] } }, unknown>(PREVIEW, { cron: '0 7 * * *', tz: 'UTC' })).cronPreview;
    expect(fine.valid).toBe(true);
    expect(fine.nextRuns).toHaveLength(5);
    await m.close();
  });

  it('webhook rotation, switching and deliveries are for ADMINs only', async () => {
    dataOf(await owner.http(CREATE_HOOK, { name: 'guarded' }));
    const m = t.client(mia.token);
    for (const [doc, vars] of [[ROTATE, { name: 'guarded' }], [DISABLE, { name: 'guarded' }], ['{ webhooks { deliveries { id } } }', {}]] as const) {
      expect((await m.http(doc, vars)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    expect((await owner.http(ROTATE, { name: 'nope' })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    await m.close();
  });
});
