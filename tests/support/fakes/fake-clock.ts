import type { Clock } from '../../../server/common/clock';

/** Wall-clock time plus an offset that tests move forward (`advance`, `set`) instead of sleeping. */
export class FakeClock implements Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Makes `now()` return `at` (and keep running from there). */
  set(at: Date): void {
    this.offsetMs = at.getTime() - Date.now();
  }
}
