import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { NotFoundError } from '../../common/errors';
import { TrustLevel } from '../../common/trust';
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
  /** The user who started the job (from its payload's context), null for the system or an unknown job. */
  requesterOf(jobId: string): Promise<string | null>;
}

/**
 * `jobProgress(jobId)`: ADMINs follow any job (skill syncs are theirs); MEMBERs and above follow the jobs
 * they started themselves (their data exports). Someone else's job is NOT_FOUND, as an unknown one.
 */
export class JobProgressService {
  constructor(private readonly source: JobProgressSource) {}

  async follow(ctx: Ctx, jobId: string): Promise<AsyncIterableIterator<JobProgressUpdate>> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'following background jobs');
    if (!access.seesEveryone(ctx) && (!ctx.userId || (await this.source.requesterOf(jobId)) !== ctx.userId)) {
      throw new NotFoundError('Job', jobId);
    }
    return this.source.follow(jobId);
  }
}
