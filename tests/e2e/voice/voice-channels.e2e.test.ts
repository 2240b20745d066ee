/**
 * Voice notes in and out on Telegram and WhatsApp (issue 26, acceptance 1): real speech (espeak-ng,
 * OGG/Opus by ffmpeg) sent as a Telegram voice message through the fake Bot API and as a WhatsApp voice
 * note through the fake socket; a fake OpenAI-compatible audio server (real HTTP) checks the upload with
 * ffprobe and answers a known transcript, which the fake model receives marked as a voice note; the reply
 * goes back as a Telegram voice message (sendVoice with a valid OGG/Opus file) or a WhatsApp voice note.
 */
import { rmSync } from 'node:fs';
import type { WAMessage } from '@whiskeysockets/baileys';
import { Message } from '../../../server/modules/sessions';
import { UsageRecord } from '../../../server/modules/usage';
import { eventually } from '../../support/chat-helpers';
import { FakeAudioServer } from '../../support/fakes/fake-audio-server';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { fakeSocketFactory } from '../../support/fakes/fake-whatsapp-socket';
import { channelMember, startMediaChannels } from '../../support/media-channels';
import { startTestApp, type TestApp } from '../../support/test-app';
import { probeAudio, voiceNote } from '../../support/voice-audio';
import { newBotToken } from '../telegram/telegram-kit';

const TRANSCRIPT = 'Please remind me to water the plants tomorrow morning.';
let t: TestApp;
let tg: FakeTelegramServer;
let model: FakeOpenAIServer;
let audio: FakeAudioServer;
let authDir: string;
let note: Buffer;
const wa = fakeSocketFactory({ autoOpen: true });
const waMedia = new Map<string, Buffer>();

beforeAll(async () => {
  const token = newBotToken();
  // Provider keys are read from the process environment, like the chat providers'.
  process.env.VOICE_TEST_KEY = 'sk-voice-test-key';
  [tg, model, audio, note] = await Promise.all([FakeTelegramServer.start({ token }), FakeOpenAIServer.start({ chunks: 2 }), FakeAudioServer.start(), voiceNote('please remind me to water the plants tomorrow morning')]);
  t = await startTestApp({
    workers: false,
    config: {
      ai: {
        providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 }, speech: { base_url: audio.baseUrl, api_key_env: 'VOICE_TEST_KEY' } },
        roles: { transcribe: { provider: 'speech', model: 'whisper-test' }, speech: { provider: 'speech', model: 'tts-test' } },
      },
      channels: { telegram: { enabled: true, bot_token: token, api_root: tg.url }, whatsapp: { enabled: true } },
      voice: { text_over_chars: 300 },
    },
  });
  authDir = await startMediaChannels(t, wa, waMedia, 'muninn-voice-wa-');
}, 60_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([tg?.close(), model?.close(), audio?.close()]);
  rmSync(authDir, { recursive: true, force: true });
});

/** The user message of the model request whose prompt contains `marker`. */
function modelSawText(marker: string): string | undefined {
  return model
    .chatRequests()
    .map((r) => JSON.stringify(r.body?.messages ?? []))
    .find((m) => m.includes(marker));
}

