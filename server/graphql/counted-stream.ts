import type { Metrics } from '../common/metrics';

/**
 * Counts an open subscription in `muninn_subscriptions_open` until its stream ends, fails or is closed by
 * the client. `return` is forwarded at once (an async generator would wait for the next event first).
 */
export function countedStream<T>(source: AsyncIterable<T>, metrics: Metrics, kind: string): AsyncIterableIterator<T> {
  const inner = source[Symbol.asyncIterator]();
  let open = true;
  metrics.add('muninn_subscriptions_open', { kind }, 1);
  const end = () => {
    if (!open) return;
    open = false;
    metrics.add('muninn_subscriptions_open', { kind }, -1);
  };
  const stream: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]() {
      return stream;
    },
    async next() {
      try {
        const result = await inner.next();
        if (result.done) end();
        return result;
      } catch (err) {
        end();
        throw err;
      }
    },
    async return(value?: unknown) {
      end();
      return inner.return ? inner.return(value) : { done: true, value: value as T };
    },
    async throw(err?: unknown) {
      end();
      if (inner.throw) return inner.throw(err);
      throw err;
    },
  };
  return stream;
}
