/**
 * Fault suite: the platforms misbehave while long replies (several chunks each) go out to many chats.
 * The fake Bot API answers sendMessage with storms of 429 (`retry_after`), 502 (JSON and a proxy's HTML
 * page) and reset connections; the fake WhatsApp socket drops its connection in the middle of sends and
 * reconnects. Asserted at the fakes: every chunk arrives exactly once per chat, in order, none lost, and
 * nothing is left waiting. The one window that cannot be closed on Telegram (the platform took the
 * message, then the answer was lost: the Bot API has no idempotency key) is tested for what it is: the
 * chunk comes again right after itself, nothing lost, nothing else repeated. On WhatsApp the retry
 * carries the same message id, so the recipient sees the message once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { In } from 'typeorm';
import { WhatsAppTransport } from '../../../server/channels/whatsapp';
import { TrustLevel } from '../../../server/common/trust';
import { Message, MessageStatus } from '../../../server/modules/sessions';
import { eventually } from '../../support/chat-helpers';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { TG_ERRORS, type FakeTgError } from '../../support/fakes/fake-telegram-server';
import { fakeSocketFactory, type FakeWhatsAppSocket } from '../../support/fakes/fake-whatsapp-socket';
import { startTestApp, type TestApp } from '../../support/test-app';
import { lastUserText } from '../pipeline/pipeline-helpers';
import { startTelegramKit, type TelegramKit } from '../telegram/telegram-kit';
import { queuesIdle, reportFigures } from './fault-kit';

const MESSAGES_PER_CHAT = 2;
const PARAGRAPHS = 24;

/** A reply of about 9,500 characters (three Telegram chunks), each paragraph tagged `[<tag> p<n>]`. */
function longReply(tag: string): string {
  const filler = 'The quick brown fox jumps over the lazy dog while the storm keeps the gateway busy again and again, ';
  return Array.from({ length: PARAGRAPHS }, (_, p) => `[${tag} p${p}] ${filler.repeat(4).trim()}`).join('\n\n');
}

function replyFor(userText: string): string {
  const tag = /(c\d+ m\d+)/.exec(userText)?.[1];
  return tag ? longReply(tag) : `Echo: ${userText}`;
}

/** The paragraph markers, in the order the chat shows them. */
function markersIn(texts: string[]): string[] {
  return texts.flatMap((t) => [...t.matchAll(/\[(c\d+ m\d+ p\d+)\]/g)].map((m) => m[1]!));
}

function expectedMarkers(chat: number): string[] {
  return Array.from({ length: MESSAGES_PER_CHAT }, (_, m) => Array.from({ length: PARAGRAPHS }, (_, p) => `c${chat} m${m} p${p}`)).flat();
}

interface ChatCheck {
  chunks: number;
  duplicatedChunks: number;
  lostParagraphs: number;
  outOfOrderChats: number;
  /** Chunks whose repeat came right after the chunk itself (the at-least-once window). */
  repeatedInPlace: number;
}

/** What each chat got (the texts of its messages, in arrival order) against what it should have got. */
function checkChats(received: Map<number, string[]>): ChatCheck {
  const out: ChatCheck = { chunks: 0, duplicatedChunks: 0, lostParagraphs: 0, outOfOrderChats: 0, repeatedInPlace: 0 };
  for (const [chat, texts] of received) {
    out.chunks += texts.length;
    out.duplicatedChunks += texts.length - new Set(texts).size;
    out.repeatedInPlace += texts.filter((text, i) => i > 0 && texts[i - 1] === text).length;
    const seen = markersIn(texts);
    const expected = expectedMarkers(chat);
    out.lostParagraphs += expected.filter((m) => !seen.includes(m)).length;
    // In order: with repeats in place dropped, the chat shows exactly the expected paragraphs.
    const once = markersIn(texts.filter((text, i) => i === 0 || texts[i - 1] !== text));
    if (JSON.stringify(once) !== JSON.stringify(expected)) out.outOfOrderChats++;
  }
  return out;
}

