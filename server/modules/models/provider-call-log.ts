import type { ModelExecutor } from './model-call.service';

/** One finished model call against a provider, as the health view keeps it. */
export interface ProviderCallEntry {
  /** When the call ended (ms epoch). */
  at: number;
  /** How long the call took. */
  ms: number;
  ok: boolean;
  /** The error's message when `ok` is false (already free of secrets: model errors never carry keys). */
  error?: string;
}

/**
 * Port: the last calls of each provider, across the processes of a deployment (the workers run the calls,
 * the API shows them). Implementations keep a bounded window and never throw from `record`.
 */
export interface ProviderCallLog {
  record(provider: string, entry: ProviderCallEntry): Promise<void>;
  /** Newest first, at most `limit`. */
  recent(provider: string, limit: number): Promise<ProviderCallEntry[]>;
}

/** Keeps the window in this process (tests, single-process tools). */
export class InMemoryProviderCallLog implements ProviderCallLog {
  private readonly calls = new Map<string, ProviderCallEntry[]>();

  constructor(private readonly keep = 100) {}

  async record(provider: string, entry: ProviderCallEntry): Promise<void> {
    const list = this.calls.get(provider) ?? [];
    list.unshift(entry);
    list.length = Math.min(list.length, this.keep);
    this.calls.set(provider, list);
  }

  async recent(provider: string, limit: number): Promise<ProviderCallEntry[]> {
    return (this.calls.get(provider) ?? []).slice(0, limit);
  }
}

/**
 * Wraps a worker's model executor so every call lands in the provider's call log (duration, outcome,
 * error). Aborted calls are not counted: a stopped turn says nothing about the provider.
 */
export function loggedExecutor(inner: ModelExecutor, log: ProviderCallLog, now: () => number = () => Date.now()): ModelExecutor {
  return {
    execute: async (route, input, signal) => {
      const started = now();
      const provider = route.provider.name;
      try {
        const result = await inner.execute(route, input, signal);
        await log.record(provider, { at: now(), ms: now() - started, ok: true });
        return result;
      } catch (err) {
        if (!signal?.aborted) await log.record(provider, { at: now(), ms: now() - started, ok: false, error: (err as Error).message?.slice(0, 500) ?? String(err) });
        throw err;
      }
    },
  };
}
