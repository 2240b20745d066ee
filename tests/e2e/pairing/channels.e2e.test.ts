import type { ExecutionResult } from 'graphql';
import { ChannelSwitch } from '../../../server/channels/policies/channel-switch';
import { TrustLevel } from '../../../server/common/trust';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeTransport, inbound, PairingGraphQL, sinkOf, until } from './pairing-fixture';

/**
 * Channel status (issue 4): the `channels` query, the `channelStatus` subscription, and switching a
 * channel on and off live through the `channel:<name>` plugin setting. A fake transport stands in for
 * Telegram; the ChannelSwitch is built as the composition root would build it.
 */
describe('channels, channelStatus and live on/off', () => {
  let t: TestApp;
  let gql: PairingGraphQL;
  let telegram: FakeTransport;
  let channelSwitch: ChannelSwitch;
  let memberToken: string;

  beforeAll(async () => {
    t = await startTestApp({ config: { channels: { tui: { enabled: false } } } });
    const registry = t.app.chat!.channels;
    telegram = new FakeTransport('telegram', (s) => registry.emitStatus(s));
    registry.register(telegram);
    channelSwitch = new ChannelSwitch({ registry, settings: t.app.services.plugins, sink: sinkOf(t.app), logger: t.app.logger }, { pollIntervalMs: 50 });
    await channelSwitch.start();
    gql = await PairingGraphQL.create(t.app);
    const sys = t.app.systemCtx('test');
    const member = await t.app.services.users.create(sys, { displayName: 'Mo Member', trust: TrustLevel.MEMBER });
    memberToken = (await t.app.services.tokens.create(sys, member.id, 'test')).token;
  });
  afterAll(async () => {
    channelSwitch.stop();
    await t.close();
  });

  it('channels (ADMIN+): each transport with its state plus web, TUI and the OpenAI-compatible API', async () => {
    expect(telegram.running).toBe(true);
    const res = await gql.exec(t.ownerToken, CHANNELS);
    expect(res.code).toBeUndefined();
    expect(res.data!.channels).toEqual([
      { name: 'telegram', enabled: true, state: 'POLLING', lastError: null, qr: null, updatedAt: expect.any(String) },
      { name: 'web', enabled: true, state: 'CONNECTED', lastError: null, qr: null, updatedAt: expect.any(String) },
      { name: 'tui', enabled: false, state: 'STOPPED', lastError: null, qr: null, updatedAt: expect.any(String) },
      { name: 'api', enabled: true, state: 'CONNECTED', lastError: null, qr: null, updatedAt: expect.any(String) },
    ]);
    expect((await gql.exec(memberToken, CHANNELS)).code).toBe('FORBIDDEN');
    expect((await gql.exec(null, CHANNELS)).code).toBe('UNAUTHENTICATED');
  });

  it('channelStatus (ADMIN+) delivers status changes, e.g. a QR while linking and an error', async () => {
    const refused = await gql.subscribe(memberToken, STATUS);
    expect(refused.error?.code).toBe('FORBIDDEN');

    const { events } = await gql.subscribe(t.ownerToken, STATUS);
    telegram.report('NEEDS_LINK', { qr: '2@qr-text' });
    telegram.report('ERROR', { lastError: '409 Conflict: another poller' });
    const first = await next(events!);
    const second = await next(events!);
    expect(first).toEqual({ name: 'telegram', enabled: true, state: 'NEEDS_LINK', lastError: null, qr: '2@qr-text', updatedAt: expect.any(String) });
    expect(second).toMatchObject({ state: 'ERROR', lastError: '409 Conflict: another poller', qr: null });
    await events!.return?.();

    const listed = await gql.exec(t.ownerToken, CHANNELS);
    expect((listed.data!.channels as Array<{ name: string; state: string }>)[0]).toMatchObject({ name: 'telegram', state: 'ERROR' });
    telegram.report('POLLING');
  });

  it('setPluginSetting channel:telegram off stops the transport live, on starts it again', async () => {
    const { events } = await gql.subscribe(t.ownerToken, STATUS);
    const stopsBefore = telegram.stops;

    const off = await gql.exec(t.ownerToken, SET, { input: { plugin: 'channel:telegram', enabled: false } });
    expect(off.data!.setPluginSetting).toEqual({ plugin: 'channel:telegram', channel: null, enabled: false });
    await until(() => !t.app.chat!.channels.isStarted('telegram'), 'telegram to stop');
    expect(telegram.stops).toBe(stopsBefore + 1);
    expect(telegram.running).toBe(false);
    expect(await next(events!)).toMatchObject({ name: 'telegram', enabled: false, state: 'STOPPED' });
    expect((await gql.exec(t.ownerToken, CHANNELS)).data!.channels).toContainEqual(expect.objectContaining({ name: 'telegram', enabled: false, state: 'STOPPED' }));
    // The switch reacts to changes only: it does not restart the channel on every poll (two more polls).
    await channelSwitch.reconcile();
    await channelSwitch.reconcile();
    expect(telegram.running).toBe(false);

    const startsBefore = telegram.starts;
    await gql.exec(t.ownerToken, SET, { input: { plugin: 'channel:telegram', enabled: true } });
    await until(() => t.app.chat!.channels.isStarted('telegram'), 'telegram to start');
    expect(telegram.starts).toBe(startsBefore + 1);
    expect(await next(events!)).toMatchObject({ name: 'telegram', enabled: true, state: 'POLLING' });
    await events!.return?.();

    // Restarted with the pipeline as its sink: an unknown sender is paired again.
    await telegram.receive(inbound('telegram', '7001', 'hello'));
    await until(() => telegram.textsTo('7001').some((text) => text.includes('pairing code')), 'a pairing code after the restart');
  });
});

/** The next event's `channelStatus` payload (fails after 5 s). */
async function next(events: AsyncIterator<ExecutionResult>): Promise<unknown> {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no channelStatus event within 5 s')), 5000).unref());
  const result = await Promise.race([events.next(), timeout]);
  if (result.done) throw new Error('the subscription ended');
  expect(result.value.errors).toBeUndefined();
  return (result.value.data as { channelStatus: unknown }).channelStatus;
}

const FIELDS = 'name enabled state lastError qr updatedAt';
const CHANNELS = `query Channels { channels { ${FIELDS} } }`;
const STATUS = `subscription Status { channelStatus { ${FIELDS} } }`;
const SET = 'mutation Set($input: PluginSettingInput!) { setPluginSetting(input: $input) { plugin channel enabled } }';
