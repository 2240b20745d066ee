import pino from 'pino';
import type { ChannelState, ChannelStatus, ChannelTransport, InboundMessage } from '../../../server/channels/channel.types';
import { ChannelRegistry } from '../../../server/channels/channel-registry';
import { DeliveryService } from '../../../server/channels/delivery';
import { splitMessage } from '../../../server/channels/message-splitter';
import { Ctx } from '../../../server/common/ctx';
import { FakeClock } from '../fakes/fake-clock';
import { InMemoryMailbox, InMemorySessionEvents, InProcessDeliveryJobs } from '../ports';

/** The platform side of a transport that sends messages itself (`delivery: 'queue'`). */
export interface PlatformSide {
  /** A chat id of this platform no other test uses. */
  newChat(): string;
  /** The texts the chat shows, in order, as its users see them. */
  delivered(chatId: string): string[];
  /** The next send of a text containing `marker` fails as a network failure would. */
  failNextSendOf(marker: string): void;
  /** How a markdown reply shows on this platform. */
  rendered(markdown: string): string;
  /** Makes the platform reject the markup of the next formatted message (platforms that format). */
  rejectMarkupOnce?(): void;
  /** Typing indicators the chat got so far (typing-capable transports). */
  typingSignals?(chatId: string): number;
  /** Pushes a DM from a user (text, or a photo with a caption where `photos`). */
  pushDm?(chatId: string, input: { text: string; photo?: Buffer }): void;
  /** Whether inbound photos reach the sink as images. */
  photos?: boolean;
}

/** A transport under test and the fake platform behind it. */
export interface TransportRig {
  transport: ChannelTransport;
  /** Every status the transport reported through its `onStatus` hook, in order. */
  reported: ChannelStatus[];
  /** After `start`: waits until the fake platform has the transport connected. */
  connect(): Promise<void>;
  /** The state a running transport reports. */
  runningState: ChannelState;
  /** Set for `queue` transports. */
  platform?: PlatformSide;
  /** Set for `session-events` transports (web, TUI): whether the config enables the channel. */
  sessionEvents?: { enabled: boolean };
  close(): Promise<void>;
}

/** Polls `check` on the event loop (no fixed sleep): resolves once it holds, fails after `ms`. */
export async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** Refresh interval rigs give typing indicators, so refreshes happen quickly enough to be awaited. */
export const TYPING_REFRESH_MS = 40;

const logger = pino({ level: 'silent' });
const ctx = () => Ctx.system(logger, 'conformance');

/** A reply of about `factor` × `limit` characters in numbered paragraphs (to check order after splitting). */
function longReply(limit: number, factor: number): string {
  const paragraphs: string[] = [];
  for (let i = 1; paragraphs.join('\n\n').length < limit * factor; i++) paragraphs.push(`Paragraph ${i}: ${'lorem ipsum '.repeat(Math.min(40, Math.ceil(limit / 200)))}`.trim());
  return paragraphs.join('\n\n');
}

/**
 * The ChannelTransport contract: every transport runs this suite with its fake platform. `create` makes a
 * new, not yet started transport (the suite starts and stops it).
 */
