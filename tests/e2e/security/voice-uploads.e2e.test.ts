/**
 * Hostile voice notes through the web chat's `sendVoiceNote` (issue 26): bytes that are no audio but are
 * labelled as audio (a ZIP, random bytes), a cut-off container, a type that is no audio type or carries a
 * path, bad base64, oversize data, an absurd or lying duration. Each is refused with a clear error or
 * reply before anything reaches the transcriber, and a good note afterwards is still transcribed.
 */
import { FakeAudioServer } from '../../support/fakes/fake-audio-server';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import type { GraphQLTestClient } from '../../support/graphql-client';
import { startTestApp, type TestApp } from '../../support/test-app';
import { silentVoiceNote, voiceNote } from '../../support/voice-audio';

const SEND = /* GraphQL */ `
  mutation V($input: VoiceNoteInput!) { sendVoiceNote(input: $input) { status reply messageId } }
`;
type Sent = { sendVoiceNote: { status: string; reply: string | null; messageId: string | null } };

let t: TestApp;
let model: FakeOpenAIServer;
let audio: FakeAudioServer;
let owner: GraphQLTestClient;
let note: Buffer;

beforeAll(async () => {
  [model, audio, note] = await Promise.all([FakeOpenAIServer.start({ chunks: 1 }), FakeAudioServer.start(), voiceNote('hello there')]);
  t = await startTestApp({
    config: {
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' }, speech: { base_url: audio.baseUrl } }, roles: { transcribe: { provider: 'speech', model: 'whisper-test' } } },
      voice: { max_seconds: 10, max_bytes: 60_000 },
      log: { level: 'warn' },
    },
  });
  owner = t.client(t.ownerToken);
}, 60_000);

afterAll(async () => {
  await owner?.close();
  await t?.close();
  await Promise.all([model?.close(), audio?.close()]);
});

const send = (input: Record<string, unknown>) => owner.http<Sent, unknown>(SEND, { input });
const b64 = (b: Buffer) => b.toString('base64');

describe('hostile voice notes', () => {
  it('refuses input errors with BAD_USER_INPUT naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ mimeType: 'text/html', dataBase64: b64(note) }, 'mimeType', /mimeType must be one of/],
      [{ mimeType: 'audio/ogg/../../etc/passwd', dataBase64: b64(note) }, 'mimeType', /mimeType must be one of/],
      [{ mimeType: 'audio/ogg', dataBase64: '%%% not base64 %%%' }, 'dataBase64', /not base64/],
      [{ mimeType: 'audio/ogg', dataBase64: '' }, 'dataBase64', /not base64/],
      [{ mimeType: 'audio/ogg', dataBase64: b64(Buffer.alloc(70_000, 1)) }, 'dataBase64', /larger than/],
      [{ mimeType: 'audio/ogg', dataBase64: b64(note), durationSeconds: -1 }, 'durationSeconds', /non-negative/],
    ];
    for (const [input, field, message] of cases) {
      const res = await send(input);
      expect({ field, code: res.errors?.[0]?.extensions?.code }).toEqual({ field, code: 'BAD_USER_INPUT' });
      expect(res.errors![0]!.message).toMatch(message);
    }
    expect(audio.transcriptions).toHaveLength(0);
  });

  it('refuses bytes that are no audio, or a broken container, whatever they are labelled as', async () => {
    const zip = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(2000, 0x41)]);
    const html = Buffer.from('<html><script>alert(1)</script></html>'.repeat(20));
    const cut = note.subarray(0, Math.floor(note.length / 2));
    // An OGG page header that claims a body far past the end of the file.
    const bomb = Buffer.from(note);
    bomb.writeUInt8(255, 26);
    for (const [data, why] of [[zip, /not in an audio format I know/], [html, /not in an audio format I know/], [cut, /runs past the end of the file|broken OGG page/], [bomb, /runs past the end|broken OGG page|no Opus/]] as const) {
      const res = await send({ mimeType: 'audio/ogg', dataBase64: b64(data), durationSeconds: 2 });
      expect(res.errors).toBeUndefined();
      expect(res.data!.sendVoiceNote).toMatchObject({ status: 'REFUSED', messageId: null });
      expect(res.data!.sendVoiceNote.reply).toMatch(/could not read that audio/);
      expect(res.data!.sendVoiceNote.reply).toMatch(why);
    }
    expect(audio.transcriptions).toHaveLength(0);
  });

  it('refuses a note declared too long, and one that lies about its length', async () => {
    const declared = await send({ mimeType: 'audio/ogg', dataBase64: b64(note), durationSeconds: 99_999 });
    expect(declared.data!.sendVoiceNote.reply).toMatch(/I take up to 0:10/);
    const lying = await send({ mimeType: 'audio/ogg', dataBase64: b64(await silentVoiceNote(15)), durationSeconds: 1 });
    expect(lying.data!.sendVoiceNote).toMatchObject({ status: 'REFUSED' });
    expect(lying.data!.sendVoiceNote.reply).toMatch(/0:15 long; I take up to 0:10/);
    expect(audio.transcriptions).toHaveLength(0);
  });

  it('still transcribes a good note afterwards: nothing was lost or jammed', async () => {
    const res = await send({ mimeType: 'audio/ogg;codecs=opus', dataBase64: b64(note), durationSeconds: 1 });
    expect(res.data!.sendVoiceNote.status).toBe('TRANSCRIBING');
    const upload = await audio.waitFor(() => audio.transcriptions[0], 'the good note');
    expect(upload.typeMatches).toBe(true);
  });
});
