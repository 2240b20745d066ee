import type { Ctx } from '../../common/ctx';
import type { BeatRun } from './beat-run.entity';

/** When a beat runs, as its scheduler needs it. */
export interface BeatScheduleSpec {
  id: string;
  cron: string | null;
  timezone: string;
  at: Date | null;
  enabled: boolean;
}

/**
 * Port: the beat schedules on the `heartbeat` queue (jobs/heartbeat.ts implements it with BullMQ job
 * schedulers). Every method is idempotent, so two processes may apply the same beat.
 */
export interface BeatScheduler {
  /** Creates or replaces the beat's schedule; removes it when the beat is disabled or its time has passed. */
  apply(beat: BeatScheduleSpec): Promise<void>;
  remove(beat: BeatScheduleSpec): Promise<void>;
  /** Ids of the beats that have a repeating schedule in the queue. */
  scheduledBeatIds(): Promise<string[]>;
}

/** A finished or started run, with the beat's owner (who may see it). */
export interface BeatRunEvent {
  run: BeatRun;
  ownerId: string | null;
}

/** Port: announces runs to `beatRuns` subscribers, in every process. */
export interface BeatRunFeed {
  publish(event: BeatRunEvent): Promise<void>;
  subscribe(signal?: AbortSignal): AsyncIterableIterator<BeatRunEvent>;
}

/** What a task turn gave. */
export interface BeatTaskResult {
  ok: boolean;
  text: string;
  sessionId: string;
  inputTokens: number;
  outputTokens: number;
}

/** Port: runs a task's instruction as a turn of `ownerId` in the beat's `cron:<beatId>` session. */
export interface BeatTaskRunner {
  runTask(ctx: Ctx, beat: { id: string; prompt: string }, ownerId: string, signal: AbortSignal): Promise<BeatTaskResult>;
}

export const NO_FEED: BeatRunFeed = {
  publish: async () => undefined,
  subscribe: () => {
    const done: AsyncIterableIterator<BeatRunEvent> = {
      [Symbol.asyncIterator]: () => done,
      next: async () => ({ value: undefined, done: true }),
    };
    return done;
  },
};

/** Port: the work of built-in beats that live outside the beats module (`__backup__`: a scheduled backup). */
export interface NativeBeatTasks {
  /** Takes a backup and prunes old ones; returns a one-line summary for the run's output. */
  backup(ctx: Ctx): Promise<string>;
}