export function describeChannelTransportConformance(name: string, create: () => Promise<TransportRig>): void {
  describe(`ChannelTransport conformance: ${name}`, () => {
    const rigs: TransportRig[] = [];
    const rig = async () => {
      const r = await create();
      rigs.push(r);
      return r;
    };
    afterEach(async () => {
      for (const r of rigs.splice(0)) {
        await r.transport.stop();
        await r.close();
      }
    });

    /** The delivery service over this transport, with in-process mailbox, jobs and events. */
    async function delivery(r: TransportRig) {
      const registry = new ChannelRegistry(logger);
      registry.register(r.transport);
      const received: InboundMessage[] = [];
      await registry.start(r.transport.channel, async (m) => void received.push(m));
      await r.connect();
      const clock = new FakeClock();
      const mailbox = new InMemoryMailbox(clock);
      const jobs = new InProcessDeliveryJobs();
      const events = new InMemorySessionEvents();
      const service = new DeliveryService({ channels: registry, mailbox, jobs, events, logger }, { attempts: 5 });
      return { registry, service, mailbox, jobs, events, clock, received };
    }

    it('names its channel and reports statuses with a time', async () => {
      const r = await rig();
      const status = r.transport.status();
      expect(status.channel).toBe(r.transport.channel);
      expect(status.updatedAt).toBeInstanceOf(Date);
      expect(r.transport.maxMessageLength).toBeGreaterThanOrEqual(1000);
    });

    it('says how it delivers: platforms send chunks; session-event channels leave it to the event stream', async () => {
      const r = await rig();
      if (r.platform) expect(r.transport.delivery ?? 'queue').toBe('queue');
      else {
        expect(r.transport.delivery).toBe('session-events');
        expect(r.transport.maxMessageLength).toBeGreaterThanOrEqual(32_000);
      }
    });

    describe('lifecycle', () => {
      it('is STOPPED before start, running once connected, STOPPED after stop, and runs again after a restart', async () => {
        const r = await rig();
        if (r.sessionEvents) {
          // Switched by the config, not by start/stop: the API serves these clients in every role.
          const expected = r.sessionEvents.enabled ? { state: 'CONNECTED', enabled: true } : { state: 'STOPPED', enabled: false };
          expect(r.transport.status()).toMatchObject(expected);
          await r.transport.start(async () => undefined);
          expect(r.transport.status()).toMatchObject(expected);
          await r.transport.stop();
          expect(r.transport.status()).toMatchObject(expected);
          return;
        }
        expect(r.transport.status().state).toBe('STOPPED');
        await r.transport.start(async () => undefined);
        await r.connect();
        expect(r.transport.status()).toMatchObject({ state: r.runningState, lastError: null });
        await r.transport.stop();
        expect(r.transport.status().state).toBe('STOPPED');
        await r.transport.start(async () => undefined);
        await r.connect();
        expect(r.transport.status().state).toBe(r.runningState);
        const states = r.reported.map((s) => s.state);
        expect(states).toContain(r.runningState);
        expect(states).toContain('STOPPED');
        expect(states.at(-1)).toBe(r.runningState);
        expect(r.reported.every((s) => s.channel === r.transport.channel)).toBe(true);
      });

      it('stops cleanly when it was never started, and a second start is harmless', async () => {
        const r = await rig();
        await r.transport.stop();
        if (r.platform) expect(r.transport.status().state).toBe('STOPPED');
        await r.transport.start(async () => undefined);
        await r.transport.start(async () => undefined);
        await r.connect();
        if (r.platform) expect(r.transport.status().state).toBe(r.runningState);
      });
    });

    describe('sending', () => {
      it('sends a chunk as written and returns the platform id of each message', async () => {
        const r = await rig();
        if (!r.platform) return void expect(r.sessionEvents).toBeDefined();
        const p = r.platform;
        await r.transport.start(async () => undefined);
        await r.connect();
        const chat = p.newChat();
        const text = 'Plain words with markup characters: 1 < 2 && 3 > 2.';
        const a = await r.transport.send({ chatId: chat, text, idempotencyKey: 'conf:a:0' });
        const b = await r.transport.send({ chatId: chat, text: 'second', idempotencyKey: 'conf:b:0' });
        expect(p.delivered(chat)).toEqual([text, 'second']);
        expect(a.platformMessageId).toEqual(expect.any(String));
        expect(b.platformMessageId).toEqual(expect.any(String));
        expect(a.platformMessageId).not.toBe(b.platformMessageId);
      });

      it('renders markdown the platform way, and falls back to plain text (once) when the markup is refused', async () => {
        const r = await rig();
        if (!r.platform) return void expect(r.sessionEvents).toBeDefined();
        const p = r.platform;
        await r.transport.start(async () => undefined);
        await r.connect();
        const chat = p.newChat();
        const markdown = '**Note:** run `ls -l` first.';
        await r.transport.send({ chatId: chat, text: markdown, idempotencyKey: 'conf:md:0' });
        expect(p.delivered(chat)).toEqual([p.rendered(markdown)]);
        if (!p.rejectMarkupOnce) return;
        p.rejectMarkupOnce();
        await r.transport.send({ chatId: chat, text: markdown, idempotencyKey: 'conf:md:1' });
        expect(p.delivered(chat)).toEqual([p.rendered(markdown), markdown]);
      });

      it('delivers a long reply split to its limit, every chunk once and in order, across a failed attempt', async () => {
        const r = await rig();
        const d = await delivery(r);
        if (!r.platform) {
          await d.service.deliver(ctx(), { sessionId: 's1', channel: r.transport.channel, chatId: 'web-chat', messageId: 'm1', text: longReply(4096, 3) });
          expect(d.jobs.scheduled).toEqual([]);
          expect(d.mailbox.waiting(`${r.transport.channel}:web-chat`)).toEqual([]);
          return;
        }
        const p = r.platform;
        const chat = p.newChat();
        const text = longReply(r.transport.maxMessageLength, 2.5);
        const chunks = splitMessage(text, r.transport.maxMessageLength);
        expect(chunks.length).toBeGreaterThanOrEqual(3);
        p.failNextSendOf('Paragraph' + chunks[1]!.slice('Paragraph'.length, 40));

        await d.service.deliver(ctx(), { sessionId: 's1', channel: r.transport.channel, chatId: chat, messageId: 'm1', text });
        // Handed over twice (a retried turn): still one message.
        await d.service.deliver(ctx(), { sessionId: 's1', channel: r.transport.channel, chatId: chat, messageId: 'm1', text });
        expect(d.jobs.scheduled.map((j) => j.key)).toEqual(['reply:m1', 'reply:m1']);

        const first = await d.service.drain(ctx(), r.transport.channel, chat, new AbortController().signal);
        expect(first).toMatchObject({ sent: 1, skipped: 0, retryAt: expect.any(Number) });
        expect(p.delivered(chat)).toEqual([chunks[0]]);
        // Before the back-off is over nothing is sent.
        expect(await d.service.drain(ctx(), r.transport.channel, chat, new AbortController().signal)).toMatchObject({ sent: 0, skipped: 0 });

        d.clock.advance(60_000);
        const second = await d.service.drain(ctx(), r.transport.channel, chat, new AbortController().signal);
        expect(second).toEqual({ sent: chunks.length - 1, skipped: 1 });
        const third = await d.service.drain(ctx(), r.transport.channel, chat, new AbortController().signal);
        expect(third).toEqual({ sent: 0, skipped: 0 });
        expect(p.delivered(chat)).toEqual(chunks.map((c) => p.rendered(c)));
        expect(chunks.every((c) => c.length <= r.transport.maxMessageLength)).toBe(true);
      });

      it('a notice of a session reaches its event stream once; platform chats also get it', async () => {
        const r = await rig();
        const d = await delivery(r);
        const chat = r.platform?.newChat() ?? 'web-chat';
        const target = { channel: r.transport.channel, chatId: chat, key: 'notice:1', sessionId: 'sess-n' };
        await d.service.notify(ctx(), target, 'Heads up.');
        expect(d.events.of('sess-n', 'Notice').map((e) => e.text)).toEqual(['Heads up.']);
        if (!r.platform) return void expect(d.jobs.scheduled).toEqual([]);
        await d.service.drain(ctx(), r.transport.channel, chat, new AbortController().signal);
        await d.service.notify(ctx(), target, 'Heads up.');
        await d.service.drain(ctx(), r.transport.channel, chat, new AbortController().signal);
        expect(r.platform.delivered(chat)).toEqual(['Heads up.']);
      });
    });

    describe('typing', () => {
      it('shows typing at once, keeps it alive while on, and stops refreshing when switched off', async () => {
        const r = await rig();
        const signals = r.platform?.typingSignals;
        if (!r.transport.setTyping || !signals) return void expect(r.transport.delivery).toBe('session-events');
        await r.transport.start(async () => undefined);
        await r.connect();
        const off = r.platform!.newChat();
        const witness = r.platform!.newChat();
        await r.transport.setTyping(off, true);
        expect(signals(off)).toBe(1);
        await r.transport.setTyping(off, false);
        const afterOff = signals(off);
        await r.transport.setTyping(witness, true);
        // The witness chat's refreshes show time passing with the refresher running.
        await until('three typing refreshes of the witness chat', () => signals(witness) >= 4);
        expect(signals(off)).toBe(afterOff);
        await r.transport.setTyping(witness, false);
      });
    });

    describe('inbound', () => {
      it('hands a DM to the sink as an InboundMessage of its channel', async () => {
        const r = await rig();
        if (!r.platform?.pushDm) return void expect(r.transport.delivery).toBe('session-events');
        const received: InboundMessage[] = [];
        await r.transport.start(async (m) => void received.push(m));
        await r.connect();
        const chat = r.platform.newChat();
        r.platform.pushDm(chat, { text: 'hello from the platform' });
        await until('the inbound message', () => received.length === 1);
        expect(received[0]).toMatchObject({ channel: r.transport.channel, chatId: chat, chatKind: 'dm', text: 'hello from the platform', platformMessageId: expect.any(String) });
      });

      it('passes a photo with its caption as an image (where the platform has photos)', async () => {
        const r = await rig();
        if (!r.platform?.pushDm || !r.platform.photos) return void expect(r.platform?.photos ?? false).toBe(false);
        const received: InboundMessage[] = [];
        await r.transport.start(async (m) => void received.push(m));
        await r.connect();
        const chat = r.platform.newChat();
        const photo = Buffer.from('jpeg bytes of a cat');
        r.platform.pushDm(chat, { text: 'my cat', photo });
        await until('the photo message', () => received.length === 1);
        expect(received[0]).toMatchObject({ text: 'my cat', images: [{ mimeType: 'image/jpeg', dataBase64: photo.toString('base64') }] });
      });
    });
  });
}
