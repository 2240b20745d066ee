import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { corkWritesPerTick } from '../../../server/redis/tick-corked-writes';

const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Counts the flushes of the client's socket: calls of its `_write`/`_writev`, which hand data to the kernel. */
function countFlushes(client: Redis): { count: number } {
  const flushes = { count: 0 };
  const stream = (client as unknown as { stream: Socket & Record<'_write' | '_writev', (...a: unknown[]) => unknown> }).stream;
  for (const method of ['_write', '_writev'] as const) {
    const original = stream[method].bind(stream);
    stream[method] = (...a: unknown[]) => {
      flushes.count++;
      return original(...a);
    };
  }
  return flushes;
}

describe('corkWritesPerTick', () => {
  const prefix = `test-cork-${randomUUID()}`;
  let client: Redis;

  beforeEach(async () => {
    client = new Redis(URL, { lazyConnect: true });
    corkWritesPerTick(client);
    await client.connect();
  });
  afterEach(async () => {
    const keys = await client.keys(`${prefix}:*`);
    if (keys.length) await client.del(...keys);
    await client.quit();
  });

  it('sends the commands of one tick in one write, and answers each in order', async () => {
    const flushes = countFlushes(client);
    const replies = await Promise.all([
      client.set(`${prefix}:a`, '1'),
      client.incr(`${prefix}:a`),
      client.incrby(`${prefix}:a`, 5),
      client.get(`${prefix}:a`),
    ]);
    expect(replies).toEqual(['OK', 2, 7, '7']);
    expect(flushes.count).toBe(1);
  });

  it('sends commands of different ticks apart, and each still gets its answer', async () => {
    const flushes = countFlushes(client);
    expect(await client.incr(`${prefix}:b`)).toBe(1);
    expect(await client.incr(`${prefix}:b`)).toBe(2);
    expect(await client.incr(`${prefix}:b`)).toBe(3);
    expect(flushes.count).toBe(3);
  });

  it('keeps working on the new connection after a reconnect', async () => {
    await client.set(`${prefix}:c`, 'before');
    const ready = new Promise((r) => client.once('ready', r));
    (client as unknown as { stream: Socket }).stream.destroy();
    await ready;
    const flushes = countFlushes(client);
    expect(await Promise.all([client.get(`${prefix}:c`), client.exists(`${prefix}:c`)])).toEqual(['before', 1]);
    expect(flushes.count).toBe(1);
  });
});
