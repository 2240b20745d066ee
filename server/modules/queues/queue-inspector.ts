import { registerEnumType } from 'type-graphql';

/** States a queued job can be in (BullMQ's names as values). */
export enum JobState {
  WAITING = 'waiting',
  PRIORITIZED = 'prioritized',
  ACTIVE = 'active',
  DELAYED = 'delayed',
  WAITING_CHILDREN = 'waiting-children',
  PAUSED = 'paused',
  FAILED = 'failed',
  COMPLETED = 'completed',
}
registerEnumType(JobState, { name: 'JobState', description: 'State of a queued job.' });

export const JOB_STATES = Object.values(JobState) as readonly JobState[];

/** One job, without its payload (payloads hold prompts and private text). Times in ms since the epoch. */
export interface QueueJobInfo {
  queue: string;
  id: string;
  name: string;
  state: JobState;
  attemptsMade: number;
  maxAttempts: number;
  failedReason: string | null;
  createdAt: number;
  processedAt: number | null;
  finishedAt: number | null;
}

/**
 * Port: read and repair the background queues (turns, outbound, summarizer, maintenance,
 * model-calls.<provider>). The app implements it with BullMQ in `jobs/queue-inspector.ts`.
 *
 * @example
 * const counts = await inspector.counts('turns'); // { waiting: 0, active: 1, failed: 2, … }
 */
export interface QueueInspector {
  /** Names of the queues of this deployment. */
  names(): string[];
  counts(queue: string): Promise<Record<JobState, number>>;
  /** Newest first, at most `limit`. */
  jobs(queue: string, state: JobState, limit: number): Promise<QueueJobInfo[]>;
  /** The job with its current state, or null. */
  find(queue: string, id: string): Promise<QueueJobInfo | null>;
  /** Moves a failed job back to waiting. */
  retry(queue: string, id: string): Promise<void>;
  remove(queue: string, id: string): Promise<void>;
}
