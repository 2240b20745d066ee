import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { ChannelState, InboundMessage } from '../../../../server/channels/channel.types';
import { messageIdOf, WhatsAppTransport, type WhatsAppTransportOptions } from '../../../../server/channels/whatsapp';
import { createLogger } from '../../../../server/common/logger';
import { SecretRedactor } from '../../../../server/common/secret-redactor';
import { LogCapture } from '../../../support/log-capture';
import { BOT_LID, BOT_PN, fakeSocketFactory, type FakeWhatsAppSocket } from '../../../support/fakes/fake-whatsapp-socket';

const ALICE = '4917600000002@s.whatsapp.net';
const ALICE_LID = '111122223333444@lid';
const GROUP = '120363000000000001@g.us';

async function waitFor(what: string, check: () => boolean, timeoutMs = 3000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Harness {
  transport: WhatsAppTransport;
  factory: ReturnType<typeof fakeSocketFactory>;
  inbound: InboundMessage[];
  states: ChannelState[];
  printed: string[];
  logs: LogCapture;
  authDir: string;
  /** The current socket, after the transport made it. */
  sock(): FakeWhatsAppSocket;
}

const running: Array<{ transport: WhatsAppTransport; dir: string }> = [];

async function startTransport(options: Partial<WhatsAppTransportOptions> = {}, sink?: (m: InboundMessage) => Promise<void>): Promise<Harness> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-wa-'));
  const authDir = path.join(dir, 'whatsapp', 'auth');
  const logs = new LogCapture();
  const factory = fakeSocketFactory();
  const inbound: InboundMessage[] = [];
  const states: ChannelState[] = [];
  const printed: string[] = [];
  const transport = new WhatsAppTransport({
    authDir,
    logger: createLogger({ redactor: new SecretRedactor(), destination: logs, level: 'debug' }),
    makeSocket: factory.make,
    printQr: (s) => printed.push(s),
    reconnectBaseMs: 50,
    ...options,
    onStatus: (t) => states.push(t.status().state),
  });
  running.push({ transport, dir });
  await transport.start(sink ?? (async (m) => void inbound.push(m)));
  return { transport, factory, inbound, states, printed, logs, authDir, sock: () => factory.latest() };
}

