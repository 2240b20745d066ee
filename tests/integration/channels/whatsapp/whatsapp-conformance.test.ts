/** The WhatsApp transport on the Baileys-shaped fake socket, through the shared transport suite. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WAMessage } from '@whiskeysockets/baileys';
import pino from 'pino';
import type { ChannelStatus } from '../../../../server/channels/channel.types';
import { WhatsAppTransport } from '../../../../server/channels/whatsapp';
import { describeChannelTransportConformance, TYPING_REFRESH_MS } from '../../../support/conformance/channel-transport.conformance';
import { fakeSocketFactory } from '../../../support/fakes/fake-whatsapp-socket';

let nextChat = Math.floor(Math.random() * 1e6) * 100;
let nextId = 0;

describeChannelTransportConformance('whatsapp (fake socket)', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-wa-conf-'));
  const factory = fakeSocketFactory();
  const photos = new Map<string, Buffer>();
  const reported: ChannelStatus[] = [];
  const transport = new WhatsAppTransport({
    authDir: path.join(dir, 'auth'),
    logger: pino({ level: 'silent' }),
    makeSocket: factory.make,
    downloadMedia: async (message: WAMessage) => photos.get(message.key.id ?? '') ?? Promise.reject(new Error('no such media')),
    printQr: () => undefined,
    perChatPerSecond: 1000,
    perMinute: 100_000,
    composingRefreshMs: TYPING_REFRESH_MS,
    onStatus: (t) => reported.push(t.status()),
  });
  const sent = (chatId: string) => factory.sockets.flatMap((s) => s.sent.filter((m) => m.jid === chatId));
  return {
    transport,
    reported,
    runningState: 'CONNECTED',
    connect: async () => {
      if (transport.status().state !== 'CONNECTED') factory.latest().open();
    },
    platform: {
      newChat: () => `4917${String(++nextChat).padStart(9, '0')}@s.whatsapp.net`,
      delivered: (chatId) => sent(chatId).map((m) => m.text),
      failNextSendOf: (marker) => factory.latest().failNextSend(new Error('socket write failed'), (_jid, text) => text.includes(marker)),
      // WhatsApp gets the text as written (its clients render their own markup).
      rendered: (markdown) => markdown,
      typingSignals: (chatId) => factory.sockets.flatMap((s) => s.presence).filter((p) => p.jid === chatId && p.type === 'composing').length,
      pushDm: (chatId, { text, photo }) => {
        const id = `CONF${++nextId}`;
        if (photo) photos.set(id, photo);
        const message = photo ? { imageMessage: { mimetype: 'image/jpeg', caption: text, fileLength: photo.length } } : { conversation: text };
        factory.latest().upsert([{ key: { remoteJid: chatId, fromMe: false, id }, message, pushName: 'Conformance', messageTimestamp: Math.floor(Date.now() / 1000) } as Partial<WAMessage>]);
      },
      photos: true,
    },
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
