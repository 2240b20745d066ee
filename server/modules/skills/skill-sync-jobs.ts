import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { TrustLevel } from '../../common/trust';

/** Port: queues a sync of the skills folder on a worker; returns the job id (`jobProgress(jobId)`). */
export interface SkillSyncJobs {
  enqueueSync(ctx: Ctx): Promise<string>;
}

/** `syncSkills` (ADMIN and above): the sync runs as a background job whose progress can be followed. */
export class SkillSyncCommands {
  constructor(private readonly jobs: SkillSyncJobs) {}

  async requestSync(ctx: Ctx): Promise<string> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'syncing skills');
    return this.jobs.enqueueSync(ctx);
  }
}
