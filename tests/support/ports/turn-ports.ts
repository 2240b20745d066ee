import { TurnControl, type AbortRequest, type HeldSessionLock, type SessionLocks, type TurnAbortBus, type TurnJobs } from '../../../server/modules/conversation';

/** A `turn.drain` job as the in-process queue holds it. */
export interface ScheduledDrain {
  sessionId: string;
  messageId: string;
}

/**
 * The turns queue in process: remembers every scheduled drain in order, and hands each to `onSchedule`
 * when a test sets it (e.g. to drain at once). `take()` empties the queue like a worker would.
 */
export class InProcessTurnJobs implements TurnJobs {
  readonly scheduled: ScheduledDrain[] = [];
  onSchedule: ((job: ScheduledDrain) => Promise<void>) | null = null;
  private waiting: ScheduledDrain[] = [];

  async schedule(sessionId: string, messageId: string): Promise<void> {
    const job = { sessionId, messageId };
    this.scheduled.push(job);
    this.waiting.push(job);
    await this.onSchedule?.(job);
  }

  /** The drains not taken yet, oldest first; they are taken off. */
  take(): ScheduledDrain[] {
    const jobs = this.waiting;
    this.waiting = [];
    return jobs;
  }
}

/** The abort pub/sub in process: every published request reaches every listener, in order. */
export class InProcessAbortBus implements TurnAbortBus {
  readonly published: AbortRequest[] = [];
  private readonly listeners = new Set<(req: AbortRequest) => void>();

  async publish(req: AbortRequest): Promise<void> {
    this.published.push(req);
    for (const fn of [...this.listeners]) fn(req);
  }

  async listen(fn: (req: AbortRequest) => void): Promise<() => Promise<void>> {
    this.listeners.add(fn);
    return async () => void this.listeners.delete(fn);
  }
}

/**
 * Session locks in process: one holder per session. `loseLock` makes the current holder's lock lost
 * (as when renewing it failed) and frees the session for someone else.
 */
export class InProcessSessionLocks implements SessionLocks {
  private readonly held = new Map<string, { lost: boolean; release(): Promise<boolean> }>();
  private readonly marked = new Set<string>();
  /** Every acquisition and release, in order (`+id` / `-id`), to check what ran under the lock. */
  readonly log: string[] = [];

  async tryAcquire(sessionId: string): Promise<HeldSessionLock | null> {
    if (this.held.has(sessionId)) return null;
    const lock = {
      lost: false,
      release: async () => {
        if (this.held.get(sessionId) === lock) this.held.delete(sessionId);
        this.log.push(`-${sessionId}`);
        return this.marked.delete(sessionId);
      },
    };
    this.held.set(sessionId, lock);
    this.log.push(`+${sessionId}`);
    return lock;
  }

  async isHeld(sessionId: string): Promise<boolean> {
    return this.held.has(sessionId);
  }

  async markIfHeld(sessionId: string): Promise<boolean> {
    if (!this.held.has(sessionId)) return false;
    this.marked.add(sessionId);
    return true;
  }

  loseLock(sessionId: string): void {
    const lock = this.held.get(sessionId);
    if (!lock) throw new Error(`no lock held on ${sessionId}`);
    lock.lost = true;
    this.held.delete(sessionId);
  }
}

/** The turn scheduler as the services use it (the real `TurnControl`) over the in-process ports. */
export function inProcessTurnScheduler(): { control: TurnControl; jobs: InProcessTurnJobs; aborts: InProcessAbortBus; locks: InProcessSessionLocks } {
  const jobs = new InProcessTurnJobs();
  const aborts = new InProcessAbortBus();
  const locks = new InProcessSessionLocks();
  return { control: new TurnControl(jobs, aborts, locks), jobs, aborts, locks };
}
