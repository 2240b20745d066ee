import { QueueEvents, UnrecoverableError, Worker, type Queue } from 'bullmq';
import { Ctx } from '../server/common/ctx';
import { ModelCallJobError, ModelAbortError, parseWireModelError, type ChatResult, type ModelCallJob, type ModelCallJobs, type ModelCallService, type ModelRouter, type WireModelError } from '../server/modules/models';
import { delayJob, keepReclaiming, logQueueErrors, makeQueue, makeWorker, type ProcessIdentity, type QueueEnv } from './bull';
import { ModelCallSlots, type InteractiveMarkKeys } from './model-call-slots';
import { PRIORITY, QUEUES, type JobData } from './queues';

export type { ProcessIdentity } from './bull';

/**
 * One BullMQ queue per provider (DESIGN §2): worker concurrency = the provider's `max_concurrency`
 * (also the queue's global concurrency, so it holds across processes), priorities interactive <
 * heartbeat < summarizer, retries with back-off, 429 pauses the queue for Retry-After.
 *
 * Workers are named after their process. A call a dead process was running holds one of the provider's
 * cluster-wide slots until BullMQ's stall check notices (up to twice `stalled_interval_ms`, 30 s by
 * default), so every worker process looks for such calls every few seconds and hands them back at once.
 *
 * A process that runs the workers runs an interactive call itself, without the queue hop, when the
 * provider has room and nothing waits in its queue (`ModelCallSlots`); a failure worth retrying goes on
 * through the queue with the attempts it has left.
 */
export class ModelCallQueues implements ModelCallJobs {
  private readonly queues = new Map<string, { queue: Queue; events: QueueEvents }>();
  private readonly cancelChannel: string;
  private readonly slots: ModelCallSlots;
  /** Set once this process runs the workers: it may then run interactive calls directly. */
  private direct: ModelCallService | null = null;

  constructor(
    private readonly env: QueueEnv,
    private readonly router: ModelRouter,
    private readonly maxRetries: number,
    marks: InteractiveMarkKeys,
    private readonly liveness?: ProcessIdentity,
  ) {
    this.cancelChannel = `${env.prefix}:model-cancel`;
    this.slots = new ModelCallSlots(env, marks, liveness);
  }

  async init(): Promise<void> {
    for (const provider of this.router.providers()) {
      const name = QUEUES.modelCalls(provider.name);
      const queue = makeQueue(this.env, name);
      const events = logQueueErrors(new QueueEvents(name, { connection: this.env.connect(`events-${name}`), prefix: `${this.env.prefix}:bull` }), this.env.logger, name);
      await events.waitUntilReady();
      await queue.setGlobalConcurrency(provider.maxConcurrency);
      this.queues.set(provider.name, { queue, events });
    }
  }

