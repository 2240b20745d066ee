import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { ChannelRegistry } from '../../../server/channels/channel-registry';
import type { ChannelStatus, ChannelTransport, OutboundChunk } from '../../../server/channels/channel.types';
import { DeliveryService } from '../../../server/channels/delivery';
import { Ctx } from '../../../server/common/ctx';
import { ProcessLiveness } from '../../../server/redis/process-liveness';
import { RedisMailbox } from '../../../server/redis/redis-mailbox';
import { eventually } from '../../support/chat-helpers';
import { InMemorySessionEvents, InProcessDeliveryJobs } from '../../support/ports';

const logger = pino({ enabled: false });
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ctx = () => Ctx.system(logger, 'test');

/** A platform channel that records what it sends; a chat listed in `hold` waits in its send until aborted. */
class RecordingTransport implements ChannelTransport {
  readonly channel = 'telegram';
  readonly maxMessageLength = 4096;
  readonly sent: Array<{ chatId: string; text: string; start: number; end: number }> = [];
  readonly failNext = new Set<string>();
  readonly hold = new Set<string>();

  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  async send(chunk: OutboundChunk, signal?: AbortSignal): Promise<{ platformMessageId?: string }> {
    const start = Date.now();
    if (this.hold.has(chunk.chatId)) await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    await new Promise((r) => setTimeout(r, 5));
    if (this.failNext.delete(chunk.text)) throw new Error(`platform refused "${chunk.text}"`);
    this.sent.push({ chatId: chunk.chatId, text: chunk.text, start, end: Date.now() });
    return { platformMessageId: String(this.sent.length) };
  }

  status(): ChannelStatus {
    return { channel: this.channel, state: 'POLLING', updatedAt: new Date() };
  }

  textsOf(chatId: string): string[] {
    return this.sent.filter((s) => s.chatId === chatId).map((s) => s.text);
  }
}