describe('Telegram voice messages', () => {
  it('transcribes a voice note, hands the transcript to the model as a voice note, and answers with a voice message', async () => {
    const userId = await channelMember(t, 'telegram', '7001');
    audio.transcriptReplies.push({ text: TRANSCRIPT });
    const speechBefore = audio.speeches.length;
    tg.pushVoice({ chatId: 7001, from: 7001, audio: note, duration: 4 });

    // The upload: a valid OGG/Opus file, named so the server knows its type, with the role's model and key.
    const upload = await audio.waitFor(() => audio.transcriptions.find((r) => r.bytes === note.length), 'the transcription request');
    expect(upload).toMatchObject({ model: 'whisper-test', fileName: 'voice.ogg', fileType: 'audio/ogg', typeMatches: true, authorization: 'Bearer sk-voice-test-key', responseFormat: 'json' });
    expect(upload.probe).toMatchObject({ format: 'ogg', codec: 'opus' });
    expect(upload.data.equals(note)).toBe(true);

    // The model gets the transcript, marked as a transcribed voice note with its length.
    const prompt = await eventually(() => modelSawText(TRANSCRIPT), 15_000, 'the model request with the transcript');
    expect(prompt).toMatch(/\[voice note, \d+ s, transcribed\] Please remind me to water the plants tomorrow morning\./);

    // The reply is spoken: sendVoice with a valid OGG/Opus file; a short reply is not also sent as text.
    const voice = await tg.waitFor(() => tg.sentVoices.find((v) => v.chatId === '7001'), 'sendVoice to 7001', 20_000);
    const probe = await probeAudio(voice.audio);
    expect(probe).toMatchObject({ format: 'ogg', codec: 'opus' });
    expect(probe.seconds).toBeGreaterThan(0.5);
    expect(voice.duration).toBeGreaterThanOrEqual(Math.floor(probe.seconds));
    expect(voice.duration).toBeLessThanOrEqual(Math.ceil(probe.seconds) + 1);
    expect(voice.fileName).toBe('reply.ogg');
    const spoken = audio.speeches.slice(speechBefore).find((s) => s.input.includes('water the plants'));
    expect(spoken).toMatchObject({ model: 'tts-test', responseFormat: 'opus', voice: 'alloy' });
    expect(tg.sentTo(7001).filter((m) => m.text.includes('water the plants'))).toHaveLength(0);
    // Typing was shown while the note was transcribed and answered.
    expect(tg.callsOf('sendChatAction').some((c) => String(c.params.chat_id) === '7001')).toBe(true);

    // History keeps the transcript with its length; usage records the seconds transcribed and spoken.
    const ctx = t.app.systemCtx('test');
    const stored = await t.app.db.repo(ctx, Message).findOneByOrFail({ userId, content: TRANSCRIPT });
    expect(stored.voiceSeconds).toBeGreaterThanOrEqual(2);
    expect(stored.voiceSeconds).toBeLessThanOrEqual(6);
    const usage = await eventually(async () => {
      const rows = await t.app.db.repo(ctx, UsageRecord).findBy({ userId });
      return rows.some((r) => r.role === 'speech') ? rows : undefined;
    }, 10_000, 'speech usage');
    const transcribed = usage.find((r) => r.role === 'transcribe')!;
    expect(transcribed).toMatchObject({ provider: 'speech', model: 'whisper-test' });
    expect(transcribed.audioSeconds).toBe(Math.ceil(upload.probe!.seconds - 0.05));
    expect(usage.find((r) => r.role === 'speech')!.audioSeconds).toBeGreaterThan(0);
  }, 40_000);

  it('answers a typed message with text only (voice.reply: when_voice)', async () => {
    await channelMember(t, 'telegram', '7002');
    tg.pushMessage({ chatId: 7002, from: 7002, text: 'typed hello' });
    const [reply] = await tg.waitForSent(7002, 1, 15_000);
    expect(reply!.text).toContain('typed hello');
    // A voice note of the same chat afterwards is the fence: its spoken answer comes after any for the text.
    audio.transcriptReplies.push({ text: 'fence for seven thousand two' });
    tg.pushVoice({ chatId: 7002, from: 7002, audio: note, duration: 4 });
    await tg.waitFor(() => tg.sentVoices.some((v) => v.chatId === '7002'), 'the spoken answer to the fence', 20_000);
    expect(tg.sentVoices.filter((v) => v.chatId === '7002')).toHaveLength(1);
  }, 40_000);

  it('/voice on speaks answers to typed text; /voice off answers voice notes in text', async () => {
    await channelMember(t, 'telegram', '7003');
    tg.pushMessage({ chatId: 7003, from: 7003, text: '/voice on' });
    await tg.waitFor(() => tg.sentTo(7003).some((m) => m.text.includes('every message with a voice message')), 'the /voice on answer');
    tg.pushMessage({ chatId: 7003, from: 7003, text: 'speak to me' });
    await tg.waitFor(() => tg.sentVoices.some((v) => v.chatId === '7003'), 'a spoken answer to text', 20_000);

    tg.pushMessage({ chatId: 7003, from: 7003, text: '/voice off' });
    await tg.waitFor(() => tg.sentTo(7003).some((m) => m.text.includes('text only')), 'the /voice off answer');
    audio.transcriptReplies.push({ text: 'now answer me in writing' });
    tg.pushVoice({ chatId: 7003, from: 7003, audio: note, duration: 4 });
    const written = await tg.waitFor(() => tg.sentTo(7003).find((m) => m.text.includes('now answer me in writing')), 'a text answer to the voice note', 20_000);
    expect(written.text).toContain('[voice note,');
    expect(tg.sentVoices.filter((v) => v.chatId === '7003')).toHaveLength(1);
  }, 60_000);

  it('sends a long reply as voice and as text, and converts a non-OGG speech answer with ffmpeg', async () => {
    await channelMember(t, 'telegram', '7004');
    const long = `Here is the long answer. ${'The plants need water every morning before the sun is high. '.repeat(8)}`;
    model.enqueue({ text: long });
    audio.speechReplies.push({ format: 'mp3' }); // a server that ignores response_format
    audio.transcriptReplies.push({ text: 'tell me something long' });
    tg.pushVoice({ chatId: 7004, from: 7004, audio: note, duration: 4 });
    const text = await tg.waitFor(() => tg.sentTo(7004).find((m) => m.text.includes('Here is the long answer')), 'the text of the long reply', 20_000);
    expect(text.text.length).toBeGreaterThan(300);
    const voice = await tg.waitFor(() => tg.sentVoices.find((v) => v.chatId === '7004'), 'the spoken long reply', 30_000);
    expect(await probeAudio(voice.audio)).toMatchObject({ format: 'ogg', codec: 'opus' });
  }, 60_000);
});

