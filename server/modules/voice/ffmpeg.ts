import { spawn } from 'node:child_process';

/** Thrown when ffmpeg is not installed (or not at the configured path). */
export class FfmpegMissingError extends Error {
  constructor(binary: string) {
    super(`ffmpeg was not found (voice.ffmpeg = "${binary}"); install it (apt-get install ffmpeg) or point voice.ffmpeg at it`);
    this.name = 'FfmpegMissingError';
  }
}

/**
 * Converts audio to OGG/Opus (what Telegram voice messages and WhatsApp voice notes are) with an ffmpeg
 * child process: bytes in on stdin, out on stdout, so nothing touches the disk and the event loop only
 * moves buffers. Used only when the speech endpoint returns another format.
 */
export class FfmpegConverter {
  private present: Promise<string | null> | null = null;

  constructor(
    private readonly binary: string = 'ffmpeg',
    private readonly timeoutMs: number = 60_000,
  ) {}

  /** The first line of `ffmpeg -version`, or null when it cannot be run (checked once). */
  version(): Promise<string | null> {
    this.present ??= run(this.binary, ['-hide_banner', '-version'], Buffer.alloc(0), 10_000)
      .then((out) => out.toString('utf8').split('\n')[0]!.trim() || 'ffmpeg')
      .catch(() => null);
    return this.present;
  }

  /** Any audio ffmpeg reads → mono 48 kHz Opus at 32 kbit/s in OGG. Throws FfmpegMissingError without ffmpeg. */
  async toOggOpus(audio: Buffer, signal?: AbortSignal): Promise<Buffer> {
    if (!(await this.version())) throw new FfmpegMissingError(this.binary);
    const args = ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-vn', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-application', 'voip', '-f', 'ogg', 'pipe:1'];
    return run(this.binary, args, audio, this.timeoutMs, signal);
  }
}

function run(binary: string, args: string[], input: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'], signal, timeout: timeoutMs, killSignal: 'SIGKILL' });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 2000) err += c.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code, sig) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new Error(`${binary} failed (${sig ?? `exit ${code}`}): ${err.trim().split('\n').slice(-2).join(' ') || 'no output'}`));
    });
    // A child that exits early (bad input) closes stdin: that EPIPE is reported by `close` above.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
