import { makeQueue } from '../../jobs/bull';
import type { TestApp } from './test-app';

const BUSY = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Waits until the named queues of a test app have no job waiting, running or delayed, checked in the
 * order given in one pass (so list producers first: `['turns', 'summarizer']` — a finished drain has
 * queued its summaries). An awaited state instead of "sleep and hope the background work ran".
 */
export async function waitForQueuesIdle(t: TestApp, names: string[], timeoutMs = 30_000): Promise<void> {
  const queues = names.map((name) => makeQueue(t.app.chat!.queueEnv, name));
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      let busy: string | null = null;
      for (const q of queues) {
        const counts = await q.getJobCounts(...BUSY);
        if (Object.values(counts).some((n) => n > 0)) {
          busy = `${q.name} ${JSON.stringify(counts)}`;
          break;
        }
      }
      if (!busy) return;
      if (Date.now() > deadline) throw new Error(`queues still busy: ${busy}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    for (const q of queues) await q.close();
  }
}
