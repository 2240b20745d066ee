import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

// Real speech for voice tests: espeak-ng speaks the text (WAV on stdout), ffmpeg encodes it the way
// Telegram voice messages and WhatsApp voice notes are encoded (OGG/Opus, mono, 48 kHz). Both are
// Debian packages (`apt-get install espeak-ng ffmpeg`, done by .ci/run).

function run(binary: string, args: string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`${binary} exited ${code}: ${err.trim()}`))));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? Buffer.alloc(0));
  });
}

/** `text` spoken by espeak-ng, as WAV. */
export function speechWav(text: string): Promise<Buffer> {
  return run('espeak-ng', ['--stdout', '-s', '160', text]);
}

/** Any audio → `format` with ffmpeg (`ogg`: Opus in OGG like a voice note; `webm`: Opus in WebM like a browser recording). */
export function transcode(audio: Buffer, format: 'ogg' | 'mp3' | 'webm' | 'wav'): Promise<Buffer> {
  const codec = format === 'ogg' || format === 'webm' ? ['-c:a', 'libopus', '-b:a', '24k', '-ar', '48000', '-ac', '1'] : format === 'mp3' ? ['-c:a', 'libmp3lame', '-b:a', '48k'] : [];
  return run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', ...codec, '-f', format, 'pipe:1'], audio);
}

/** `text` spoken as an OGG/Opus voice note. */
export async function voiceNote(text: string): Promise<Buffer> {
  return transcode(await speechWav(text), 'ogg');
}

/** `seconds` of silence as an OGG/Opus voice note. */
export function silentVoiceNote(seconds: number): Promise<Buffer> {
  return run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `anullsrc=r=48000:cl=mono`, '-t', String(seconds), '-c:a', 'libopus', '-b:a', '16k', '-f', 'ogg', 'pipe:1']);
}

/** What ffprobe makes of a file: container, first audio codec and length; throws when it cannot read it. */
export async function probeAudio(audio: Buffer): Promise<{ format: string; codec: string | null; seconds: number }> {
  // From a file, not a pipe: ffprobe reads the length of an OGG file from its last page.
  const file = path.join(os.tmpdir(), `muninn-probe-${randomUUID()}`);
  await writeFile(file, audio);
  const out = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=format_name,duration:stream=codec_name,codec_type', '-of', 'json', file]).finally(() => rm(file, { force: true }));
  const parsed = JSON.parse(out.toString()) as { format?: { format_name?: string; duration?: string }; streams?: Array<{ codec_name?: string; codec_type?: string }> };
  const audioStream = parsed.streams?.find((s) => s.codec_type === 'audio');
  return { format: parsed.format?.format_name ?? '', codec: audioStream?.codec_name ?? null, seconds: Number(parsed.format?.duration ?? NaN) };
}