  async run(ctx: Ctx, job: ModelCallJob, signal?: AbortSignal): Promise<ChatResult> {
    const entry = this.queues.get(job.provider);
    if (!entry) throw new Error(`no model-calls queue for provider ${job.provider}`);
    const direct = await this.runDirect(job, signal);
    if (direct.kind === 'done') return direct.result;
    if (direct.kind === 'failed') {
      // Kept as a failed job, as a queued call's failure would be: admins see it and may retry it.
      const failed: JobData<'model.call'> = { ctx: ctx.serialize(), ...job, failed: direct.wire };
      await entry.queue.add('model.call', failed, { priority: PRIORITY[job.input.priority], attempts: 1, removeOnComplete: { age: 3600, count: 1000 }, removeOnFail: { age: 86400, count: 1000 } }).catch(() => undefined);
      throw new ModelCallJobError(direct.wire, direct.wire.message);
    }
    const data: JobData<'model.call'> = { ctx: ctx.serialize(), ...job, ...(direct.kind === 'rate-limited' ? { rateLimited: 1 } : {}) };
    const added = await entry.queue.add('model.call', data, {
      priority: PRIORITY[job.input.priority],
      // A direct attempt that failed counts as the first: the queue makes the retries it left, after the
      // first back-off; after a 429 the call waits for Retry-After (a 429 costs no attempt, as in the queue).
      attempts: direct.kind === 'retry' ? this.maxRetries : this.maxRetries + 1,
      ...(direct.kind === 'retry' ? { delay: 500 } : direct.kind === 'rate-limited' ? { delay: direct.retryAfterMs } : {}),
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 86400, count: 1000 },
    });
    // Stopped: a call still queued (or delayed, e.g. a background call waiting out its grace) is removed
    // and the wait ends at once (a removed job never finishes); a running one is cancelled where it runs.
    let removed: (err: Error) => void = () => undefined;
    const gone = new Promise<never>((_, reject) => (removed = reject));
    gone.catch(() => undefined);
    const onAbort = () =>
      void added.remove().then(
        () => removed(new ModelAbortError('the turn was stopped')),
        () => this.env.redis.publish(this.cancelChannel, added.id!),
      );
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    try {
      return (await Promise.race([added.waitUntilFinished(entry.events), gone])) as ChatResult;
    } catch (err) {
      if (signal?.aborted) throw new ModelAbortError('the turn was stopped');
      const message = (err as Error).message;
      const wire = parseWireModelError(message);
      throw new ModelCallJobError(wire, wire?.message ?? message);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * An interactive call run here when its provider has a free slot: `done`, or how it goes on through the
   * queue (`queue`: no slot; `retry`: its first attempt failed and may be retried; `rate-limited`: the
   * provider answered 429 and its queue now waits for Retry-After). A final failure throws as a failed job would.
   */
  private async runDirect(job: ModelCallJob, signal?: AbortSignal): Promise<{ kind: 'done'; result: ChatResult } | { kind: 'queue' | 'retry' } | { kind: 'rate-limited'; retryAfterMs: number } | { kind: 'failed'; wire: WireModelError }> {
    const service = this.direct;
    const provider = service && job.input.priority === 'interactive' ? this.router.providers().find((p) => p.name === job.provider) : undefined;
    if (!service || !provider) return { kind: 'queue' };
    const queueName = QUEUES.modelCalls(provider.name);
    const slot = await this.slots.take(provider.name, queueName, provider.maxConcurrency);
    if (!slot) return { kind: 'queue' };
    let failure: ReturnType<ModelCallService['failure']>;
    try {
      const result = await service.execute(job, signal, true);
      // The answer goes back at once; the release follows on the same connection, so it reaches Redis
      // before anything this process sends later (a failure's release is awaited: a retry may need the slot).
      void slot.release();
      return { kind: 'done', result };
    } catch (err) {
      await slot.release();
      if (signal?.aborted) throw new ModelAbortError('the turn was stopped');
      failure = service.failure(err);
    }
    if (failure.disposition === 'rate-limit' && this.maxRetries >= 1) {
      this.env.logger.warn({ provider: provider.name, retryMs: failure.retryAfterMs }, 'provider rate limit: pausing the queue');
      await this.queues.get(provider.name)!.queue.rateLimit(failure.retryAfterMs);
      return { kind: 'rate-limited', retryAfterMs: failure.retryAfterMs };
    }
    if (failure.disposition === 'retry' && this.maxRetries >= 1) {
      // Counted like a failed attempt of a queued call (metrics); a final failure is counted by its failed job.
      this.env.onJobFailed?.(queueName);
      return { kind: 'retry' };
    }
    return { kind: 'failed', wire: failure.wire };
  }

  /** One worker per provider; returns a function that stops them. From then on, interactive calls may run directly. */
  async startWorkers(service: ModelCallService): Promise<() => Promise<void>> {
    const workers: Worker[] = [];
    for (const provider of this.router.providers()) {
      const queueName = QUEUES.modelCalls(provider.name);
      const worker: Worker = await makeWorker<'model.call'>(
        this.env,
        queueName,
        async (job, token, signal) => {
          if (job.data.failed && job.attemptsMade === 0) throw new UnrecoverableError(JSON.stringify(job.data.failed));
          const waitUntil = await service.waitUntil(job.data);
          if (waitUntil) return delayJob(job, token, waitUntil);
          // Direct calls fill the provider: this one waits a moment (the queue's own limit does not see them).
          if (!(await this.slots.queuedMayRun(provider.name, queueName, provider.maxConcurrency))) return delayJob(job, token, Date.now() + 100);
          try {
            return await service.execute(job.data, signal);
          } catch (err) {
            const failure = service.failure(err);
            const rateLimited = (job.data.rateLimited ?? 0) + 1;
            if (failure.disposition === 'rate-limit' && rateLimited <= this.maxRetries) {
              await job.updateData({ ...job.data, rateLimited });
              this.env.logger.warn({ provider: provider.name, retryMs: failure.retryAfterMs }, 'provider rate limit: pausing the queue');
              await worker.rateLimit(failure.retryAfterMs);
              throw Worker.RateLimitError();
            }
            if (failure.disposition === 'retry') throw new Error(JSON.stringify(failure.wire));
            throw new UnrecoverableError(JSON.stringify(failure.wire));
          }
        },
        { concurrency: provider.maxConcurrency, ...(this.liveness ? { name: this.liveness.id } : {}) },
      );
      workers.push(worker);
    }
    const stopReclaim = this.liveness ? await keepReclaiming(this.env, () => [...this.queues.values()].map((e) => e.queue), this.liveness, 'model calls') : null;
    const sub = this.env.connect('model-cancel-sub');
    await sub.subscribe(this.cancelChannel);
    sub.on('message', (channel: string, jobId: string) => {
      if (channel === this.cancelChannel) for (const w of workers) w.cancelJob(jobId, 'turn stopped');
    });
    this.direct = service;
    return async () => {
      this.direct = null;
      stopReclaim?.();
      await Promise.all(workers.map((w) => w.close()));
      await sub.unsubscribe(this.cancelChannel).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    for (const { queue, events } of this.queues.values()) {
      await events.close();
      await queue.close();
    }
  }
}
