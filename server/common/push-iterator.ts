/**
 * Turns a callback subscription into an async iterator with an unbounded, ordered buffer. `subscribe`
 * receives `push` (one value) and `end` (no more values after those buffered) and returns the
 * unsubscribe function, called once when the iterator ends or the consumer stops.
 */
export function pushIterator<T>(subscribe: (push: (value: T) => void, end: () => void) => () => void): AsyncIterableIterator<T> {
  const buffer: T[] = [];
  const waiting: Array<(result: IteratorResult<T>) => void> = [];
  let ended = false;
  let closed = false;
  let unsubscribe: (() => void) | null = null;
  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe?.();
  };
  const end = () => {
    if (ended) return;
    ended = true;
    for (const resolve of waiting.splice(0)) resolve({ done: true, value: undefined });
    close();
  };
  unsubscribe = subscribe(
    (value) => {
      if (ended) return;
      const resolve = waiting.shift();
      if (resolve) resolve({ done: false, value });
      else buffer.push(value);
    },
    end,
  );
  if (ended) close();
  const iterator: AsyncIterableIterator<T> = {
    next() {
      if (buffer.length) return Promise.resolve({ done: false, value: buffer.shift()! });
      if (ended) return Promise.resolve({ done: true, value: undefined });
      return new Promise((resolve) => waiting.push(resolve));
    },
    return() {
      buffer.length = 0;
      end();
      return Promise.resolve({ done: true, value: undefined });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