describe('WhatsApp voice notes', () => {
  const jid = '491700000777@s.whatsapp.net';

  it('transcribes a voice note and answers with a voice note (OGG/Opus, ptt)', async () => {
    await channelMember(t, 'whatsapp', jid);
    const id = '3EB0VOICE0000000000001';
    const uploadsBefore = audio.transcriptions.length;
    waMedia.set(id, note);
    audio.transcriptReplies.push({ text: 'What is the weather like on WhatsApp?' });
    const voiceNoteMessage = {
      key: { remoteJid: jid, id, fromMe: false },
      messageTimestamp: Math.floor(Date.now() / 1000),
      pushName: 'Wanda',
      message: { audioMessage: { mimetype: 'audio/ogg; codecs=opus', seconds: 4, ptt: true, fileLength: note.length } },
    } as unknown as Partial<WAMessage>;
    wa.latest().upsert([voiceNoteMessage]);

    const upload = await audio.waitFor(() => audio.transcriptions[uploadsBefore], 'the WhatsApp transcription');
    expect(upload).toMatchObject({ fileName: 'voice.ogg', fileType: 'audio/ogg', typeMatches: true, model: 'whisper-test' });
    expect(upload.probe).toMatchObject({ format: 'ogg', codec: 'opus' });
    expect(upload.data.equals(note)).toBe(true);
    const prompt = await eventually(() => modelSawText('What is the weather like on WhatsApp?'), 15_000, 'the model request');
    expect(prompt).toContain('[voice note, ');
    const sent = await eventually(() => wa.sockets.flatMap((s) => s.sentAudio).find((a) => a.jid === jid), 20_000, 'the voice note reply');
    expect(sent).toMatchObject({ ptt: true, mimetype: 'audio/ogg; codecs=opus' });
    expect(await probeAudio(sent.audio)).toMatchObject({ format: 'ogg', codec: 'opus' });
    expect(sent.seconds).toBeGreaterThanOrEqual(1);
    expect(wa.sockets.flatMap((s) => s.sent).filter((m) => m.jid === jid)).toHaveLength(0);
    expect(wa.latest().presence.some((p) => p.type === 'composing' && p.jid === jid)).toBe(true);
  }, 40_000);
});
