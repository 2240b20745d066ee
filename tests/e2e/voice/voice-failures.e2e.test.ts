/**
 * Voice notes that cannot be answered (issue 26, acceptance 2): too long (declared, and measured when the
 * declaration lies), too large, corrupt, a transcription that fails (500) or times out, an empty
 * transcript, a guest, no transcribe role; spoken replies when the speech needs ffmpeg and ffmpeg is
 * missing. Each gets a clear message, nothing crashes, and other chats are not held up meanwhile.
 */
import { randomBytes } from 'node:crypto';
import { TrustLevel } from '../../../server/common/trust';
import { eventually } from '../../support/chat-helpers';
import { FakeAudioServer } from '../../support/fakes/fake-audio-server';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { startTestApp, type TestApp } from '../../support/test-app';
import { silentVoiceNote, voiceNote } from '../../support/voice-audio';
import { newBotToken } from '../telegram/telegram-kit';

const SEND_VOICE_NOTE = /* GraphQL */ `
  mutation V($input: VoiceNoteInput!) {
    sendVoiceNote(input: $input) { sessionId messageId status reply }
  }
`;

let t: TestApp;
let tg: FakeTelegramServer;
let model: FakeOpenAIServer;
let audio: FakeAudioServer;
let note: Buffer;
let chatId = 8100;

beforeAll(async () => {
  const token = newBotToken();
  [tg, model, audio, note] = await Promise.all([FakeTelegramServer.start({ token }), FakeOpenAIServer.start({ chunks: 1 }), FakeAudioServer.start(), voiceNote('what time is it')]);
  t = await startTestApp({
    workers: false,
    config: {
      ai: {
        providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 }, speech: { base_url: audio.baseUrl } },
        roles: { transcribe: { provider: 'speech', model: 'whisper-test' }, speech: { provider: 'speech', model: 'tts-test' } },
      },
      channels: { telegram: { enabled: true, bot_token: token, api_root: tg.url, dm_policy: 'open' } },
      voice: { max_seconds: 10, max_bytes: 150_000, attempts: 2, timeout_ms: 3000, ffmpeg: '/nonexistent/ffmpeg', reply: 'always' },
    },
  });
  await t.app.startWorkers();
  await t.app.startChannels();
  await eventually(() => t.app.chat!.channels.get('telegram')!.status().state === 'POLLING', 15_000, 'telegram polling');
}, 60_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([tg?.close(), model?.close(), audio?.close()]);
});

async function newChat(trust: TrustLevel = TrustLevel.MEMBER): Promise<number> {
  const id = ++chatId;
  const ctx = t.app.systemCtx('test');
  const user = await t.app.services.users.create(ctx, { displayName: `tg ${id}`, trust });
  await t.app.services.users.linkIdentity(ctx, user.id, 'telegram', String(id));
  return id;
}

async function told(chat: number, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  const m = await tg.waitFor(() => tg.sentTo(chat).find((x) => pattern.test(x.text)), `a message matching ${pattern} in chat ${chat}`, timeoutMs);
  return m.text;
}

const modelCalls = () => model.chatRequests().length;

