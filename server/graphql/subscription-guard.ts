import { UnauthenticatedError } from '../common/errors';

/**
 * Wraps a long-lived subscription so it re-checks, at most every `intervalMs`, that the caller may still
 * read it (token not revoked, trust not lowered, session still visible). When the check fails the
 * subscription ends with an error instead of streaming on.
 */
export function guardSubscription<T>(source: AsyncIterable<T>, stillAllowed: () => Promise<boolean>, intervalMs = 10_000): AsyncIterableIterator<T> {
  const inner = source[Symbol.asyncIterator]();
  let checkedAt = Date.now();
  const guarded: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]() {
      return guarded;
    },
    async next() {
      const result = await inner.next();
      if (!result.done && Date.now() - checkedAt >= intervalMs) {
        checkedAt = Date.now();
        if (!(await stillAllowed().catch(() => false))) {
          await inner.return?.();
          throw new UnauthenticatedError('Your access to this subscription ended (token revoked or trust changed). Subscribe again.');
        }
      }
      return result;
    },
    async return() {
      await inner.return?.();
      return { value: undefined, done: true };
    },
  };
  return guarded;
}
