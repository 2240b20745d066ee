import type { Ctx } from '../../common/ctx';
import { ConflictError, NotFoundError, UserInputError } from '../../common/errors';
import { TrustLevel } from '../../common/trust';
import type { AuditService } from '../audit';
import { access } from '../users';
import { JobState, type QueueInspector, type QueueJobInfo } from './queue-inspector';

/** Most jobs listed per queue and state. */
export const MAX_JOBS_LISTED = 100;

/** Queue inspection for the admin console (ADMIN and above): counts, jobs, retry and remove (audited). */
export class QueueService {
  constructor(
    private readonly inspector: QueueInspector,
    private readonly audit: AuditService,
  ) {}

  /** Every queue with its job counts per state. */
  async list(ctx: Ctx): Promise<Array<{ name: string; counts: Record<JobState, number> }>> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'inspecting queues');
    return Promise.all(this.inspector.names().map(async (name) => ({ name, counts: await this.inspector.counts(name) })));
  }

  async jobs(ctx: Ctx, queue: string, state: JobState, limit: number): Promise<QueueJobInfo[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'inspecting queues');
    this.known(queue);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_JOBS_LISTED) throw new UserInputError(`first must be between 1 and ${MAX_JOBS_LISTED}; got ${limit}.`, 'first');
    return this.inspector.jobs(queue, state, limit);
  }

  /** Moves a failed job back to waiting; CONFLICT unless it failed. */
  async retry(ctx: Ctx, queue: string, id: string): Promise<QueueJobInfo> {
    const job = await this.job(ctx, queue, id);
    if (job.state !== JobState.FAILED) throw new ConflictError(`Only failed jobs can be retried; job ${id} is ${job.state}.`);
    await this.inspector.retry(queue, id);
    await this.audit.record(ctx, 'queue.job.retry', { type: 'Job', id: `${queue}:${id}` }, { queue, name: job.name, attemptsMade: job.attemptsMade });
    return (await this.inspector.find(queue, id)) ?? job;
  }

  /** Removes a job that is not running; CONFLICT while it is active. */
  async remove(ctx: Ctx, queue: string, id: string): Promise<boolean> {
    const job = await this.job(ctx, queue, id);
    if (job.state === JobState.ACTIVE) throw new ConflictError(`Job ${id} is running; stop it or wait until it ends.`);
    await this.inspector.remove(queue, id);
    await this.audit.record(ctx, 'queue.job.remove', { type: 'Job', id: `${queue}:${id}` }, { queue, name: job.name, state: job.state });
    return true;
  }

  private async job(ctx: Ctx, queue: string, id: string): Promise<QueueJobInfo> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'changing queued jobs');
    this.known(queue);
    const job = await this.inspector.find(queue, id);
    if (!job) throw new NotFoundError('Job', id);
    return job;
  }

  private known(queue: string): void {
    const names = this.inspector.names();
    if (!names.includes(queue)) throw new UserInputError(`Unknown queue "${queue}"; queues: ${names.join(', ')}.`, 'queue');
  }
}
