/**
 * Issue 26, acceptance 3: the console's chat records a voice note in a real Chromium and sends it. The
 * microphone is Chromium's fake capture device playing real speech (espeak-ng WAV), MediaRecorder makes
 * the WebM/Opus file, the server checks and queues it, the fake OpenAI-compatible transcription server
 * (real HTTP) checks the upload with ffprobe and answers a known transcript, the fake model receives it
 * and the page shows the transcript marked as a voice note, then the reply.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, screenshotBoth } from '../../support/browser';
import { newConsolePage, openConsole, signIn } from '../../support/console-page';
import { FakeAudioServer } from '../../support/fakes/fake-audio-server';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { startTestApp, type TestApp } from '../../support/test-app';
import { speechWav } from '../../support/voice-audio';

jest.setTimeout(120_000);

const TRANSCRIPT = 'Hello from the browser microphone.';

/** Mean volume of an audio file in dB (ffmpeg volumedetect): silence is about -91 dB. */
function meanVolume(audio: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', ['-hide_banner', '-nostats', '-i', 'pipe:0', '-af', 'volumedetect', '-f', 'null', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const m = /mean_volume: (-?[\d.]+) dB/.exec(err);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`volumedetect found nothing: ${err.slice(-300)}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(audio);
  });
}

describe('console chat voice notes', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let audio: FakeAudioServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-mic-'));
    const wav = path.join(dir, 'speech.wav');
    writeFileSync(wav, await speechWav('hello from the browser microphone, this is a voice note'));
    [model, audio] = await Promise.all([FakeOpenAIServer.start({ chunks: 1 }), FakeAudioServer.start()]);
    audio.defaultTranscript = TRANSCRIPT;
    [t, browser] = await Promise.all([
      startTestApp({
        config: {
          ai: {
            providers: { fake: { base_url: model.baseUrl, model: 'fake-model' }, speech: { base_url: audio.baseUrl } },
            roles: { transcribe: { provider: 'speech', model: 'whisper-test' } },
          },
          log: { level: 'warn' },
        },
      }),
      // The fake microphone plays the WAV; the permission prompt is answered "allow".
      launchBrowser(['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`]),
    ]);
    ({ context, page } = await newConsolePage(browser, pageErrors, { viewport: { width: 1100, height: 760 }, timeoutMs: 15_000 }));
    await context.grantPermissions(['microphone'], { origin: t.url });
    await signIn(page, t.url, t.ownerToken, { heading: 'Overview' });
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await t?.close();
    await Promise.all([model?.close(), audio?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('records from the microphone, sends the note, and shows its transcript and the reply', async () => {
    await openConsole(page, t.url, '/chat');
    await page.getByRole('button', { name: 'Record a voice note' }).click();
    const recording = page.getByRole('status', { name: 'Recording' });
    await recording.waitFor();
    await recording.getByText('0:02').waitFor();
    await page.getByRole('button', { name: 'Send voice note' }).click();

    const upload = await audio.waitFor(() => audio.transcriptions[0], 'the uploaded recording');
    // MediaRecorder's WebM with Opus, named and typed as such, about as long as it was recorded, and not
    // silence: the fake microphone's speech is in it.
    expect(upload.fileType).toBe('audio/webm');
    expect(upload.typeMatches).toBe(true);
    expect(upload.probe).toMatchObject({ codec: 'opus' });
    expect(upload.model).toBe('whisper-test');
    expect(await meanVolume(upload.data)).toBeGreaterThan(-60);

    const transcript = page.getByRole('log', { name: 'Transcript' }).locator('.bubble.user', { hasText: TRANSCRIPT });
    await transcript.waitFor();
    expect(await transcript.locator('.voice-tag').innerText()).toMatch(/^Voice note · 0:0[2-4]$/);
    await page.getByText(`Echo: `, { exact: false }).last().waitFor();
    await page.getByRole('log', { name: 'Transcript' }).getByText(/transcribing/).waitFor({ state: 'detached' });
    // The model got the transcript as the user's message.
    const sent = JSON.stringify(model.lastChatRequest()?.body?.messages ?? []);
    expect(sent).toContain(TRANSCRIPT);
    await screenshotBoth(page, 'chat-voice');

    // After a reload the history still marks the message as a voice note.
    await page.reload();
    await page.getByRole('log', { name: 'Transcript' }).locator('.bubble.user .voice-tag').first().waitFor();
    expect(pageErrors).toEqual([]);
  });

  it('shows the recording controls while recording, and Cancel sends nothing', async () => {
    const before = audio.transcriptions.length;
    await page.getByRole('button', { name: 'Record a voice note' }).click();
    const recording = page.getByRole('status', { name: 'Recording' });
    await recording.getByText('0:01').waitFor();
    await screenshotBoth(page, 'chat-recording');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Record a voice note' }).waitFor();
    // A later note does arrive, so nothing from the cancelled one was merely late.
    await page.getByRole('button', { name: 'Record a voice note' }).click();
    await page.getByRole('status', { name: 'Recording' }).getByText('0:01').waitFor();
    await page.getByRole('button', { name: 'Send voice note' }).click();
    await audio.waitFor(() => audio.transcriptions.length > before, 'the second note');
    expect(audio.transcriptions.length).toBe(before + 1);
  });
});