/** Messages left QUEUED or PROCESSING, and the chats' mailboxes not yet empty (asked of the queues). */
async function leftWaiting(t: TestApp): Promise<number> {
  const rows = await t.app.db.repo(t.app.systemCtx('test'), Message).count({ where: { status: In([MessageStatus.QUEUED, MessageStatus.PROCESSING]) } });
  await queuesIdle(t, 30_000);
  return rows;
}

function givenUp(t: TestApp): number {
  return t.logs.entries().filter((e) => e.msg === 'delivery given up').length;
}

describe('fault: channel storms', () => {
  describe('Telegram: 429 and 502 storms, reset connections', () => {
    const CHATS = 8;
    /** sendMessage calls answered with errors in a row, per storm (two storms). */
    const STORM = 20;
    let kit: TelegramKit;
    let chatBase = 0;

    beforeAll(async () => {
      kit = await startTelegramKit({ config: { queues: { outbound_concurrency: 16 }, log: { level: 'warn' } } });
      kit.model.setDefault((req) => ({ text: replyFor(lastUserText(req)) }));
    });

    afterAll(async () => {
      await kit.close();
    });

    /** Links CHATS new private chats, sends each MESSAGES_PER_CHAT messages; returns the chat ids (index → id). */
    async function newChats(): Promise<number[]> {
      const ids = Array.from({ length: CHATS }, (_, c) => 7_000_000 + chatBase + c);
      chatBase += 1000;
      for (const id of ids) await kit.linkUser(id);
      return ids;
    }

    function push(ids: number[]): void {
      for (let m = 0; m < MESSAGES_PER_CHAT; m++) ids.forEach((id, c) => kit.tg.pushMessage({ chatId: id, from: id, text: `please answer c${c} m${m}` }));
    }

    function received(ids: number[]): Map<number, string[]> {
      return new Map(ids.map((id, c) => [c, kit.tg.sentTo(id).map((s) => s.text)]));
    }

    function allArrived(ids: number[]): boolean {
      return ids.every((id, c) => {
        const seen = new Set(markersIn(kit.tg.sentTo(id).map((s) => s.text)));
        return expectedMarkers(c).every((m) => seen.has(m));
      });
    }

    function servedFaults(ids: number[]): Record<string, number> {
      const chats = new Set(ids.map(String));
      const calls = kit.tg.callsOf('sendMessage').filter((c) => c.fault && chats.has(String(c.params.chat_id)));
      const of = (pick: (f: FakeTgError) => boolean) => calls.filter((c) => pick(c.fault!)).length;
      return {
        served429: of((f) => f.error_code === 429),
        served502Json: of((f) => f.error_code === 502 && !f.html),
        served502Html: of((f) => f.error_code === 502 && !!f.html),
        connectionResets: of((f) => !!f.drop),
        acceptedThenFailed: of((f) => !!f.accepted),
      };
    }

    /** A storm: `count` sendMessage calls in a row answered with the errors in turn. */
    function storm(count: number, errors: FakeTgError[]): void {
      for (let i = 0; i < count; i++) kit.tg.failNext('sendMessage', 1, errors[i % errors.length]!);
    }

    it('every chunk reaches its chat exactly once and in order through 429/502 storms and resets', async () => {
      const ids = await newChats();
      const kinds = [TG_ERRORS.rateLimited(1), TG_ERRORS.badGateway(), TG_ERRORS.rateLimited(1), TG_ERRORS.badGatewayPage(), TG_ERRORS.connectionReset()];
      storm(STORM, kinds);
      push(ids);
      // A second storm while the replies are half way out.
      const total = CHATS * MESSAGES_PER_CHAT * 3;
      await eventually(() => ids.reduce((n, id) => n + kit.tg.sentTo(id).length, 0) >= total / 2, 45_000, 'half the chunks delivered');
      storm(STORM, kinds);
      await eventually(() => allArrived(ids), 50_000, 'every paragraph delivered');
      const waiting = await leftWaiting(kit.t);
      const check = checkChats(received(ids));
      const faults = servedFaults(ids);
      reportFigures('fault-suite', 'telegram-storms', { chats: CHATS, messages: CHATS * MESSAGES_PER_CHAT, ...check, ...faults, givenUp: givenUp(kit.t), leftWaiting: waiting });
      expect(faults.served429 + faults.served502Json + faults.served502Html + faults.connectionResets).toBe(2 * STORM);
      expect(faults.served429).toBeGreaterThan(0);
      expect(faults.served502Json).toBeGreaterThan(0);
      expect(faults.served502Html).toBeGreaterThan(0);
      expect(faults.connectionResets).toBeGreaterThan(0);
      expect(check).toEqual({ chunks: CHATS * MESSAGES_PER_CHAT * 3, duplicatedChunks: 0, lostParagraphs: 0, outOfOrderChats: 0, repeatedInPlace: 0 });
      expect(givenUp(kit.t)).toBe(0);
      expect(waiting).toBe(0);
    }, 120_000);

    it('a chunk Telegram took before its answer was lost comes again right after itself: nothing lost, nothing else repeated', async () => {
      const ids = await newChats();
      const taken: FakeTgError[] = [
        { ...TG_ERRORS.badGateway(), accepted: true },
        { ...TG_ERRORS.badGatewayPage(), accepted: true },
        { ...TG_ERRORS.connectionReset(), accepted: true },
      ];
      storm(6, taken);
      push(ids);
      await eventually(() => allArrived(ids), 50_000, 'every paragraph delivered');
      const waiting = await leftWaiting(kit.t);
      const check = checkChats(received(ids));
      const faults = servedFaults(ids);
      reportFigures('fault-suite', 'telegram-taken-then-failed', { chats: CHATS, ...check, ...faults, givenUp: givenUp(kit.t), leftWaiting: waiting });
      expect(faults.acceptedThenFailed).toBe(6);
      // The Bot API cannot tell a resend from a new message: each such chunk is in the chat twice, in place.
      expect(check).toEqual({ chunks: CHATS * MESSAGES_PER_CHAT * 3 + 6, duplicatedChunks: 6, lostParagraphs: 0, outOfOrderChats: 0, repeatedInPlace: 6 });
      expect(waiting).toBe(0);
    }, 120_000);
  });

  describe('WhatsApp: the connection drops in the middle of sends', () => {
    const CHATS = 6;
    let t: TestApp;
    let model: FakeOpenAIServer;
    let authDir: string;
    const factory = fakeSocketFactory({ autoOpen: true });
    const jidOf = (c: number) => `4917${String(5_000_000 + c).padStart(9, '0')}@s.whatsapp.net`;

    beforeAll(async () => {
      model = await FakeOpenAIServer.start({ chunks: 2 });
      model.setDefault((req) => ({ text: replyFor(lastUserText(req)) }));
      t = await startTestApp({
        workers: false,
        config: {
          ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
          channels: { whatsapp: { enabled: true, per_chat_per_second: 50, per_minute: 100_000 } },
          queues: { outbound_concurrency: 16 },
          log: { level: 'warn' },
        },
      });
      authDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-fault-wa-'));
      const chat = t.app.chat!;
      // The configured transport, on the Baileys-shaped fake socket (WhatsApp's own servers need the Noise handshake).
      chat.channels.register(new WhatsAppTransport({ authDir, logger: t.app.logger, makeSocket: factory.make, reconnectBaseMs: 100, printQr: () => undefined, perChatPerSecond: 50, perMinute: 100_000 }));
      await t.app.startWorkers();
      await t.app.startChannels();
      await eventually(() => chat.channels.get('whatsapp')!.status().state === 'CONNECTED', 15_000, 'whatsapp connected');
      const ctx = t.app.systemCtx('test');
      for (let c = 0; c < CHATS; c++) {
        const user = await t.app.services.users.create(ctx, { displayName: `wa user ${c}`, trust: TrustLevel.MEMBER });
        await t.app.services.users.linkIdentity(ctx, user.id, 'whatsapp', jidOf(c));
      }
    });

    afterAll(async () => {
      await t.close();
      await model.close();
      rmSync(authDir, { recursive: true, force: true });
    });

    /** What each chat's recipient sees: messages by id, once each, in the order the server took them. */
    function shown(): { byChat: Map<number, string[]>; resentSameId: number } {
      const all = factory.sockets.flatMap((s) => s.sent);
      const byChat = new Map<number, string[]>();
      const ids = new Set<string>();
      let resentSameId = 0;
      for (let c = 0; c < CHATS; c++) byChat.set(c, []);
      for (const m of all) {
        const c = Array.from({ length: CHATS }, (_, i) => i).find((i) => jidOf(i) === m.jid);
        if (c === undefined) continue;
        if (ids.has(m.id)) {
          resentSameId++;
          continue;
        }
        ids.add(m.id);
        byChat.get(c)!.push(m.text);
      }
      return { byChat, resentSameId };
    }

    it('every chunk is shown exactly once and in order while the socket drops before and after the server took it', async () => {
      const socketsBefore = factory.sockets.length;
      const latest = (): FakeWhatsAppSocket => factory.latest();
      let drops = 0;
      // Each new connection drops again during one of its sends (alternately before and after the server
      // took the message), until enough drops were served.
      const DROPS = 8;
      const armed = new WeakSet<FakeWhatsAppSocket>();
      const arm = () => {
        const sock = latest();
        if (drops >= DROPS || armed.has(sock)) return;
        armed.add(sock);
        sock.dropDuringNextSend(drops % 2 === 0 ? 'after' : 'before');
        drops++;
      };
      arm();
      const timer = setInterval(arm, 20);
      try {
        for (let m = 0; m < MESSAGES_PER_CHAT; m++) {
          for (let c = 0; c < CHATS; c++) {
            latest().upsert([{ key: { remoteJid: jidOf(c), fromMe: false, id: `IN${c}x${m}` }, message: { conversation: `please answer c${c} m${m}` }, pushName: `User ${c}`, messageTimestamp: Math.floor(Date.now() / 1000) }]);
          }
        }
        await eventually(() => {
          const { byChat } = shown();
          return [...byChat].every(([c, texts]) => {
            const seen = new Set(markersIn(texts));
            return expectedMarkers(c).every((mk) => seen.has(mk));
          });
        }, 55_000, 'every paragraph shown');
      } finally {
        clearInterval(timer);
      }
      const waiting = await leftWaiting(t);
      const { byChat, resentSameId } = shown();
      const check = checkChats(byChat);
      const reconnects = factory.sockets.length - socketsBefore;
      // Each served drop closed its socket (the transport is still running: nothing else closed one).
      const served = factory.sockets.filter((s) => s.ended).length;
      // Sends refused while reconnecting sent nothing: they wait without using up the message's attempts.
      const offlineCounted = t.logs.entries().filter((e) => e.msg === 'delivery failed; retrying' && /not connected/.test(String(e.err))).length;
      reportFigures('fault-suite', 'whatsapp-drops', { chats: CHATS, messages: CHATS * MESSAGES_PER_CHAT, drops: served, reconnects, ...check, resentSameId, offlineCountedAsAttempts: offlineCounted, givenUp: givenUp(t), leftWaiting: waiting });
      expect(drops).toBe(DROPS);
      expect(served).toBe(DROPS);
      expect(offlineCounted).toBe(0);
      expect(reconnects).toBe(DROPS);
      // Drops after the server took the message: the retry carried the same id.
      expect(resentSameId).toBe(DROPS / 2);
      expect(check).toEqual({ chunks: CHATS * MESSAGES_PER_CHAT * 3, duplicatedChunks: 0, lostParagraphs: 0, outOfOrderChats: 0, repeatedInPlace: 0 });
      expect(givenUp(t)).toBe(0);
      expect(waiting).toBe(0);
    }, 120_000);
  });
});