describe('outbound mailboxes in Redis, served in the process that holds the channel', () => {
  let redis: Redis;
  let liveness: ProcessLiveness;
  let prefix: string;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(async () => {
    prefix = `test-mailbox-${randomUUID()}`;
    liveness = new ProcessLiveness(redis, prefix);
    await liveness.start();
  });
  afterEach(async () => {
    await liveness.stop();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
  });

  describe('RedisMailbox', () => {
    const chat = { channel: 'telegram', chatId: '42' };

    it('adds a key once, also after it was delivered, and lists the chat as waiting until its mailbox is empty', async () => {
      const mailbox = new RedisMailbox(redis, prefix, 30_000, liveness);
      expect(await mailbox.add(chat, { key: 'k1', chunks: ['a', 'b'] })).toBe(true);
      expect(await mailbox.add(chat, { key: 'k1', chunks: ['a', 'b'] })).toBe(false);
      expect(await mailbox.add(chat, { key: 'k2', chunks: ['c'], stream: 'turn-1' })).toBe(true);
      expect(await mailbox.waitingChats('telegram')).toEqual(['42']);
      expect(await mailbox.waitingChats('whatsapp')).toEqual([]);

      const claimed = await mailbox.claim(chat);
      expect(claimed?.head).toEqual({ key: 'k1', chunks: ['a', 'b'], sent: [false, false], backoffMs: 0 });
      await mailbox.markSent('k1', 0);
      const next = await mailbox.finish(chat, 'k1', 1);
      expect(next).toEqual({ key: 'k2', chunks: ['c'], stream: 'turn-1', sent: [false], backoffMs: 0 });
      expect(await redis.exists(`${prefix}:outbound:sent:k1:1`)).toBe(1);
      expect(await mailbox.waitingChats('telegram')).toEqual(['42']);
      expect(await mailbox.finish(chat, 'k2')).toBeNull();
      expect(await mailbox.waitingChats('telegram')).toEqual([]);
      await claimed!.lock.release();
      // Delivered keys stay done.
      expect(await mailbox.add(chat, { key: 'k1', chunks: ['a', 'b'] })).toBe(false);
    });

    it('adds and takes the chat in one step; a chat served elsewhere still gets the item', async () => {
      const mailbox = new RedisMailbox(redis, prefix, 30_000, liveness);
      await mailbox.add(chat, { key: 'k0', chunks: ['zero'] });
      const first = await mailbox.addAndClaim(chat, { key: 'k1', chunks: ['one'] });
      expect(first).toEqual({ added: true, claimed: { lock: expect.anything(), head: { key: 'k0', chunks: ['zero'], sent: [false], backoffMs: 0 } } });
      expect(await mailbox.addAndClaim(chat, { key: 'k2', chunks: ['two'] })).toEqual({ added: true, claimed: null });
      expect(await mailbox.addAndClaim(chat, { key: 'k1', chunks: ['one'] })).toEqual({ added: false, claimed: null });
      expect(await mailbox.finish(chat, 'k0', 0)).toMatchObject({ key: 'k1' });
      expect(await mailbox.finish(chat, 'k1', 0)).toMatchObject({ key: 'k2', chunks: ['two'] });
      await first.claimed!.lock.release();
    });

    it('reads sent marks, a back-off and a voice item (one part) with the head', async () => {
      const mailbox = new RedisMailbox(redis, prefix, 30_000, liveness);
      const voice = { dataBase64: Buffer.from('ogg').toString('base64'), mimeType: 'audio/ogg', seconds: 1 };
      await mailbox.add(chat, { key: 'v1', chunks: [], voice });
      await mailbox.markSent('v1', 0);
      await mailbox.setBackoff('v1', 5000);
      const claimed = await mailbox.claim(chat);
      expect(claimed?.head).toMatchObject({ key: 'v1', chunks: [], voice, sent: [true] });
      expect(claimed!.head!.backoffMs).toBeGreaterThan(4000);
      expect(await mailbox.countFailure('v1')).toBe(1);
      expect(await mailbox.countFailure('v1')).toBe(2);
      await claimed!.lock.release();
    });

    it('one holder at a time: a held chat is not claimed; a dead holder is taken over with the head read', async () => {
      const mailbox = new RedisMailbox(redis, prefix, 30_000, liveness);
      expect(await mailbox.claim(chat)).toEqual({ lock: expect.anything(), head: null });
      await mailbox.add(chat, { key: 'k1', chunks: ['a'] });
      expect(await mailbox.claim(chat)).toBeNull();
      // A process whose heartbeat is gone held the lock.
      await redis.set(`${prefix}:outbound:lock:telegram:42`, 'dead-process|token', 'PX', 30_000);
      const other = new RedisMailbox(redis, prefix, 30_000, liveness);
      const taken = await other.claim(chat);
      expect(taken?.head).toEqual({ key: 'k1', chunks: ['a'], sent: [false], backoffMs: 0 });
      await taken!.lock.release();
    });
  });

  describe('DeliveryService with local drains', () => {
    async function world(options: { limit?: number; started?: boolean } = {}) {
      const registry = new ChannelRegistry(logger);
      const transport = new RecordingTransport();
      registry.register(transport);
      if (options.started !== false) await registry.start('telegram', async () => undefined);
      const mailbox = new RedisMailbox(redis, prefix, 30_000, liveness);
      const jobs = new InProcessDeliveryJobs();
      const service = new DeliveryService({ channels: registry, mailbox, jobs, events: new InMemorySessionEvents(), logger }, { attempts: 3, localDrains: options.limit ?? 4 });
      const notify = (chatId: string, key: string, text: string) => service.notify(ctx(), { channel: 'telegram', chatId, key }, text);
      return { registry, transport, mailbox, jobs, service, notify };
    }

    it('sends at once without a queue job, each chat in order and one send at a time, chats in parallel', async () => {
      const w = await world();
      await Promise.all(
        ['a', 'b'].map(async (chatId) => {
          for (let i = 0; i < 5; i++) await w.notify(chatId, `${chatId}:${i}`, `${chatId} #${i}`);
        }),
      );
      await eventually(() => w.transport.sent.length === 10, 10_000, 'every notice');
      for (const chatId of ['a', 'b']) {
        expect(w.transport.textsOf(chatId)).toEqual(Array.from({ length: 5 }, (_, i) => `${chatId} #${i}`));
        const sends = w.transport.sent.filter((s) => s.chatId === chatId);
        for (let i = 1; i < sends.length; i++) expect(sends[i]!.start).toBeGreaterThanOrEqual(sends[i - 1]!.end);
      }
      expect(w.jobs.scheduled).toEqual([]);
      await eventually(async () => (await w.mailbox.waitingChats('telegram')).length === 0, 5000, 'empty mailboxes');
      await w.service.close();
    });

    it('hands a failed send to the queue for the end of its back-off, and the queue job finishes it', async () => {
      const w = await world();
      w.transport.failNext.add('flaky');
      const before = Date.now();
      await w.notify('c', 'c:1', 'flaky');
      await eventually(() => w.jobs.scheduled.length === 1, 5000, 'the queue job');
      expect(w.jobs.scheduled[0]).toMatchObject({ channel: 'telegram', chatId: 'c', key: 'c:1' });
      expect(w.jobs.scheduled[0]!.at).toBeGreaterThanOrEqual(before + 1000);
      expect(w.transport.textsOf('c')).toEqual([]);
      // The job, once due (no waiting here: the back-off is cleared as its end would).
      await redis.del(`${prefix}:outbound:retry:c:1`);
      expect(await w.service.drain(ctx(), 'telegram', 'c', new AbortController().signal)).toEqual({ sent: 1, skipped: 0 });
      expect(w.transport.textsOf('c')).toEqual(['flaky']);
      await w.service.close();
    });

    it('goes through the queue when the chat is served elsewhere, the channel is not held here, or too many chats drain', async () => {
      const w = await world({ limit: 1 });
      const elsewhere = await new RedisMailbox(redis, prefix, 30_000, liveness).claim({ channel: 'telegram', chatId: 'busy' });
      await w.notify('busy', 'busy:1', 'waits');
      await eventually(() => w.jobs.scheduled.some((j) => j.key === 'busy:1'), 5000, 'the busy chat queued');
      expect(w.jobs.scheduled.find((j) => j.key === 'busy:1')!.at).toBeGreaterThan(Date.now() - 1000);
      await elsewhere!.lock.release();

      w.transport.hold.add('slow');
      await w.notify('slow', 'slow:1', 'held');
      await w.notify('other', 'other:1', 'over the limit');
      expect(w.jobs.scheduled.map((j) => j.key)).toContain('other:1');

      const away = await world({ started: false });
      await away.notify('x', 'x:1', 'not held here');
      expect(away.jobs.scheduled.map((j) => j.key)).toEqual(['x:1']);

      // The channel stops here: the held drain is aborted, its chat goes to the queue, its message stays.
      await w.service.channelStopping('telegram');
      expect(w.jobs.scheduled.map((j) => j.key)).toContain('slow:1');
      expect(await w.mailbox.waitingChats('telegram')).toEqual(expect.arrayContaining(['slow', 'other', 'busy', 'x']));
      await w.service.close();
      await away.service.close();
    });

    it('whoever takes the channel serves the mailboxes a dead holder left', async () => {
      const mailbox = new RedisMailbox(redis, prefix, 30_000, liveness);
      await mailbox.add({ channel: 'telegram', chatId: 'left' }, { key: 'left:1', chunks: ['one', 'two'] });
      await mailbox.markSent('left:1', 0);
      await mailbox.add({ channel: 'telegram', chatId: 'left' }, { key: 'left:2', chunks: ['three'] });
      const w = await world();
      await w.service.channelStarted('telegram');
      await eventually(() => w.transport.textsOf('left').length === 2, 5000, 'the waiting messages');
      expect(w.transport.textsOf('left')).toEqual(['two', 'three']);
      expect(w.jobs.scheduled).toEqual([]);
      await eventually(async () => (await w.mailbox.waitingChats('telegram')).length === 0, 5000, 'empty mailboxes');
      await w.service.close();
    });
  });
});
