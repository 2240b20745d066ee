/**
 * Streams text deltas to a sink: the first one at once (so the reply starts showing immediately), later
 * ones gathered and flushed at most every `intervalMs`. Flushes are serialized, so order is kept.
 */
export class DeltaCoalescer {
  private buffer = '';
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private sentFirst = false;
  private failed: unknown = null;

  constructor(
    private readonly sink: (text: string) => Promise<unknown>,
    private readonly intervalMs = 50,
  ) {}

  /** True once any text was handed to the sink. */
  get started(): boolean {
    return this.sentFirst;
  }

  push(text: string): void {
    if (!text) return;
    this.buffer += text;
    if (!this.sentFirst) {
      this.sentFirst = true;
      this.flushNow();
    } else {
      this.timer ??= setTimeout(() => this.flushNow(), this.intervalMs);
    }
  }

  private flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const text = this.buffer;
    this.buffer = '';
    if (!text) return;
    this.chain = this.chain.then(() => this.sink(text)).then(
      () => undefined,
      (err: unknown) => {
        this.failed ??= err;
      },
    );
  }

  /** Sends what is left and waits for every flush; rethrows the first sink failure. */
  async close(): Promise<void> {
    this.flushNow();
    await this.chain;
    if (this.failed) throw this.failed;
  }
}
