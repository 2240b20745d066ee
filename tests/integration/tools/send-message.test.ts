import { TrustLevel } from '../../../server/common/trust';
import { createSendMessageTool } from '../../../server/modules/tools';
import { call, ToolsFixture } from './tools-fixture';

describe('send_message', () => {
  let f: ToolsFixture;

  beforeAll(async () => {
    f = await ToolsFixture.create();
    f.register(createSendMessageTool({ users: f.app.services.users, sender: f.sender }));
    const sys = f.systemCtx();
    await f.app.services.users.linkIdentity(sys, f.user(TrustLevel.TRUSTED).id, 'web', f.user(TrustLevel.TRUSTED).id);
    await f.app.services.users.create(sys, { displayName: 'no identities', trust: TrustLevel.MEMBER });
  });
  afterAll(() => f.close());
  beforeEach(() => void f.sender.sent.splice(0));

  const run = (level: TrustLevel, args: unknown, channel = 'telegram') =>
    f.pipeline.runAll(f.toolContext(level, { channel }), [call('send_message', args)]).then(([o]) => o!);

  it('sends to one of your own identities by user id, preferring the current channel', async () => {
    const me = f.user(TrustLevel.TRUSTED).id;
    const viaWeb = await run(TrustLevel.TRUSTED, { user_id: me, text: 'hi' }, 'web');
    expect(viaWeb.status).toBe('ok');
    expect(JSON.parse(viaWeb.output)).toEqual({ sent: true, to: `web:${me}`, userId: me });
    const viaTelegram = await run(TrustLevel.TRUSTED, { user_id: me, text: 'hi' }, 'telegram');
    expect(JSON.parse(viaTelegram.output).to).toBe('telegram:tg-trusted');
    const explicit = await run(TrustLevel.TRUSTED, { user_id: me, channel: 'telegram', text: 'hi' }, 'web');
    expect(JSON.parse(explicit.output).to).toBe('telegram:tg-trusted');
    expect(f.sender.sent.map((s) => s.target)).toEqual([
      { channel: 'web', chatId: me },
      { channel: 'telegram', chatId: 'tg-trusted' },
      { channel: 'telegram', chatId: 'tg-trusted' },
    ]);
  });

  it('below ADMIN, an unknown handle is refused like someone else’s (existence is not revealed)', async () => {
    const unknown = await run(TrustLevel.TRUSTED, { channel: 'telegram', handle: 'tg-nobody', text: 'x' });
    const others = await run(TrustLevel.TRUSTED, { channel: 'telegram', handle: 'tg-admin', text: 'x' });
    expect(unknown.status).toBe('refused');
    expect(others.status).toBe('refused');
    expect(unknown.output.replace('tg-nobody', 'H')).toBe(others.output.replace('tg-admin', 'H'));
    expect(f.sender.sent).toEqual([]);
  });

  it('ADMIN may message anyone known; unknown targets are errors', async () => {
    expect((await run(TrustLevel.ADMIN, { channel: 'telegram', handle: 'tg-nobody', text: 'x' })).output).toContain('no user has the identity telegram:tg-nobody');
    expect((await run(TrustLevel.ADMIN, { user_id: 'missing', text: 'x' })).output).toContain('user missing was not found');
    const lonely = (await f.app.services.users.listAll(f.systemCtx())).find((u) => u.displayName === 'no identities')!;
    expect((await run(TrustLevel.ADMIN, { user_id: lonely.id, text: 'x' })).output).toContain('has no identity to send to');
    expect((await run(TrustLevel.ADMIN, { user_id: f.user(TrustLevel.GUEST).id, channel: 'whatsapp', text: 'x' })).output).toContain('has no identity on whatsapp');
    const ok = await run(TrustLevel.ADMIN, { user_id: f.user(TrustLevel.GUEST).id, text: 'welcome' });
    expect(ok.status).toBe('ok');
    expect(f.sender.sent).toEqual([{ target: { channel: 'telegram', chatId: 'tg-guest' }, text: 'welcome', from: f.user(TrustLevel.ADMIN).id }]);
  });

  it('validates the target, naming the field', async () => {
    const both = await run(TrustLevel.OWNER, { user_id: 'x', channel: 'telegram', handle: 'h', text: 'x' });
    expect(both.status).toBe('invalid');
    expect(both.output).toContain('handle: give either user_id or channel + handle');
    expect((await run(TrustLevel.OWNER, { handle: 'h', text: 'x' })).output).toContain('channel: channel is required with handle');
    expect((await run(TrustLevel.OWNER, { text: 'x' })).output).toContain('handle: give channel + handle, or user_id');
    expect((await run(TrustLevel.OWNER, { user_id: 'x', text: '   ' })).output).toContain('text:');
  });

  it('audits a short summary, not the message text', async () => {
    await run(TrustLevel.ADMIN, { channel: 'telegram', handle: 'tg-member', text: 'the secret plan is 42' });
    const last = (await f.audit('tool.call')).at(-1)!;
    expect(last.details!.args).toBe('to=telegram:tg-member text=21 chars');
    expect(JSON.stringify(last.details)).not.toContain('secret plan');
  });
});
