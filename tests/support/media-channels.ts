import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WhatsAppTransport } from '../../server/channels/whatsapp';
import { TrustLevel } from '../../server/common/trust';
import { eventually } from './chat-helpers';
import type { fakeSocketFactory } from './fakes/fake-whatsapp-socket';
import type { TestApp } from './test-app';

/**
 * Starts the chat channels of `t` (started with `workers: false` and Telegram enabled) with WhatsApp on the
 * fake sockets of `wa`, whose media downloads are answered from `media` by message id; starts the workers and
 * waits until WhatsApp is CONNECTED and Telegram POLLING. Returns WhatsApp's auth folder (the caller removes it).
 */
export async function startMediaChannels(t: TestApp, wa: ReturnType<typeof fakeSocketFactory>, media: Map<string, Buffer>, authPrefix: string): Promise<string> {
  const authDir = mkdtempSync(path.join(os.tmpdir(), authPrefix));
  const chat = t.app.chat!;
  chat.channels.register(
    new WhatsAppTransport({ authDir, logger: t.app.logger, makeSocket: wa.make, reconnectBaseMs: 100, printQr: () => undefined, perChatPerSecond: 50, perMinute: 1000, downloadMedia: async (m) => media.get(m.key.id!)! }),
  );
  await t.app.startWorkers();
  await t.app.startChannels();
  await eventually(() => chat.channels.get('whatsapp')!.status().state === 'CONNECTED', 15_000, 'whatsapp connected');
  await eventually(() => chat.channels.get('telegram')!.status().state === 'POLLING', 15_000, 'telegram polling');
  return authDir;
}

/** Creates a MEMBER linked to `handle` on `channel` and returns the user's id. */
export async function channelMember(t: TestApp, channel: string, handle: string): Promise<string> {
  const ctx = t.app.systemCtx('test');
  const user = await t.app.services.users.create(ctx, { displayName: `${channel} ${handle}`, trust: TrustLevel.MEMBER });
  await t.app.services.users.linkIdentity(ctx, user.id, channel, handle);
  return user.id;
}
