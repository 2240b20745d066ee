import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { SYSTEM_CLOCK, type Clock } from '../../common/clock';
import type { Ctx } from '../../common/ctx';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import { Image } from '../sessions';
import { User } from '../users';
import { BeatRun } from './beat-run.entity';
import { previewRuns } from './beat-schedule';
import type { BeatService } from './beat.service';
import { Beat } from './beat.entity';
import type { BeatRunFeed, BeatScheduler, BeatTaskRunner, NativeBeatTasks } from './beat.ports';
import { BeatKind, BeatRunStatus, BeatTrigger, NATIVE_BEATS } from './beat.types';
import type { ResultDelivery } from './result-delivery';

export interface BeatRunnerDeps {
  db: Db;
  beats: BeatService;
  tasks: BeatTaskRunner;
  delivery: ResultDelivery;
  scheduler: BeatScheduler;
  feed: BeatRunFeed;
  clock?: Clock;
  /** Built-in beats run outside this module (`__backup__`); absent: such a beat fails with a message. */
  natives?: NativeBeatTasks;
}

export interface BeatRunnerOptions {
  /** `beats.max_failures`: failed runs in a row after which the beat is disabled and its owner told. */
  maxFailures: () => number;
}

/** What a run produced before bookkeeping. */
interface Outcome {
  output: string;
  sessionId?: string | null;
  inputTokens?: number;
  outputTokens?: number;
}

class RunFailed extends Error {
  constructor(
    message: string,
    readonly outcome: Partial<Outcome> = {},
  ) {
    super(message);
  }
}

/**
 * Runs beats (DESIGN §6): a reminder is delivered as is, a task runs as a heartbeat turn of its owner, the
 * reserved `__clear_images__` runs natively. Every run is a `beat_runs` row; a tick's row is unique, so a
 * tick taken by two workers (or retried) runs once. Failures count up and, at `beats.max_failures`, the
 * beat is disabled and its owner told in their chat.
 */
export class BeatRunner {
  constructor(
    private readonly deps: BeatRunnerDeps,
    private readonly options: BeatRunnerOptions,
  ) {}

  private now(): Date {
    return (this.deps.clock ?? SYSTEM_CLOCK).now();
  }

  /**
   * A scheduled tick; null when the beat is gone or disabled, or this tick already ran. `resume`: the
   * tick's job comes back from a worker that died during it, so a run it left RUNNING is finished here
   * (same row, same delivery key: the chat still gets the result once).
   */
  async runTick(ctx: Ctx, beatId: string, tick: string, signal: AbortSignal, opts: { at?: number; resume?: boolean } = {}): Promise<BeatRun | null> {
    const { at } = opts;
    const beat = await this.deps.db.repo(ctx, Beat).findOneBy({ id: beatId });
    if (!beat || !beat.enabled) return null;
    // A one-shot job of a time the beat no longer has (it was moved) does nothing.
    if (at !== undefined && beat.at?.getTime() !== at) return null;
    return this.execute(ctx, beat, tick, BeatTrigger.SCHEDULE, signal, opts.resume ?? false);
  }

  /** `runBeat(id)`: runs a beat now, whatever its schedule; own beats from TRUSTED, any from ADMIN. */
  async runNow(ctx: Ctx, beatId: string, signal: AbortSignal = new AbortController().signal): Promise<BeatRun> {
    const beat = await this.deps.beats.getRunnable(ctx, beatId);
    const run = await this.execute(ctx.asSystem('beat'), beat, `manual:${randomUUID()}`, BeatTrigger.MANUAL, signal);
    return run!;
  }

  private async execute(ctx: Ctx, beat: Beat, tick: string, trigger: BeatTrigger, signal: AbortSignal, resume = false): Promise<BeatRun | null> {
    const runs = this.deps.db.repo(ctx, BeatRun);
    let run: BeatRun;
    try {
      run = await runs.save(runs.create({ beatId: beat.id, tick, trigger, status: BeatRunStatus.RUNNING, sessionId: null, finishedAt: null, durationMs: null, output: null, error: null }));
    } catch (err) {
      const existing = await runs.findOneBy({ beatId: beat.id, tick });
      if (!existing) throw err;
      if (!resume || existing.status !== BeatRunStatus.RUNNING) return null;
      run = existing;
    }
    await this.announce(ctx, run, beat);
    const started = performance.now();
    let outcome: Outcome | null = null;
    let error: RunFailed | null = null;
    try {
      outcome = await this.perform(ctx, beat, run, signal);
    } catch (err) {
      error = err instanceof RunFailed ? err : new RunFailed((err as Error).message || String(err));
      ctx.logger.warn({ err, beatId: beat.id, runId: run.id }, 'beat run failed');
    }
    const partial = outcome ?? error!.outcome;
    Object.assign(run, {
      status: outcome ? BeatRunStatus.OK : BeatRunStatus.FAILED,
      finishedAt: this.now(),
      durationMs: Math.round(performance.now() - started),
      output: partial.output ?? null,
      error: error?.message ?? null,
      sessionId: partial.sessionId ?? null,
      inputTokens: partial.inputTokens ?? 0,
      outputTokens: partial.outputTokens ?? 0,
    });
    await runs.save(run);
    await this.bookkeep(ctx, beat, run, trigger);
    await this.announce(ctx, run, beat);
    return run;
  }

