import pino from 'pino';
import { ChannelRegistry } from '../../../server/channels/channel-registry';
import type { ChannelStatus, ChannelTransport } from '../../../server/channels/channel.types';
import { ChannelOverview } from '../../../server/channels/policies/channel-overview';
import { ChannelSwitch, type ChannelSettings } from '../../../server/channels/policies/channel-switch';
import { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';

const logger = pino({ enabled: false });
const admin = new Ctx({ actor: { kind: 'user', userId: 'a', trust: TrustLevel.ADMIN }, logger });
const member = new Ctx({ actor: { kind: 'user', userId: 'm', trust: TrustLevel.MEMBER }, logger });

/** A transport that counts starts and stops; `failStart` makes start throw. */
function transport(channel: string, failStart = false): ChannelTransport & { starts: number; stops: number } {
  let state: ChannelStatus['state'] = 'STOPPED';
  const t = {
    channel,
    maxMessageLength: 4096,
    starts: 0,
    stops: 0,
    async start() {
      t.starts += 1;
      if (failStart) throw new Error('bad token');
      state = 'POLLING';
    },
    async stop() {
      t.stops += 1;
      state = 'STOPPED';
    },
    async send() {
      return {};
    },
    status: (): ChannelStatus => ({ channel, state, updatedAt: new Date(0) }),
  };
  return t;
}

describe('ChannelSwitch', () => {
  let registry: ChannelRegistry;
  let switches: Record<string, boolean>;
  let reads: number;
  const settings: ChannelSettings = {
    isEnabled: async (_ctx, plugin, channel, fallback) => {
      reads += 1;
      expect(channel).toBeNull();
      return switches[plugin] ?? fallback;
    },
  };
  const make = () => new ChannelSwitch({ registry, settings, sink: async () => undefined, logger }, { pollIntervalMs: 60_000 });

  beforeEach(() => {
    registry = new ChannelRegistry(logger);
    switches = {};
    reads = 0;
  });

  it('starts the transports that are on (no row: on) and leaves the others stopped', async () => {
    const tg = transport('telegram');
    const wa = transport('whatsapp');
    registry.register(tg);
    registry.register(wa);
    switches['channel:whatsapp'] = false;
    const sw = make();
    await sw.start();
    sw.stop();
    expect([registry.isStarted('telegram'), registry.isStarted('whatsapp')]).toEqual([true, false]);
    expect([tg.starts, wa.starts]).toEqual([1, 0]);
  });

  it('reacts to changes only: a failed start is not retried on every poll, a switch-off stops once', async () => {
    const bad = transport('telegram', true);
    registry.register(bad);
    const sw = make();
    await sw.start();
    await sw.reconcile();
    await sw.reconcile();
    expect(bad.starts).toBe(1);
    switches['channel:telegram'] = false;
    await sw.reconcile();
    switches['channel:telegram'] = true;
    await sw.reconcile();
    expect(bad.starts).toBe(2);
    sw.stop();
    expect(reads).toBe(5);
  });

  it('stops and restarts a running transport when its setting flips', async () => {
    const tg = transport('telegram');
    registry.register(tg);
    const sw = make();
    await sw.start();
    switches['channel:telegram'] = false;
    await Promise.all([sw.reconcile(), sw.reconcile()]);
    expect([tg.stops, registry.isStarted('telegram')]).toEqual([1, false]);
    switches['channel:telegram'] = true;
    await sw.reconcile();
    expect([tg.starts, registry.isStarted('telegram')]).toEqual([2, true]);
    sw.stop();
  });
});

describe('ChannelOverview', () => {
  it('watch yields status changes in order, checks ADMIN at once, and unsubscribes on return()', async () => {
    const registry = new ChannelRegistry(logger);
    registry.register(transport('telegram'));
    const overview = new ChannelOverview({ registry, settings: { isEnabled: async () => true } });
    expect(() => overview.watch(member)).toThrow('ADMIN trust or higher is required for channel status.');
    const events = overview.watch(admin);
    registry.emitStatus({ channel: 'telegram', state: 'STARTING', updatedAt: new Date(1) });
    registry.emitStatus({ channel: 'telegram', state: 'NEEDS_LINK', qr: 'qr', updatedAt: new Date(2) });
    const a = await events.next();
    const b = await events.next();
    expect([a.value, b.value]).toEqual([
      { name: 'telegram', enabled: true, state: 'STARTING', lastError: null, qr: null, updatedAt: new Date(1) },
      { name: 'telegram', enabled: true, state: 'NEEDS_LINK', lastError: null, qr: 'qr', updatedAt: new Date(2) },
    ]);
    const pending = events.next();
    await events.return!();
    expect(await pending).toEqual({ done: true, value: undefined });
    registry.emitStatus({ channel: 'telegram', state: 'ERROR', updatedAt: new Date(3) });
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });
});
