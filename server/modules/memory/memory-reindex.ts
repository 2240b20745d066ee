import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { TrustLevel } from '../../common/trust';

/** Port: queues a re-index of the memory search index on a worker; returns the job id (`jobProgress(jobId)`). */
export interface MemoryReindexJobs {
  enqueueReindex(ctx: Ctx, userId: string | null): Promise<string>;
}

/** `reindexMemories` (ADMIN and above): the work runs as a background job whose progress can be followed. */
export class MemoryReindexCommands {
  constructor(private readonly jobs: MemoryReindexJobs) {}

  /** Re-indexes every memory, or only `userId`'s. */
  async requestReindex(ctx: Ctx, userId: string | null): Promise<string> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 're-indexing memories');
    return this.jobs.enqueueReindex(ctx, userId);
  }
}
