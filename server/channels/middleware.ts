/** A step of the inbound pipeline (grammY-style): do something, then call `next()` to go on, or don't. */
export type Middleware<C> = (context: C, next: () => Promise<void>) => Promise<void>;

/**
 * Chains middleware into one function. Calling `next()` twice from one step is a bug and throws, so a
 * step can never run the rest of the pipeline twice (which would answer a message twice).
 */
export function compose<C>(steps: ReadonlyArray<Middleware<C>>): (context: C) => Promise<void> {
  return (context: C) => {
    const run = async (index: number): Promise<void> => {
      const step = steps[index];
      if (!step) return;
      let called = false;
      await step(context, async () => {
        if (called) throw new Error(`next() called twice in inbound step ${index}`);
        called = true;
        await run(index + 1);
      });
    };
    return run(0);
  };
}
