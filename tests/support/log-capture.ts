import { Writable } from 'node:stream';

/** A pino destination that keeps every line in memory, so tests can read what was logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    cb();
  }

  get text(): string {
    return this.lines.join('\n');
  }

  /** Parsed JSON lines. */
  entries(): Array<Record<string, unknown>> {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}