describe('voice notes that cannot be answered', () => {
  it('refuses a note declared longer than voice.max_seconds without downloading it', async () => {
    const chat = await newChat();
    const files = tg.callsOf('file').length;
    tg.pushVoice({ chatId: chat, from: chat, audio: note, duration: 400 });
    expect(await told(chat, /6:40 long; I take up to 0:10/)).toMatch(/shorter one, or text/);
    expect(tg.callsOf('file').length).toBe(files);
  });

  it('measures the note: one that claims 3 s but plays 15 s is refused', async () => {
    const chat = await newChat();
    const before = audio.transcriptions.length;
    tg.pushVoice({ chatId: chat, from: chat, audio: await silentVoiceNote(15), duration: 3 });
    await told(chat, /0:15 long; I take up to 0:10/);
    expect(audio.transcriptions.length).toBe(before);
  });

  it('refuses files over voice.max_bytes, declared or real', async () => {
    const declared = await newChat();
    tg.pushVoice({ chatId: declared, from: declared, audio: note, duration: 3, fileSize: 50 * 1024 * 1024 });
    await told(declared, /larger than/);
    const lying = await newChat();
    tg.pushVoice({ chatId: lying, from: lying, audio: Buffer.concat([note, randomBytes(200_000)]), duration: 3, fileSize: 1000 });
    await told(lying, /larger than/);
  });

  it('refuses corrupt audio (random bytes, a cut-off OGG file) with a clear message', async () => {
    const chat = await newChat();
    const before = audio.transcriptions.length;
    tg.pushVoice({ chatId: chat, from: chat, audio: randomBytes(4000), duration: 2 });
    expect(await told(chat, /could not read that audio/)).toMatch(/not in an audio format I know/);
    tg.pushVoice({ chatId: chat, from: chat, audio: note.subarray(0, Math.floor(note.length / 2)), duration: 2 });
    await tg.waitFor(() => tg.sentTo(chat).filter((m) => /could not read that audio/.test(m.text)).length === 2, 'the second refusal');
    expect(tg.sentTo(chat)[1]!.text).toMatch(/OGG page .* runs past the end of the file/);
    expect(audio.transcriptions.length).toBe(before);
  });

  it('retries a transcription that fails with 500, then tells the user', async () => {
    const chat = await newChat();
    const before = audio.transcriptions.length;
    const calls = modelCalls();
    audio.transcriptReplies.push({ status: 500 }, { status: 503 });
    tg.pushVoice({ chatId: chat, from: chat, audio: note, duration: 2 });
    expect(await told(chat, /could not transcribe your voice note/)).toMatch(/try again later, or send text/);
    expect(audio.transcriptions.length - before).toBe(2);
    expect(modelCalls()).toBe(calls);
  });

  it('a transcription that hangs times out, is retried and then told, while other chats are answered meanwhile', async () => {
    const chat = await newChat();
    const other = await newChat();
    audio.transcriptReplies.push({ hang: true }, { hang: true });
    const before = audio.transcriptions.length;
    const sentAt = Date.now();
    tg.pushVoice({ chatId: chat, from: chat, audio: note, duration: 2 });
    await audio.waitFor(() => audio.transcriptions.at(-1)?.at && audio.transcriptions.at(-1)!.at >= sentAt, 'the hanging request');
    // While the note hangs, a typed message in another chat is answered without waiting for it: its answer
    // (spoken, voice.reply: always) arrives before the note has even failed.
    tg.pushMessage({ chatId: other, from: other, text: 'are you there?' });
    await tg.waitFor(() => tg.sentVoices.find((v) => v.chatId === String(other)), 'the answer in the other chat', 20_000);
    expect(tg.sentTo(chat).some((m) => /could not transcribe/.test(m.text))).toBe(false);
    // The sender of the note sees "typing…" while it is transcribed.
    expect(tg.callsOf('sendChatAction').some((c) => String(c.params.chat_id) === String(chat) && c.params.action === 'typing')).toBe(true);
    const text = await told(chat, /could not transcribe your voice note/, 30_000);
    expect(text).toMatch(/did not answer in time/);
    expect(audio.transcriptions.length - before).toBe(2); // both attempts reached the server and timed out
  }, 60_000);

  it('a 400 from the transcriber is not retried', async () => {
    const chat = await newChat();
    const before = audio.transcriptions.length;
    audio.transcriptReplies.push({ status: 400, message: 'unsupported language' });
    tg.pushVoice({ chatId: chat, from: chat, audio: note, duration: 2 });
    await told(chat, /speech service refused it/);
    expect(audio.transcriptions.length - before).toBe(1);
  });

  it('does not send an empty transcript to the model', async () => {
    const chat = await newChat();
    const calls = modelCalls();
    audio.transcriptReplies.push({ text: ' ... [BLANK_AUDIO] ' });
    tg.pushVoice({ chatId: chat, from: chat, audio: note, duration: 2 });
    await told(chat, /could not make out any words/);
    expect(modelCalls()).toBe(calls);
  });

  it('refuses voice notes of guests (voice.guests: false)', async () => {
    const chat = 8999; // unknown sender: dm_policy open makes it a GUEST
    const before = audio.transcriptions.length;
    tg.pushVoice({ chatId: chat, from: chat, audio: note, duration: 2 });
    await told(chat, /not available to guests/);
    expect(audio.transcriptions.length).toBe(before);
  });

  it('sends the reply as text, and logs why, when the speech needs ffmpeg and it is missing', async () => {
    const chat = await newChat();
    audio.speechReplies.push({ format: 'mp3' });
    tg.pushMessage({ chatId: chat, from: chat, text: 'speak mp3 please' });
    await told(chat, /speak mp3 please/);
    expect(tg.sentVoices.filter((v) => v.chatId === String(chat))).toHaveLength(0);
    await eventually(() => t.logs.lines.some((l) => l.includes('voice reply sent as text') && l.includes('ffmpeg')), 5000, 'the log line');
  });

  it('sends the reply as text when the speech endpoint keeps failing', async () => {
    const chat = await newChat();
    audio.speechReplies.push({ status: 500 }, { status: 500 });
    tg.pushMessage({ chatId: chat, from: chat, text: 'speech will fail' });
    await told(chat, /speech will fail/);
    expect(tg.sentVoices.filter((v) => v.chatId === String(chat))).toHaveLength(0);
  });
});

describe('without a transcribe role', () => {
  let bare: TestApp;
  beforeAll(async () => {
    bare = await startTestApp({ config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' } } } } });
  });
  afterAll(async () => {
    await bare?.close();
  });

  it('tells the sender that voice notes are not set up on this server', async () => {
    const owner = bare.client(bare.ownerToken);
    const res = await owner.http<{ sendVoiceNote: { status: string; reply: string | null; messageId: string | null } }, unknown>(SEND_VOICE_NOTE, { input: { mimeType: 'audio/ogg', dataBase64: note.toString('base64') } });
    expect(res.errors).toBeUndefined();
    expect(res.data!.sendVoiceNote).toMatchObject({ status: 'REFUSED', messageId: null });
    expect(res.data!.sendVoiceNote.reply).toMatch(/Voice notes are not set up on this server/);
    await owner.close();
  });
});
