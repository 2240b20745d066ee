import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { JobState } from './queue-inspector';

/** One step of a background job that a client follows (`jobProgress(jobId)`). */
export interface JobProgressUpdate {
  jobId: string;
  queue: string;
  state: JobState;
  /** What the job reported last (e.g. `{ done, total }`), null before it reported anything. */
  progress: unknown;
  /** 0–100 when the job reports `{ done, total }` (100 once completed), else null. */
  percent: number | null;
  /** The job's result once completed. */
  result: unknown;
  /** Why it failed, once failed. */
  error: string | null;
}

/**
 * Port: the updates of one job, from its current state until it completes or fails (then the stream
 * ends). Throws NOT_FOUND for an unknown job id. The app implements it with BullMQ's QueueEvents.
 */
export interface JobProgressSource {
  follow(jobId: string): Promise<AsyncIterableIterator<JobProgressUpdate>>;
}

/** Port: whether a user below ADMIN may follow this job (e.g. the ingestion of a document they added). */
export type JobFollowRule = (ctx: Ctx, jobId: string) => Promise<boolean>;

/**
 * `jobProgress(jobId)`: ADMINs follow any job (skill syncs are started by ADMINs); others only jobs a
 * rule grants them (their own document ingestion).
 */
export class JobProgressService {
  constructor(
    private readonly source: JobProgressSource,
    private readonly rules: readonly JobFollowRule[] = [],
  ) {}

  async follow(ctx: Ctx, jobId: string): Promise<AsyncIterableIterator<JobProgressUpdate>> {
    if (!access.seesEveryone(ctx)) {
      const granted = trustAtLeast(ctx.trust, TrustLevel.MEMBER) && (await anyRule(this.rules, ctx, jobId));
      if (!granted) access.requireTrust(ctx, TrustLevel.ADMIN, 'following background jobs');
    }
    return this.source.follow(jobId);
  }
}

async function anyRule(rules: readonly JobFollowRule[], ctx: Ctx, jobId: string): Promise<boolean> {
  for (const rule of rules) if (await rule(ctx, jobId)) return true;
  return false;
}