afterEach(async () => {
  for (const { transport, dir } of running.splice(0)) {
    await transport.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  jest.useRealTimers();
});

function dm(id: string, text: string, extra: Partial<WAMessage> = {}): Partial<WAMessage> {
  return { key: { remoteJid: ALICE, fromMe: false, id }, message: { conversation: text }, pushName: 'Alice', messageTimestamp: 1_767_225_600, ...extra };
}

describe('WhatsAppTransport (fake socket)', () => {
  it('links, connects and hands a DM to the sink; own messages and history appends are ignored', async () => {
    const h = await startTransport();
    expect(h.factory.sockets).toHaveLength(1);
    expect(h.sock().config.auth?.creds).toBeDefined();
    expect(h.transport.status().state).toBe('NEEDS_LINK'); // fresh credentials
    h.sock().open();
    expect(h.transport.status()).toMatchObject({ channel: 'whatsapp', state: 'CONNECTED', lastError: null, qr: null });
    // creds.update is persisted in the auth folder
    await waitFor('creds.json', () => existsSync(path.join(h.authDir, 'creds.json')));
    await waitFor('saved account', () => readFileSync(path.join(h.authDir, 'creds.json'), 'utf8').includes(BOT_PN));

    h.sock().upsert([dm('OWN1', 'from me', { key: { remoteJid: ALICE, fromMe: true, id: 'OWN1' } })]);
    h.sock().upsert([dm('OLD1', 'history')], 'append');
    h.sock().upsert([dm('M1', 'hello there')]);
    await waitFor('inbound DM', () => h.inbound.length > 0);
    expect(h.inbound).toEqual([
      {
        channel: 'whatsapp',
        chatId: ALICE,
        chatKind: 'dm',
        sender: { handle: ALICE, displayName: 'Alice' },
        text: 'hello there',
        mentionsBot: false,
        replyTo: null,
        platformMessageId: 'M1',
        receivedAt: new Date(1_767_225_600_000),
      },
    ]);
    expect(h.states).toEqual(expect.arrayContaining(['STARTING', 'NEEDS_LINK', 'CONNECTED']));
  });

  it('delivers a group message with a LID mention as mentionsBot, mention text stripped, in arrival order', async () => {
    const h = await startTransport();
    h.sock().open();
    h.sock().upsert([
      {
        key: { remoteJid: GROUP, participant: ALICE_LID, participantAlt: ALICE, fromMe: false, id: 'G1' },
        message: { extendedTextMessage: { text: `@${BOT_LID} summarise please`, contextInfo: { mentionedJid: [`${BOT_LID}@lid`] } } },
      },
      { key: { remoteJid: GROUP, participant: ALICE_LID, fromMe: false, id: 'G2' }, message: { conversation: 'no mention here' } },
    ]);
    await waitFor('two group messages', () => h.inbound.length === 2);
    expect(h.inbound[0]).toMatchObject({ chatId: GROUP, chatKind: 'group', sender: { handle: ALICE }, text: 'summarise please', mentionsBot: true, platformMessageId: 'G1' });
    expect(h.inbound[1]).toMatchObject({ sender: { handle: ALICE_LID }, text: 'no mention here', mentionsBot: false });
  });

  it('skips malformed messages and survives a failing sink without losing later messages', async () => {
    let calls = 0;
    const got: string[] = [];
    const h = await startTransport({}, async (m) => {
      calls += 1;
      if (calls === 1) throw new Error('pipeline exploded');
      got.push(m.text);
    });
    h.sock().open();
    h.sock().upsert([{ key: { remoteJid: GROUP, fromMe: false, id: 'BAD' }, message: { conversation: 'no participant' } }, dm('A', 'first'), dm('B', 'second')]);
    h.sock().upsert([null as unknown as WAMessage, dm('C', 'third')]);
    await waitFor('later messages', () => got.length === 2);
    expect(got).toEqual(['second', 'third']);
    expect(h.logs.text).toContain('malformed whatsapp message skipped');
    expect(h.logs.text).toContain('whatsapp inbound message failed');
  });

  it('downloads images as base64 and ignores images over 5 MiB', async () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const downloads: string[] = [];
    const h = await startTransport({
      downloadMedia: async (m) => {
        downloads.push(m.key.id ?? '');
        return png;
      },
    });
    h.sock().open();
    h.sock().upsert([
      { key: { remoteJid: ALICE, fromMe: false, id: 'I1' }, message: { imageMessage: { caption: 'what is this?', mimetype: 'image/png', fileLength: png.length } } },
      { key: { remoteJid: ALICE, fromMe: false, id: 'I2' }, message: { imageMessage: { caption: 'huge', mimetype: 'image/jpeg', fileLength: 6 * 1024 * 1024 } } },
      { key: { remoteJid: ALICE, fromMe: false, id: 'I3' }, message: { imageMessage: { mimetype: 'image/png', fileLength: png.length } } },
    ]);
    await waitFor('three messages', () => h.inbound.length === 3);
    expect(h.inbound[0]).toMatchObject({ text: 'what is this?', images: [{ mimeType: 'image/png', dataBase64: png.toString('base64') }] });
    expect(h.inbound[1]).toMatchObject({ text: 'huge' });
    expect(h.inbound[1]!.images).toBeUndefined();
    expect(h.inbound[2]).toMatchObject({ text: '', images: [{ mimeType: 'image/png' }] });
    expect(downloads).toEqual(['I1', 'I3']);
  });

  it('reconnects with exponential back-off after closes, and resets the back-off once open', async () => {
    const h = await startTransport({ reconnectBaseMs: 60 });
    h.sock().open();
    h.sock().close(428, 'Connection Terminated');
    expect(h.transport.status().state).toBe('ERROR');
    expect(h.transport.status().lastError).toMatch(/connection closed \(428\): Connection Terminated; reconnecting/);
    await waitFor('second socket', () => h.factory.sockets.length === 2);
    h.sock().close(408, 'Connection was lost');
    await waitFor('third socket', () => h.factory.sockets.length === 3);
    const [, second, third] = h.factory.madeAt as [number, number, number];
    expect(third - second).toBeGreaterThanOrEqual(115); // 60 ms, then 120 ms
    expect(h.factory.sockets[0]!.ended).toBe(true);
    h.sock().open();
    expect(h.transport.status()).toMatchObject({ state: 'CONNECTED', lastError: null });
    h.sock().close(428);
    await waitFor('fourth socket', () => h.factory.sockets.length === 4);
    const delays = h.logs.entries().filter((e) => String(e.msg).includes('reconnecting')).map((e) => e.delayMs);
    expect(delays).toEqual([60, 120, 60]); // doubled, then back to the first delay after a successful open
    expect(h.states.filter((s) => s === 'ERROR').length).toBe(3);
  });

  it('reconnects at once after restart-required (515, right after linking) and names the likely cause of 440', async () => {
    const h = await startTransport({ reconnectBaseMs: 5000 });
    h.sock().qr('2@LINK-ME');
    h.sock().close(515, 'Stream Errored (restart required)');
    await waitFor('an immediate new socket', () => h.factory.sockets.length === 2, 1000);
    h.sock().open();
    h.sock().close(440, 'Stream Errored (conflict)');
    expect(h.transport.status()).toMatchObject({ state: 'ERROR', qr: null });
    expect(h.transport.status().lastError).toContain('is a second process running WhatsApp?');
    expect(h.transport.status().lastError).toContain('reconnecting in 5 s');
  });

  it('retries with back-off when the socket cannot even be created', async () => {
    const factory = fakeSocketFactory();
    let calls = 0;
    const h = await startTransport({
      makeSocket: (config) => {
        calls += 1;
        if (calls === 1) throw new Error('bad endpoint');
        return factory.make(config);
      },
    });
    expect(h.transport.status().lastError).toMatch(/socket could not be created: bad endpoint; reconnecting/);
    await waitFor('the second attempt', () => factory.sockets.length === 1);
    factory.latest().open();
    expect(h.transport.status().state).toBe('CONNECTED');
  });

  it('logged out (401): NEEDS_LINK, stale credentials removed, new socket shows a new QR once', async () => {
    const h = await startTransport({ reconnectBaseMs: 5000 });
    h.sock().open();
    await waitFor('saved account', () => existsSync(path.join(h.authDir, 'creds.json')) && readFileSync(path.join(h.authDir, 'creds.json'), 'utf8').includes(BOT_PN));
    h.sock().close(401, 'Intentional Logout');
    expect(h.transport.status()).toMatchObject({ state: 'NEEDS_LINK', qr: null });
    expect(h.transport.status().lastError).toMatch(/logged out/);
    await waitFor('a fresh socket (no back-off)', () => h.factory.sockets.length === 2, 1000);
    const fresh = h.sock();
    expect(fresh.config.auth?.creds.me).toBeUndefined();
    const stored = existsSync(path.join(h.authDir, 'creds.json')) ? readFileSync(path.join(h.authDir, 'creds.json'), 'utf8') : '';
    expect(stored).not.toContain(BOT_PN);

    fresh.qr('2@QR-ONE');
    expect(h.transport.status()).toMatchObject({ state: 'NEEDS_LINK', qr: '2@QR-ONE' });
    fresh.qr('2@QR-ONE');
    expect(h.printed).toHaveLength(1);
    expect(h.printed[0]).toMatch(/[▀▄█]/); // drawn with block characters
    fresh.qr('2@QR-TWO');
    expect(h.printed).toHaveLength(2);
    expect(h.transport.status().qr).toBe('2@QR-TWO');

    fresh.open();
    expect(h.transport.status()).toMatchObject({ state: 'CONNECTED', qr: null, lastError: null });
  });

  it('shows composing while typing is on, refreshes it, and pauses when off', async () => {
    const h = await startTransport();
    await h.transport.setTyping(ALICE, true); // not connected yet: ignored, no throw
    expect(h.sock().presence).toEqual([]);
    h.sock().open();
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    await h.transport.setTyping(ALICE, true);
    expect(h.sock().presence).toEqual([{ type: 'composing', jid: ALICE }]);
    jest.advanceTimersByTime(10_000);
    expect(h.sock().presence).toHaveLength(2);
    await h.transport.setTyping(ALICE, false);
    jest.advanceTimersByTime(30_000);
    expect(h.sock().presence).toEqual([
      { type: 'composing', jid: ALICE },
      { type: 'composing', jid: ALICE },
      { type: 'paused', jid: ALICE },
    ]);
  });

  it('sends exactly the given chunk and paces sends per chat', async () => {
    const h = await startTransport({ perChatPerSecond: 5, perMinute: 100 });
    await expect(h.transport.send({ chatId: ALICE, text: 'x', idempotencyKey: 'k:0' })).rejects.toThrow(/not connected/);
    h.sock().open();
    const long = `${'a'.repeat(3999)}z`;
    const result = await h.transport.send({ chatId: ALICE, text: long, idempotencyKey: 'r:0' });
    // The message id comes from the idempotency key (a resend after a dropped connection keeps it).
    expect(result).toEqual({ platformMessageId: messageIdOf('r:0') });
    expect(messageIdOf('r:0')).toMatch(/^3EB0[0-9A-F]{18}$/);
    expect(messageIdOf('r:1')).not.toBe(messageIdOf('r:0'));
    expect(h.sock().sent[0]).toMatchObject({ jid: ALICE, text: long, id: messageIdOf('r:0') });

    const started = Date.now();
    await Promise.all([
      h.transport.send({ chatId: ALICE, text: 'one', idempotencyKey: 'r:1' }),
      h.transport.send({ chatId: ALICE, text: 'two', idempotencyKey: 'r:2' }),
      h.transport.send({ chatId: GROUP, text: 'other chat', idempotencyKey: 'g:0' }),
    ]);
    const sent = h.sock().sent;
    const alice = sent.filter((s) => s.jid === ALICE).map((s) => s.at);
    for (let i = 1; i < alice.length; i++) expect(alice[i]! - alice[i - 1]!).toBeGreaterThanOrEqual(195);
    expect(sent.find((s) => s.jid === GROUP)!.at - started).toBeLessThan(100);
    expect(sent.map((s) => s.text).sort()).toEqual([long, 'one', 'other chat', 'two'].sort());
  });

  it('holds sends over the per-minute budget (and an aborted wait sends nothing)', async () => {
    const h = await startTransport({ perChatPerSecond: 1000, perMinute: 3 });
    h.sock().open();
    for (let i = 0; i < 3; i++) await h.transport.send({ chatId: `c${i}@s.whatsapp.net`, text: `m${i}`, idempotencyKey: `k:${i}` });
    const controller = new AbortController();
    const fourth = h.transport.send({ chatId: 'c9@s.whatsapp.net', text: 'too many', idempotencyKey: 'k:9' }, controller.signal);
    await new Promise((r) => setTimeout(r, 150));
    expect(h.sock().sent).toHaveLength(3);
    controller.abort(new Error('delivery cancelled'));
    await expect(fourth).rejects.toThrow('delivery cancelled');
    expect(h.sock().sent).toHaveLength(3);
  });

  it('stop() ends the socket and cancels a scheduled reconnect', async () => {
    const h = await startTransport({ reconnectBaseMs: 100 });
    h.sock().open();
    h.sock().close(428);
    await h.transport.stop();
    expect(h.transport.status().state).toBe('STOPPED');
    // A witness with the same back-off, closed after the stop: once it has reconnected, the stopped
    // transport's reconnect (scheduled earlier, same delay) would have happened too.
    const witness = await startTransport({ reconnectBaseMs: 100 });
    witness.sock().open();
    witness.sock().close(428);
    await waitFor('the witness to reconnect', () => witness.factory.sockets.length === 2);
    expect(h.factory.sockets).toHaveLength(1);

    await h.transport.start(async () => undefined); // can start again
    expect(h.factory.sockets).toHaveLength(2);
    h.sock().open();
    await h.transport.stop();
    expect(h.sock().ended).toBe(true);
    expect(h.transport.status().state).toBe('STOPPED');
  });
});
