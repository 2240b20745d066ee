/**
 * Security suite, channel set-up (issue 28): the door through which an OWNER enters a Telegram bot
 * token or turns WhatsApp on. Only an OWNER may change it, ADMINs may only read it, everyone else is
 * refused; malformed tokens (huge, path or query characters, control characters) are refused before any
 * request leaves the server; a token is never returned (no field holds it), never in an error message
 * (even when the Bot API echoes it), never in the logs at debug level, the audit log or the database in
 * plain text.
 */
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { createUserWithToken } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { AuditLogDocument, ChannelSetupsDocument, ChannelStatesDocument, EnableWhatsAppDocument, PluginSettingsDocument, RemoveChannelSetupDocument, SetTelegramBotDocument } from '../../support/graphql/generated';
import { newBotToken } from '../telegram/telegram-kit';

jest.setTimeout(60_000);

describe('channel set-up: who may, what is refused, what never leaks', () => {
  const token = newBotToken();
  let tg: FakeTelegramServer;
  let t: TestApp;
  let owner: GraphQLTestClient;
  let admin: GraphQLTestClient;
  let member: GraphQLTestClient;
  let anonymous: GraphQLTestClient;
  /** Everything a client got back, for the leak check at the end. */
  const answers: string[] = [];
  const keep = <T>(r: T): T => {
    answers.push(JSON.stringify(r));
    return r;
  };
  const codeOf = (r: { errors?: Array<{ extensions?: Record<string, unknown> }> }) => r.errors?.[0]?.extensions?.code;

  beforeAll(async () => {
    tg = await FakeTelegramServer.start({ token });
    t = await startTestApp({ config: { channels: { telegram: { enabled: false, api_root: tg.url } }, log: { level: 'debug' } } });
    owner = t.client(t.ownerToken);
    admin = t.client((await createUserWithToken(owner, 'Ada Admin', 'ADMIN')).token);
    member = t.client((await createUserWithToken(owner, 'Mo Member', 'MEMBER')).token);
    anonymous = t.client(null);
  });
  afterAll(async () => {
    for (const c of [owner, admin, member, anonymous]) await c?.close();
    await t?.close();
    await tg?.close();
  });

  it('only an OWNER sets up channels; ADMINs may read; MEMBERs and strangers are refused', async () => {
    expect(codeOf(keep(await anonymous.http(ChannelSetupsDocument, {})))).toBe('UNAUTHENTICATED');
    expect(codeOf(keep(await anonymous.http(SetTelegramBotDocument, { botToken: token })))).toBe('UNAUTHENTICATED');
    expect(codeOf(keep(await member.http(ChannelSetupsDocument, {})))).toBe('FORBIDDEN');
    expect(codeOf(keep(await member.http(SetTelegramBotDocument, { botToken: token })))).toBe('FORBIDDEN');
    expect(codeOf(keep(await member.http(EnableWhatsAppDocument, {})))).toBe('FORBIDDEN');
    expect(codeOf(keep(await member.http(RemoveChannelSetupDocument, { channel: 'telegram' })))).toBe('FORBIDDEN');
    expect(dataOf(keep(await admin.http(ChannelSetupsDocument, {}))).channelSetups.map((s) => s.channel)).toEqual(['telegram', 'whatsapp']);
    expect(codeOf(keep(await admin.http(SetTelegramBotDocument, { botToken: token })))).toBe('FORBIDDEN');
    expect(codeOf(keep(await admin.http(EnableWhatsAppDocument, {})))).toBe('FORBIDDEN');
    expect(codeOf(keep(await admin.http(RemoveChannelSetupDocument, { channel: 'telegram' })))).toBe('FORBIDDEN');
    // Refused callers reached no Bot API and stored nothing.
    expect(tg.callsOf('getMe')).toHaveLength(0);
    expect(dataOf(await owner.http(ChannelSetupsDocument, {})).channelSetups.every((s) => s.source === 'NONE')).toBe(true);
  });

  it('malformed tokens are refused before any request leaves the server, without repeating them', async () => {
    const id = token.split(':')[0]!;
    const hostile = [
      `${id}:${'A'.repeat(200_000)}`,
      `${id}:AA../../../../getUpdates?x=${'b'.repeat(30)}`,
      `${id}:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/getMe#`,
      `${id}:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\nX-Injected: 1`,
      `${token}@evil.example`,
      `http://evil.example/${token}`,
      '',
    ];
    for (const botToken of hostile) {
      const r = keep(await owner.http(SetTelegramBotDocument, { botToken }));
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(r.errors![0]!.message).toMatch(/not a Telegram bot token/);
      if (botToken) expect(JSON.stringify(r)).not.toContain(botToken.slice(id.length + 1, id.length + 30));
    }
    expect(tg.callsOf('getMe')).toHaveLength(0);
    expect(codeOf(keep(await owner.http(RemoveChannelSetupDocument, { channel: '../../etc/passwd' })))).toBe('BAD_USER_INPUT');
    expect(codeOf(keep(await owner.http(RemoveChannelSetupDocument, { channel: 'web' })))).toBe('BAD_USER_INPUT');
  });

  it('a Bot API error that echoes the token does not carry it into the answer', async () => {
    tg.failNext('getMe', 1, { error_code: 400, description: `Bad Request: bot ${token} is not allowed here` });
    const r = keep(await owner.http(SetTelegramBotDocument, { botToken: token }));
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors![0]!.message).toContain('[bot token]');
    expect(dataOf(await owner.http(ChannelSetupsDocument, {})).channelSetups[0]!.source).toBe('NONE');
  });

  it('a stored token is never returned: no field holds it, and no answer, audit entry, log line or column shows it', async () => {
    const stored = keep(await owner.http(SetTelegramBotDocument, { botToken: token }));
    expect(dataOf(stored).setTelegramBot).toMatchObject({ source: 'CONSOLE', secretSet: true });
    // The schema has no field that could carry it.
    const introspection = keep(await owner.http<{ __type: { fields: Array<{ name: string }> } }, unknown>('{ __type(name: "ChannelSetup") { fields { name } } }' as never));
    expect(dataOf(introspection).__type.fields.map((f) => f.name).sort()).toEqual(['channel', 'label', 'secretSet', 'source', 'updatedAt', 'updatedById']);
    keep(await owner.http(ChannelSetupsDocument, {}));
    keep(await admin.http(ChannelSetupsDocument, {}));
    keep(await owner.http(ChannelStatesDocument, {}));
    keep(await owner.http(PluginSettingsDocument, {}));
    const audit = keep(await owner.http(AuditLogDocument, { first: 100 }));
    expect(JSON.stringify(audit)).toContain('channel.setup');

    const secretPart = token.split(':')[1]!;
    for (const answer of answers) expect(answer).not.toContain(secretPart);
    expect(t.logs.text).not.toContain(secretPart);
    const rows: Array<Record<string, unknown>> = await t.app.db.dataSource.query('SELECT * FROM channel_setups');
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(secretPart);
    // The bot did start with it (the token was used, only never shown).
    await tg.waitFor(() => tg.callsOf('getUpdates').length > 0, 'the bot polling', 15_000);
  });
});
