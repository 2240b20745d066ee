/**
 * Issue 27, acceptance 1 (channels): a PDF sent as a Telegram document through the fake Bot API (getFile
 * and the file download) and a Word file sent as a WhatsApp document through the fake socket are added as
 * the sender's documents; the chat is told when each is READY, a question about page 3 brings that
 * passage with its citation to the model; a Telegram group's file joins the group's collection; a bad
 * file (an encrypted PDF) ends FAILED and the chat is told why; an unsupported type gets a clear answer; a
 * file declared over the size cap is refused without being fetched.
 */
import { rmSync } from 'node:fs';
import type { WAMessage } from '@whiskeysockets/baileys';
import { Document } from '../../../server/modules/documents';
import { eventually } from '../../support/chat-helpers';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { fakeSocketFactory } from '../../support/fakes/fake-whatsapp-socket';
import { channelMember, startMediaChannels } from '../../support/media-channels';
import { startTestApp, type TestApp } from '../../support/test-app';
import { buildDocx, buildEncryptedPdf, buildPdf } from '../../support/document-files';
import { newBotToken } from '../telegram/telegram-kit';

const GROUP = -1004242;
let t: TestApp;
let tg: FakeTelegramServer;
let model: FakeOpenAIServer;
let authDir: string;
const wa = fakeSocketFactory({ autoOpen: true });
const waMedia = new Map<string, Buffer>();

beforeAll(async () => {
  const token = newBotToken();
  [tg, model] = await Promise.all([FakeTelegramServer.start({ token }), FakeOpenAIServer.start({ chunks: 1 })]);
  t = await startTestApp({
    workers: false,
    config: {
      log: { level: 'warn' },
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
      channels: { telegram: { enabled: true, bot_token: token, api_root: tg.url, group_policy: 'open' }, whatsapp: { enabled: true } },
    },
  });
  authDir = await startMediaChannels(t, wa, waMedia, 'muninn-docs-wa-');
}, 60_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([tg?.close(), model?.close()]);
  if (authDir) rmSync(authDir, { recursive: true, force: true });
});

function sendTelegramFile(chatId: number, from: number, file: { name: string; type: string; data: Buffer }, caption?: string) {
  const stored = tg.addFile(file.data, file.name.split('.').pop());
  tg.pushMessage({ chatId, from, caption, extra: { document: { file_id: stored.file_id, file_unique_id: stored.file_unique_id, file_name: file.name, mime_type: file.type, file_size: file.data.length } } });
}

const docsOf = (userId: string) => t.app.db.repo(t.app.systemCtx('test'), Document).findBy({ userId });

