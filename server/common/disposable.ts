/** Something that holds resources and must be released on shutdown. */
export interface AsyncDisposableResource {
  dispose(): Promise<void>;
}

/**
 * Collects cleanup steps and runs them in reverse order of registration; a failing step does not stop
 * the others. Running twice is a no-op.
 */
export class DisposableStack {
  private readonly steps: Array<{ name: string; run: () => Promise<void> | void }> = [];
  private disposed = false;

  add(name: string, run: () => Promise<void> | void): void {
    this.steps.push({ name, run });
  }

  async dispose(onError: (name: string, err: unknown) => void): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const step of this.steps.reverse()) {
      try {
        await step.run();
      } catch (err) {
        onError(step.name, err);
      }
    }
  }
}
