import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { ChannelRegistry } from '../../../server/channels/channel-registry';
import type { ChannelStatus, ChannelTransport } from '../../../server/channels/channel.types';
import { ChannelSwitch } from '../../../server/channels/policies/channel-switch';
import { ProcessLiveness } from '../../../server/redis/process-liveness';
import { RedisChannelLeases } from '../../../server/redis/redis-channel-leases';
import { eventually } from '../../support/chat-helpers';

const logger = pino({ enabled: false });
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function transport(channel: string): ChannelTransport & { running: boolean } {
  const t = {
    channel,
    maxMessageLength: 4096,
    running: false,
    async start() {
      t.running = true;
    },
    async stop() {
      t.running = false;
    },
    async send() {
      return {};
    },
    status: (): ChannelStatus => ({ channel, state: t.running ? 'POLLING' : 'STOPPED', updatedAt: new Date(0) }),
  };
  return t;
}

/** One "process": its own Redis connection, heartbeat, registry and channel switch. */
async function node(prefix: string, leaseMs = 20_000) {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const liveness = new ProcessLiveness(redis, prefix, 1500);
  await liveness.start();
  const registry = new ChannelRegistry(logger);
  const tg = transport('telegram');
  registry.register(tg);
  const channelSwitch = new ChannelSwitch(
    { registry, settings: { isEnabled: async () => true }, sink: async () => undefined, logger, leases: new RedisChannelLeases(redis, prefix, leaseMs, liveness) },
    { pollIntervalMs: 100 },
  );
  await channelSwitch.start();
  return {
    tg,
    registry,
    /** A clean shutdown: channels stopped, lease released, heartbeat gone. */
    stop: async () => {
      await channelSwitch.stop();
      await liveness.stop();
      redis.disconnect();
    },
    /** Like SIGKILL: nothing is released, heartbeat and lease just stop being renewed. */
    crash: () => {
      redis.disconnect();
    },
    /** After a crash: stop the timers the test process still has. */
    cleanup: async () => {
      await channelSwitch.stop().catch(() => undefined);
      await liveness.stop().catch(() => undefined);
    },
  };
}

describe('channel leases across processes (real Redis)', () => {
  it('runs a channel in exactly one process; a clean stop hands it over at once', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const a = await node(prefix);
    const b = await node(prefix);
    try {
      await eventually(() => a.tg.running || b.tg.running, 5000, 'one holder');
      expect([a.tg.running, b.tg.running].filter(Boolean)).toHaveLength(1);
      const [holder, other] = a.tg.running ? [a, b] : [b, a];
      await holder.stop();
      await eventually(() => other.tg.running, 5000, 'the other process to take the channel');
      expect(other.registry.isStarted('telegram')).toBe(true);
    } finally {
      await a.stop().catch(() => undefined);
      await b.stop().catch(() => undefined);
    }
  });

  it('takes the channel over from a holder that died without releasing it, once its heartbeat is gone (before the lease runs out)', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}`;
    const a = await node(prefix, 60_000);
    await eventually(() => a.tg.running, 5000, 'the first holder');
    const b = await node(prefix, 60_000);
    try {
      a.crash();
      await eventually(() => b.tg.running, 15_000, 'the survivor to take the channel');
    } finally {
      await b.stop();
      await a.cleanup();
    }
  });
});
