/** Outcome of one doctor check: `FAIL` makes `muninn doctor` exit non-zero, `warn` does not. */
export type Verdict = 'ok' | 'warn' | 'FAIL';

/** One line of `muninn doctor` output. */
export interface CheckResult {
  /** Short name of what was checked, e.g. `redis`. */
  name: string;
  verdict: Verdict;
  /** What was found, one sentence. */
  message: string;
  /** What to do about it; printed after the message. */
  hint?: string;
  /** Extra lines printed indented under the check (e.g. every key of a config error). */
  details?: string[];
}

const NAME_WIDTH = 16;

/** Renders a result as `<name padded> <verdict>: <message> — hint: <hint>`, plus indented detail lines. */
export function formatCheck(result: CheckResult): string {
  const head = `${result.name.padEnd(NAME_WIDTH)} ${result.verdict}: ${result.message}${result.hint ? ` — hint: ${result.hint}` : ''}`;
  return [head, ...(result.details ?? []).map((line) => `${' '.repeat(NAME_WIDTH + 1)}${line.trim()}`)].join(
    '\n',
  );
}

/** The message of an error, including the code of its cause (fetch hides ECONNREFUSED there). */
export function describeError(err: unknown): string {
  // Duck-typed: errors from Node internals may come from another realm (jest's vm) and fail `instanceof`.
  const e = (err ?? {}) as { name?: unknown; message?: unknown; cause?: { code?: string; message?: string } };
  if (typeof e.message !== 'string') return String(err);
  if (e.name === 'TimeoutError') return 'timed out';
  const detail = e.cause?.code ?? e.cause?.message;
  return detail && !e.message.includes(detail) ? `${e.message} (${detail})` : e.message;
}

/** Rejects with a TimeoutError after `ms` unless `promise` settles first. */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`timed out after ${ms} ms`), { name: 'TimeoutError' })),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
