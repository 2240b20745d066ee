import { DelayedError, Queue, QueueEvents, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Ctx } from '../server/common/ctx';
import type { Logger } from '../server/common/logger';
import type { ModelCallExecutor } from '../server/modules/agent/model-call-executor';
import type { ModelCallInput, ModelCaller, ModelRole, ModelRouteInfo } from '../server/modules/agent/model-caller';
import {
  classifyModelError,
  deserializeModelError,
  ModelAbortError,
  serializeModelError,
  type ChatResult,
  type ModelRouter,
  type SerializedModelError,
} from '../server/modules/models';
import { PRIORITY, QUEUES, type JobData } from './queues';

export interface ModelCallQueueOptions {
  prefix: string;
  /** Job lock of a running call; a dead worker's call is run again after it lapses. */
  lockMs: number;
  stalledIntervalMs: number;
  maxRetries: number;
  backgroundGraceMs: number;
  logger: Logger;
  /** Makes a new Redis connection (workers and queue events need their own). */
  connect: (name: string) => Redis;
}

type WireError = SerializedModelError & { streamed?: boolean };

/**
 * Model calls on one BullMQ queue per provider (DESIGN §2): worker concurrency = the provider's
 * `max_concurrency` (also set as the queue's global concurrency, so it holds across processes);
 * priorities interactive < heartbeat < summarizer; background calls wait `background_grace_ms` after
 * the last interactive one; 5xx/network errors retry with back-off, 429 pauses the queue for
 * Retry-After; a failed route falls back to the next one unless text was already streamed.
 */
export class ModelCallQueue implements ModelCaller {
  private readonly queues = new Map<string, { queue: Queue; events: QueueEvents }>();
  private readonly cancelChannel: string;

  constructor(
    private readonly router: ModelRouter,
    private readonly shared: Redis,
    private readonly options: ModelCallQueueOptions,
  ) {
    this.cancelChannel = `${options.prefix}:model-cancel`;
  }

  private bullPrefix(): string {
    return `${this.options.prefix}:bull`;
  }

  private lastInteractiveKey(provider: string): string {
    return `${this.options.prefix}:model:last-interactive:${provider}`;
  }

  /** Creates the queues (and their event listeners) of every provider; call before use. */
  async init(): Promise<void> {
    for (const provider of this.router.providers()) {
      const name = QUEUES.modelCalls(provider.name);
      const queue = new Queue(name, { connection: this.shared, prefix: this.bullPrefix() });
      const events = new QueueEvents(name, { connection: this.options.connect(`events-${name}`), prefix: this.bullPrefix() });
      await events.waitUntilReady();
      await queue.setGlobalConcurrency(provider.maxConcurrency);
      this.queues.set(provider.name, { queue, events });
    }
  }

  info(role: ModelRole): ModelRouteInfo {
    const { provider, model } = this.router.primary(role);
    return {
      provider: provider.name,
      model,
      contextWindow: provider.contextWindow,
      supportsTools: provider.supportsTools,
      supportsVision: provider.supportsVision,
      usingMock: this.router.usingMock,
    };
  }

  async call(ctx: Ctx, input: ModelCallInput, signal?: AbortSignal): Promise<ChatResult> {
    const routes = this.router.routes(input.role);
    for (let i = 0; ; i++) {
      const route = routes[i]!;
      try {
        return await this.callRoute(ctx, input, route.provider.name, route.model, signal);
      } catch (err) {
        const wire = (err as { wire?: WireError }).wire;
        const last = i === routes.length - 1 || signal?.aborted || wire?.streamed || wire?.kind === 'context-length' || wire?.kind === 'abort';
        if (last) throw wire ? deserializeModelError(wire) : err;
        this.options.logger.warn({ role: input.role, from: `${route.provider.name}/${route.model}`, err: wire?.message }, 'model call failed; trying the fallback');
      }
    }
  }

