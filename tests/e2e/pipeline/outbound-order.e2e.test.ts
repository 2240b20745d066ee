import { startTestApp, type TestApp } from '../../support/test-app';
import { eventually } from '../../support/chat-helpers';
import type { ChannelStatus, ChannelTransport, InboundSink, OutboundChunk } from '../../../server/channels/channel.types';
import { sleep } from './pipeline-helpers';

/** An in-memory platform whose sends take a while; `failures` makes a text fail that many times (Infinity: always). */
class SlowTransport implements ChannelTransport {
  readonly channel = 'telegram';
  readonly maxMessageLength = 4096;
  readonly sent: Array<{ chatId: string; text: string; key: string; start: number; end: number }> = [];
  readonly attempts = new Map<string, number>();
  readonly failures = new Map<string, number>();

  constructor(private readonly sendMs: number) {}

  async start(_sink: InboundSink): Promise<void> {}
  async stop(): Promise<void> {}

  async send(chunk: OutboundChunk): Promise<{ platformMessageId?: string }> {
    const start = Date.now();
    const tries = (this.attempts.get(chunk.text) ?? 0) + 1;
    this.attempts.set(chunk.text, tries);
    await sleep(this.sendMs);
    if (tries <= (this.failures.get(chunk.text) ?? 0)) throw new Error(`platform refused "${chunk.text}"`);
    this.sent.push({ chatId: chunk.chatId, text: chunk.text, key: chunk.idempotencyKey, start, end: Date.now() });
    return { platformMessageId: String(this.sent.length) };
  }

  status(): ChannelStatus {
    return { channel: this.channel, state: 'CONNECTED', updatedAt: new Date() };
  }

  textsOf(chatId: string): string[] {
    return this.sent.filter((s) => s.chatId === chatId).map((s) => s.text);
  }
}

/**
 * The outbound queue delivers what is handed to it for one chat in that order (DESIGN §2.5; a chat's
 * replies follow its turns), while chats proceed in parallel, and a chunk is never sent twice.
 */
describe('outbound delivery order', () => {
  let t: TestApp;
  let transport: SlowTransport;

  beforeAll(async () => {
    t = await startTestApp({ config: { queues: { outbound_attempts: 2 }, log: { level: 'error' } } });
    transport = new SlowTransport(40);
    t.app.chat!.channels.register(transport);
    await t.app.chat!.channels.start('telegram', async () => undefined);
  });
  afterAll(async () => {
    await t.close();
  });

  const notify = (chatId: string, key: string, text: string) =>
    t.app.chat!.delivery.notify(t.app.systemCtx('test'), { channel: 'telegram', chatId, key }, text);

  it('keeps the order of each chat while chats are served in parallel', async () => {
    const chats = ['chat-a', 'chat-b', 'chat-c'];
    await Promise.all(chats.map(async (chat) => {
      for (let i = 0; i < 6; i++) await notify(chat, `order:${chat}:${i}`, `${chat} #${i}`);
    }));
    await eventually(() => chats.every((c) => transport.textsOf(c).length === 6), 20_000, 'every notice');
    for (const chat of chats) expect(transport.textsOf(chat)).toEqual(Array.from({ length: 6 }, (_, i) => `${chat} #${i}`));
    // Never two sends at once in one chat; but different chats overlapped.
    for (const chat of chats) {
      const sends = transport.sent.filter((s) => s.chatId === chat);
      for (let i = 1; i < sends.length; i++) expect(sends[i]!.start).toBeGreaterThanOrEqual(sends[i - 1]!.end);
    }
    const a = transport.sent.filter((s) => s.chatId === 'chat-a');
    const others = transport.sent.filter((s) => s.chatId !== 'chat-a');
    expect(others.some((o) => a.some((s) => o.start < s.end && s.start < o.end))).toBe(true);
  });

  it('a failing message is retried in place; one that keeps failing is given up and the chat goes on in order', async () => {
    transport.failures.set('flaky', 1);
    transport.failures.set('poison', Infinity);
    for (const [i, text] of ['first', 'flaky', 'second', 'poison', 'third'].entries()) await notify('chat-f', `fail:${i}`, text);
    await eventually(() => transport.textsOf('chat-f').includes('third'), 20_000, 'the last notice');
    expect(transport.textsOf('chat-f')).toEqual(['first', 'flaky', 'second', 'third']);
    expect(transport.attempts.get('flaky')).toBe(2);
    // outbound_attempts: 2
    expect(transport.attempts.get('poison')).toBe(2);
  });

  it('the same key handed over twice is sent once, also after it was delivered', async () => {
    await notify('chat-d', 'dup:1', 'only once');
    await notify('chat-d', 'dup:1', 'only once');
    await eventually(() => transport.textsOf('chat-d').length === 1, 10_000, 'the notice');
    await notify('chat-d', 'dup:1', 'only once');
    await notify('chat-d', 'dup:2', 'next');
    // The chat's mailbox is served in order: a second copy of dup:1 would have come before 'next'.
    await eventually(() => transport.textsOf('chat-d').includes('next'), 10_000, 'the next notice');
    expect(transport.textsOf('chat-d')).toEqual(['only once', 'next']);
  });
});
