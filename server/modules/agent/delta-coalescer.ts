/**
 * Streams text deltas to a sink: the first one at once (so the reply starts showing immediately), later
 * ones gathered and flushed at most every `intervalMs`. The sink is called at once with each flush and
 * must keep the order of its calls (the session event publisher does).
 */
export class DeltaCoalescer {
  private buffer = '';
  private timer: NodeJS.Timeout | null = null;
  private readonly sent: Array<Promise<unknown>> = [];
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
    this.sent.push(
      this.sink(text).catch((err: unknown) => {
        this.failed ??= err;
      }),
    );
  }

  /**
   * Sends what is left (at once: it leaves with whatever the caller publishes next in this tick, such
   * as the end of the turn) and resolves when every flush is done; rethrows the first sink failure.
   */
  close(): Promise<void> {
    this.flushNow();
    return Promise.all(this.sent).then(() => {
      if (this.failed) throw this.failed;
    });
  }
}