describe('Telegram', () => {
  it('a PDF sent in a DM becomes the sender’s document; the chat hears when it is ready; page 3 is cited', async () => {
    const userId = await channelMember(t, 'telegram', '8101');
    const pdf = await buildPdf(['Tenancy agreement for flat 4B.', 'Parties and term of the agreement.', 'The landlord keeps the spare key; the key safe code is KS-2094-LUMEN.']);
    sendTelegramFile(8101, 8101, { name: 'tenancy.pdf', type: 'application/pdf', data: pdf });
    await tg.waitFor(() => tg.sentTo(8101).some((m) => m.text.includes('Got "tenancy.pdf"')), 'the receipt');
    const ready = await tg.waitFor(() => tg.sentTo(8101).find((m) => m.text.includes('"tenancy.pdf" is ready')), 'the ready notice', 60_000);
    expect(ready.text).toContain('3 pages');
    const [doc] = await docsOf(userId);
    expect(doc).toMatchObject({ name: 'tenancy.pdf', scope: 'user', status: 'READY', pages: 3, sourceChannel: 'telegram', sourceChatId: '8101', sizeBytes: pdf.length });

    const before = model.chatRequests().length;
    tg.pushMessage({ chatId: 8101, from: 8101, text: 'What is the key safe code?' });
    await eventually(() => model.chatRequests().length > before, 20_000, 'the model call');
    const prompt = JSON.stringify(model.chatRequests().at(-1)!.body?.messages ?? []);
    expect(prompt).toMatch(/\[tenancy\.pdf, p\. 3\] [^"]*KS-2094-LUMEN/);
  }, 90_000);

  it('a file sent in a group (mentioning the bot) joins the group’s collection; a bad file is FAILED and the chat told why', async () => {
    const userId = await channelMember(t, 'telegram', '8102');
    sendTelegramFile(GROUP, 8102, { name: 'rota.md', type: 'text/markdown', data: Buffer.from('# Cleaning rota\n\nThe kitchen is cleaned on Fridays by Ola.') }, `@${tg.bot.username} our rota`);
    await tg.waitFor(() => tg.sentTo(GROUP).some((m) => m.text.includes('"rota.md" is ready')), 'the group ready notice', 60_000);
    const [doc] = await docsOf(userId);
    expect(doc).toMatchObject({ scope: 'group', groupId: `agent:main:telegram:group:${GROUP}`, status: 'READY' });

    sendTelegramFile(8102, 8102, { name: 'locked.pdf', type: 'application/pdf', data: await buildEncryptedPdf() });
    const failed = await tg.waitFor(() => tg.sentTo(8102).find((m) => m.text.includes('could not read "locked.pdf"')), 'the failure notice', 60_000);
    expect(failed.text).toMatch(/encrypted/);

    sendTelegramFile(8102, 8102, { name: 'song.mp4', type: 'video/mp4', data: Buffer.from('not a document') });
    const refused = await tg.waitFor(() => tg.sentTo(8102).find((m) => m.text.includes('Unsupported type')), 'the unsupported answer');
    expect(refused.text).toContain('song.mp4');
    expect((await docsOf(userId)).map((d) => d.name).sort()).toEqual(['locked.pdf', 'rota.md']);

    // A file the platform declares larger than documents.max_bytes (25 MB) is refused before it is fetched.
    const stored = tg.addFile(Buffer.from('# small in truth'), 'md');
    tg.pushMessage({ chatId: 8102, from: 8102, extra: { document: { file_id: stored.file_id, file_unique_id: stored.file_unique_id, file_name: 'huge.md', mime_type: 'text/markdown', file_size: 26 * 1024 * 1024 } } });
    const tooLarge = await tg.waitFor(() => tg.sentTo(8102).find((m) => m.text.includes('"huge.md" is too large')), 'the size answer');
    expect(tooLarge.text).toContain('at most 25 MB');
    expect(tg.calls.filter((c) => c.method === 'getFile' && c.params.file_id === stored.file_id)).toEqual([]);
    expect((await docsOf(userId)).map((d) => d.name)).not.toContain('huge.md');
  }, 90_000);
});

describe('WhatsApp', () => {
  it('a Word file sent as a document becomes the sender’s document and is recalled', async () => {
    const jid = '491700000888@s.whatsapp.net';
    const userId = await channelMember(t, 'whatsapp', jid);
    const docx = await buildDocx([{ heading: 'Bike lock', paragraphs: ['The code of the blue bike lock is 4-4-0-9-Q.'] }]);
    const id = '3EB0DOC00000000000001';
    waMedia.set(id, docx);
    wa.latest().upsert([
      {
        key: { remoteJid: jid, id, fromMe: false },
        messageTimestamp: Math.floor(Date.now() / 1000),
        pushName: 'Wanda',
        message: { documentMessage: { fileName: 'bike.docx', mimetype: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', fileLength: docx.length } },
      } as unknown as Partial<WAMessage>,
    ]);
    const sentTo = () => wa.sockets.flatMap((s) => s.sent).filter((m) => m.jid === jid);
    await eventually(() => sentTo().some((m) => m.text.includes('"bike.docx" is ready')), 60_000, 'the ready notice');
    expect(sentTo()[0]!.text).toContain('Got "bike.docx"');
    const [doc] = await docsOf(userId);
    expect(doc).toMatchObject({ name: 'bike.docx', status: 'READY', sourceChannel: 'whatsapp' });

    const before = model.chatRequests().length;
    wa.latest().upsert([{ key: { remoteJid: jid, id: '3EB0DOC00000000000002', fromMe: false }, messageTimestamp: Math.floor(Date.now() / 1000), message: { conversation: 'What is the code of the bike lock?' } } as unknown as Partial<WAMessage>]);
    await eventually(() => model.chatRequests().length > before, 20_000, 'the model call');
    expect(JSON.stringify(model.chatRequests().at(-1)!.body?.messages ?? [])).toMatch(/\[bike\.docx\] [^"]*4-4-0-9-Q/);
  }, 90_000);
});