  private async callRoute(ctx: Ctx, input: ModelCallInput, provider: string, model: string, signal?: AbortSignal): Promise<ChatResult> {
    const entry = this.queues.get(provider);
    if (!entry) throw new Error(`no model-calls queue for provider ${provider}`);
    if (signal?.aborted) throw new ModelAbortError('aborted before the call');
    const data: JobData<'model.call'> = { ctx: ctx.serialize(), input, provider, model };
    const job = await entry.queue.add('model.call', data, {
      priority: PRIORITY[input.priority],
      attempts: this.options.maxRetries + 1,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 86400, count: 1000 },
    });
    const onAbort = () => {
      void job.remove().catch(() => this.shared.publish(this.cancelChannel, job.id!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return (await job.waitUntilFinished(entry.events)) as ChatResult;
    } catch (err) {
      if (signal?.aborted) throw new ModelAbortError('the turn was stopped');
      const wire = parseWire((err as Error).message);
      throw Object.assign(new Error(wire?.message ?? (err as Error).message), { wire });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Starts one worker per provider in this process; returns a function that stops them. */
  async startWorkers(executor: ModelCallExecutor, subscriber: Redis): Promise<() => Promise<void>> {
    const { logger } = this.options;
    const workers: Worker[] = [];
    for (const provider of this.router.providers()) {
      const queueName = QUEUES.modelCalls(provider.name);
      const worker: Worker = new Worker(
        queueName,
        async (job: Job<JobData<'model.call'>>, token?: string, signal?: AbortSignal) => {
          const { input } = job.data;
          const interactive = input.priority === 'interactive';
          const graceKey = this.lastInteractiveKey(provider.name);
          if (!interactive) {
            const last = Number((await this.shared.get(graceKey)) ?? 0);
            const wait = last + this.options.backgroundGraceMs - Date.now();
            if (wait > 0) {
              await job.moveToDelayed(Date.now() + wait, token);
              throw new DelayedError();
            }
          } else {
            await this.shared.set(graceKey, String(Date.now()), 'PX', Math.max(this.options.backgroundGraceMs * 2, 1000));
          }
          try {
            const route = this.router.routes(input.role).find((r) => r.provider.name === job.data.provider && r.model === job.data.model) ?? {
              provider,
              model: job.data.model,
            };
            return await executor.execute(route, input, signal);
          } catch (err) {
            const kind = classifyModelError(err);
            const wire: WireError = { ...serializeModelError(err), streamed: (err as { streamed?: boolean }).streamed };
            if (kind === 'rate-limit' && !wire.streamed) {
              const retryMs = wire.retryAfterMs ?? 1000;
              const rateLimited = ((job.data as { rateLimited?: number }).rateLimited ?? 0) + 1;
              if (rateLimited <= this.options.maxRetries) {
                await job.updateData({ ...job.data, rateLimited } as JobData<'model.call'>);
                logger.warn({ provider: provider.name, retryMs }, 'provider rate limit: pausing the queue');
                await worker.rateLimit(retryMs);
                throw Worker.RateLimitError();
              }
            }
            if (kind === 'retry' && !wire.streamed) throw new Error(JSON.stringify(wire));
            throw new UnrecoverableError(JSON.stringify(wire));
          } finally {
            if (interactive) await this.shared.set(graceKey, String(Date.now()), 'PX', Math.max(this.options.backgroundGraceMs * 2, 1000));
          }
        },
        {
          connection: this.options.connect(`worker-${queueName}`),
          prefix: this.bullPrefix(),
          concurrency: provider.maxConcurrency,
          lockDuration: this.options.lockMs,
          stalledInterval: this.options.stalledIntervalMs,
        },
      );
      worker.on('error', (err) => logger.error({ err, provider: provider.name }, 'model worker error'));
      await worker.waitUntilReady();
      workers.push(worker);
    }
    await subscriber.subscribe(this.cancelChannel);
    subscriber.on('message', (channel: string, jobId: string) => {
      if (channel !== this.cancelChannel) return;
      for (const w of workers) w.cancelJob(jobId, 'turn stopped');
    });
    return async () => {
      await Promise.all(workers.map((w) => w.close()));
      await subscriber.unsubscribe(this.cancelChannel).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    for (const { queue, events } of this.queues.values()) {
      await events.close();
      await queue.close();
    }
  }
}

function parseWire(message: string): WireError | null {
  try {
    const parsed = JSON.parse(message) as WireError;
    return typeof parsed?.kind === 'string' ? parsed : null;
  } catch {
    return null;
  }
}