  private async perform(ctx: Ctx, beat: Beat, run: BeatRun, signal: AbortSignal): Promise<Outcome> {
    if (beat.managed && beat.name === NATIVE_BEATS.clearImages) return this.clearImages(ctx);
    if (beat.managed && beat.name === NATIVE_BEATS.backup) {
      if (!this.deps.natives) throw new RunFailed('Scheduled backups are not available in this process.');
      return { output: await this.deps.natives.backup(ctx) };
    }
    const ownerId = await this.ownerOf(ctx, beat);
    let result: Outcome;
    if (beat.kind === BeatKind.REMINDER) {
      result = { output: beat.prompt };
    } else {
      const owner = ownerId ? await this.deps.db.repo(ctx, User).findOneBy({ id: ownerId }) : null;
      if (!owner) throw new RunFailed('The beat has no owner to run as (no OWNER user exists yet).');
      if (!trustAtLeast(owner.trust, TrustLevel.GUEST)) throw new RunFailed(`The owner of the beat is ${owner.trust}; their beats do not run.`);
      const task = await this.deps.tasks.runTask(ctx, beat, owner.id, signal);
      result = { output: task.text, sessionId: task.sessionId, inputTokens: task.inputTokens, outputTokens: task.outputTokens };
      if (!task.ok) throw new RunFailed(task.text, result);
    }
    const target = beat.targetChannel && beat.targetChatId ? { channel: beat.targetChannel, chatId: beat.targetChatId } : null;
    const delivered = await this.deps.delivery.deliver(ctx, { userId: ownerId, target, key: `beat:${run.id}`, text: result.output, origin: { kind: 'beat', id: beat.id, name: beat.name } });
    if (!delivered) {
      throw new RunFailed('There was no chat to deliver the result to: set a target, or link a Telegram or WhatsApp identity to the owner.', result);
    }
    return result;
  }

  /** The reserved `__clear_images__` beat: empties `images` without a model call. */
  private async clearImages(ctx: Ctx): Promise<Outcome> {
    const result = await this.deps.db.repo(ctx, Image).createQueryBuilder().delete().from(Image).execute();
    const n = result.affected ?? 0;
    return { output: `Removed ${n} image${n === 1 ? '' : 's'}.` };
  }

  /** The beat's user, or for a managed beat the first OWNER. */
  private async ownerOf(ctx: Ctx, beat: Beat): Promise<string | null> {
    if (beat.userId) return beat.userId;
    const owner = await this.deps.db.repo(ctx, User).findOne({ where: { trust: TrustLevel.OWNER }, order: { id: 'ASC' } });
    return owner?.id ?? null;
  }

  /** Last/next run and the failure count; a one-shot beat is done after its run; too many failures disable it. */
  private async bookkeep(ctx: Ctx, beat: Beat, run: BeatRun, trigger: BeatTrigger): Promise<void> {
    const repo = this.deps.db.repo(ctx, Beat);
    const fresh = await repo.findOneBy({ id: beat.id });
    if (!fresh) return;
    const failed = run.status === BeatRunStatus.FAILED;
    fresh.lastRunAt = run.createdAt;
    fresh.consecutiveFailures = failed ? fresh.consecutiveFailures + 1 : 0;
    const oneShotDone = !fresh.cron && trigger === BeatTrigger.SCHEDULE;
    const max = this.options.maxFailures();
    const disable = oneShotDone || (failed && fresh.consecutiveFailures >= max);
    if (disable) fresh.enabled = false;
    fresh.nextRunAt = fresh.enabled ? (previewRuns(fresh, this.now(), 1)[0] ?? null) : null;
    await repo.save(fresh);
    if (!disable) return;
    await this.deps.scheduler.remove(fresh);
    if (failed && fresh.consecutiveFailures >= max) {
      const ownerId = await this.ownerOf(ctx, fresh);
      const text =
        `⚠️ Your beat "${fresh.name}" failed ${fresh.consecutiveFailures} times in a row and was disabled. Last error: ${run.error}\n` +
        `Fix the cause, then enable it again (update_beat or updateBeat with enabled: true).`;
      await this.deps.delivery.deliver(ctx, { userId: ownerId, target: null, key: `beat-disabled:${run.id}`, text }).catch((err: unknown) => {
        ctx.logger.warn({ err, beatId: fresh.id }, 'could not tell the owner that their beat was disabled');
      });
    }
  }

  private async announce(ctx: Ctx, run: BeatRun, beat: Beat): Promise<void> {
    await this.deps.feed.publish({ run, ownerId: beat.userId }).catch((err: unknown) => ctx.logger.warn({ err, runId: run.id }, 'could not announce a beat run'));
  }
}
