/** At most `size` holders at once; others wait in order (or give up when their signal aborts). */
export class Semaphore {
  private held = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  get inUse(): number {
    return this.held;
  }

  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.held < this.size) {
      this.held += 1;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal!.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.held -= 1;
    };
  }
}
