import type { ResultChannels } from './result-delivery';
import { SYSTEM_CLOCK, type Clock } from '../../common/clock';
import { access } from '../../common/access';
import type { Ctx } from '../../common/ctx';
import { ConflictError, ForbiddenError, NotFoundError, UserInputError } from '../../common/errors';
import type { Page, PageArgs } from '../../common/pagination';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import { findPage } from '../../persistence/paginate';
import { CHANNELS, type UserService } from '../users';
import { BeatRun } from './beat-run.entity';
import { checkAt, checkCron, checkFrequency, checkTimeZone, describeCron, previewRuns } from './beat-schedule';
import { Beat } from './beat.entity';
import type { BeatScheduler } from './beat.ports';
import { BeatKind } from './beat.types';

/** A new beat. `userId` (ADMIN and above) makes it someone else's; default the actor. */
export interface BeatInput {
  name: string;
  text: string;
  kind?: BeatKind | null;
  cron?: string | null;
  at?: Date | null;
  timezone?: string | null;
  targetChannel?: string | null;
  targetChatId?: string | null;
  enabled?: boolean | null;
  userId?: string | null;
}

/** Changes to a beat; absent fields stay. Setting `cron` clears `at` and the other way round. */
export type BeatPatch = Partial<Omit<BeatInput, 'userId'>>;

/** What a cron expression would do (the console's preview): valid or why not, in words, the next runs. */
export interface CronPreview {
  valid: boolean;
  /** Why the expression cannot be used, and how to write it; null when valid. */
  error: string | null;
  /** The schedule in words; null when invalid. */
  description: string | null;
  timezone: string;
  nextRuns: Date[];
}

export interface BeatServiceOptions {
  /** `beats.min_interval_minutes`: shortest schedule below ADMIN. */
  minIntervalMinutes: number;
  /** `beats.timezone`: zone of beats that name none. */
  defaultTimezone: string;
}

const NAME = /^[\p{L}\p{N}][\p{L}\p{N} _.:-]{0,99}$/u;

/**
 * Beats of users and the managed ones (DESIGN §6): who may see and change which (own beats from TRUSTED,
 * everyone's from ADMIN; managed beats only through heartbeats.default.json), validation with fix-it
 * messages, and the schedule on the heartbeat queue kept in step with every change.
 */
export class BeatService {
  constructor(
    private readonly deps: { db: Db; users: UserService; scheduler: BeatScheduler; channels: ResultChannels; clock?: Clock },
    private readonly options: BeatServiceOptions,
  ) {}

  private get clock(): Clock {
    return this.deps.clock ?? SYSTEM_CLOCK;
  }

  /** Own beats; everyone's (and the managed ones) for ADMIN and above, optionally of one user. */
  async findMany(ctx: Ctx, filter: { userId?: string | null } = {}): Promise<Beat[]> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'beats');
    const repo = this.deps.db.repo(ctx, Beat);
    if (!access.seesEveryone(ctx)) return repo.find({ where: { userId: ctx.userId ?? '' }, order: { id: 'ASC' } });
    return repo.find({ where: filter.userId ? { userId: filter.userId } : {}, order: { id: 'ASC' } });
  }

  /** A beat the actor may see (own, or any for ADMIN and above); NOT_FOUND otherwise. */
  async get(ctx: Ctx, id: string): Promise<Beat> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'beats');
    const beat = await this.deps.db.repo(ctx, Beat).findOneBy({ id });
    if (!beat || (!access.seesEveryone(ctx) && beat.userId !== ctx.userId)) throw new NotFoundError('Beat', id);
    return beat;
  }

  /** Finds a beat the actor may run or change, by id or, among the actor's own, by name (the beat tools). */
  async resolve(ctx: Ctx, idOrName: string): Promise<Beat> {
    const byName = await this.deps.db.repo(ctx, Beat).findOneBy({ name: idOrName, userId: ctx.userId ?? '' });
    return byName ?? this.getRunnable(ctx, idOrName);
  }

  /** Runs of a visible beat, newest first. */
  async runs(ctx: Ctx, beatId: string, page: PageArgs): Promise<Page<BeatRun>> {
    await this.get(ctx, beatId);
    return findPage(this.deps.db.repo(ctx, BeatRun), { beatId }, page, 'DESC');
  }

  /** The next `count` run times of a beat (empty when disabled or done). */
  preview(beat: Pick<Beat, 'cron' | 'timezone' | 'at' | 'enabled'>, count = 5): Date[] {
    if (!beat.enabled) return [];
    return previewRuns(beat, this.clock.now(), count);
  }

  /**
   * Checks a cron expression the way create and update do (syntax, time zone, and below ADMIN the
   * frequency floor) and returns the next `count` runs in its time zone, or the reason it is refused.
   */
  previewCron(ctx: Ctx, cron: string, timezone: string | null, count = 5): CronPreview {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'beats');
    const tz = timezone?.trim() || this.options.defaultTimezone;
    try {
      const expr = checkCron(cron, tz);
      const now = this.clock.now();
      if (!access.seesEveryone(ctx)) checkFrequency(expr, tz, this.options.minIntervalMinutes, now);
      return { valid: true, error: null, description: describeCron(expr), timezone: tz, nextRuns: previewRuns({ cron: expr, timezone: tz, at: null }, now, Math.min(Math.max(count, 1), 20)) };
    } catch (err) {
      if (err instanceof UserInputError) return { valid: false, error: err.message, description: null, timezone: tz, nextRuns: [] };
      throw err;
    }
  }

  /** A beat's schedule in words: the cron read aloud, or the one-shot time. */
  schedule(beat: Pick<Beat, 'cron' | 'at' | 'timezone'>): string {
    if (beat.cron) return describeCron(beat.cron);
    return beat.at ? `Once, at ${beat.at.toISOString()}` : 'Never';
  }

  /** The newest run of each beat (none for beats that never ran), for the given visible beats. */
  async lastRuns(ctx: Ctx, beatIds: readonly string[]): Promise<Array<BeatRun | null>> {
    if (!beatIds.length) return [];
    const rows = await this.deps.db
      .repo(ctx, BeatRun)
      .createQueryBuilder('r')
      .where('r.beatId IN (:...ids)', { ids: [...beatIds] })
      .andWhere((qb) => `r.createdAt = ${qb.subQuery().select('MAX(l.createdAt)').from(BeatRun, 'l').where('l.beatId = r.beatId').getQuery()}`)
      .getMany();
    const byBeat = new Map(rows.map((r) => [r.beatId, r]));
    return beatIds.map((id) => byBeat.get(id) ?? null);
  }

  async create(ctx: Ctx, input: BeatInput): Promise<Beat> {
    this.requireBeatTrust(ctx);
    let userId = ctx.userId;
    if (input.userId && input.userId !== ctx.userId) {
      if (!access.seesEveryone(ctx)) throw new ForbiddenError("Creating beats for other users needs ADMIN trust; leave userId out to create your own.");
      userId = (await this.deps.users.get(ctx, input.userId)).id;
    }
    if (!userId) throw new ForbiddenError('Beats belong to a user: sign in as one to create a beat.');
    await this.checkTarget(ctx, userId, input.targetChannel ?? null, input.targetChatId ?? null);
    const fields = this.validate(ctx, {
      name: input.name,
      prompt: input.text,
      kind: input.kind ?? BeatKind.TASK,
      cron: input.cron ?? null,
      at: input.at ?? null,
      timezone: input.timezone ?? this.options.defaultTimezone,
      targetChannel: input.targetChannel ?? null,
      targetChatId: input.targetChatId ?? null,
      enabled: input.enabled ?? true,
    });
    const repo = this.deps.db.repo(ctx, Beat);
    if (await repo.findOneBy({ userId, name: fields.name })) throw new ConflictError(`You already have a beat named "${fields.name}"; pick another name or update that one.`);
    const beat = await repo.save(repo.create({ ...fields, userId, managed: false, consecutiveFailures: 0, lastRunAt: null, nextRunAt: this.nextRun(fields) }));
    await this.deps.scheduler.apply(beat);
    return beat;
  }

  async update(ctx: Ctx, id: string, patch: BeatPatch): Promise<Beat> {
    const beat = await this.getWritable(ctx, id);
    const timing =
      patch.cron !== undefined && patch.cron !== null ? { cron: patch.cron, at: null } : patch.at !== undefined && patch.at !== null ? { cron: null, at: patch.at } : {};
    const merged = {
      name: patch.name ?? beat.name,
      prompt: patch.text ?? beat.prompt,
      kind: patch.kind ?? beat.kind,
      cron: beat.cron,
      at: beat.at,
      ...timing,
      timezone: patch.timezone ?? beat.timezone,
      targetChannel: patch.targetChannel !== undefined ? patch.targetChannel : beat.targetChannel,
      targetChatId: patch.targetChatId !== undefined ? patch.targetChatId : beat.targetChatId,
      enabled: patch.enabled ?? beat.enabled,
    };
    // Unchanged timing is not re-checked against the frequency floor (an ADMIN may have set it).
    const timingChanged = 'cron' in timing || patch.timezone !== undefined;
    const fields = this.validate(ctx, merged, { checkFrequency: timingChanged, checkAt: timingChanged });
    if (fields.targetChatId !== beat.targetChatId || fields.targetChannel !== beat.targetChannel) {
      await this.checkTarget(ctx, beat.userId!, fields.targetChannel, fields.targetChatId);
    }
    const repo = this.deps.db.repo(ctx, Beat);
    if (fields.name !== beat.name && (await repo.findOneBy({ userId: beat.userId ?? '', name: fields.name }))) {
      throw new ConflictError(`A beat named "${fields.name}" exists already; pick another name.`);
    }
    // Enabling a beat again starts its failure count afresh.
    const consecutiveFailures = fields.enabled && !beat.enabled ? 0 : beat.consecutiveFailures;
    Object.assign(beat, fields, { consecutiveFailures, nextRunAt: this.nextRun(fields) });
    const saved = await repo.save(beat);
    await this.deps.scheduler.apply(saved);
    return saved;
  }

  async delete(ctx: Ctx, id: string): Promise<boolean> {
    const beat = await this.getWritable(ctx, id);
    await this.deps.db.repo(ctx, Beat).delete({ id: beat.id });
    await this.deps.scheduler.remove(beat);
    return true;
  }

  /** A beat the actor may run or change: own (TRUSTED and above) or any (ADMIN and above). */
  async getRunnable(ctx: Ctx, id: string): Promise<Beat> {
    this.requireBeatTrust(ctx);
    return this.get(ctx, id).catch(async (err: unknown) => {
      if (err instanceof NotFoundError && (await this.deps.db.repo(ctx, Beat).existsBy({ id }))) {
        throw new ForbiddenError('You may only run or change your own beats; ADMIN trust is needed for the beats of others.');
      }
      throw err;
    });
  }

  /** A beat the actor may change: own (TRUSTED and above) or any (ADMIN and above); never a managed one. */
  async getWritable(ctx: Ctx, id: string): Promise<Beat> {
    const beat = await this.getRunnable(ctx, id);
    if (beat.managed) {
      throw new ForbiddenError(`The beat "${beat.name}" comes from heartbeats.default.json; change it in that file (it is synced at every start).`);
    }
    return beat;
  }

  /** Below ADMIN a beat may only deliver to one of its owner's own chats (like send_message). */
  private async checkTarget(ctx: Ctx, userId: string, channel: string | null, chatId: string | null): Promise<void> {
    if (!channel || !chatId || access.seesEveryone(ctx)) return;
    const [identities = []] = await this.deps.users.identitiesOf(ctx, [userId]);
    const own = identities.some((i) => i.channel === channel && i.handle === chatId) || (this.deps.channels.readsSessionEvents(channel) && chatId === userId);
    if (!own) throw new ForbiddenError(`The chat ${channel}:${chatId} is not one of your own; delivering beats to other chats needs ADMIN trust. Leave the target out to use your principal chat.`);
  }

  /** Beat tools and mutations need TRUSTED (DESIGN §3). */
  private requireBeatTrust(ctx: Ctx): void {
    if (!trustAtLeast(ctx.trust, TrustLevel.TRUSTED)) {
      throw new ForbiddenError(`Creating and changing beats needs TRUSTED trust or higher; you are ${ctx.trust}.`);
    }
  }

  private validate(
    ctx: Ctx,
    f: { name: string; prompt: string; kind: BeatKind; cron: string | null; at: Date | null; timezone: string; targetChannel: string | null; targetChatId: string | null; enabled: boolean },
    checks: { checkFrequency: boolean; checkAt: boolean } = { checkFrequency: true, checkAt: true },
  ) {
    const name = f.name.trim();
    if (!NAME.test(name)) {
      throw new UserInputError(`Invalid beat name "${f.name}": use 1–100 letters, digits, spaces or _ . : - (starting with a letter or digit).`, 'name');
    }
    const prompt = f.prompt.trim();
    if (!prompt || prompt.length > 8000) throw new UserInputError('The text of a beat must have 1–8000 characters: the reminder text or the task instruction.', 'text');
    if (!Object.values(BeatKind).includes(f.kind)) throw new UserInputError(`Unknown kind "${String(f.kind)}": use reminder or task.`, 'kind');
    checkTimeZone(f.timezone);
    if (!f.cron === !f.at) throw new UserInputError('Give either a cron schedule (e.g. "0 7 * * *") or a one-shot time "at", not both and not neither.', 'cron');
    const now = this.clock.now();
    let cron: string | null = null;
    if (f.cron) {
      cron = checkCron(f.cron, f.timezone);
      if (checks.checkFrequency && !access.seesEveryone(ctx)) checkFrequency(cron, f.timezone, this.options.minIntervalMinutes, now);
    } else if (checks.checkAt) {
      checkAt(f.at!, now);
    }
    if (!f.targetChannel !== !f.targetChatId) {
      throw new UserInputError('Give the target as channel and chat id together (e.g. telegram + 123456789), or neither for your principal chat.', 'targetChatId');
    }
    if (f.targetChannel && !(CHANNELS as readonly string[]).includes(f.targetChannel)) {
      throw new UserInputError(`Unknown target channel "${f.targetChannel}": use one of ${CHANNELS.join(', ')}.`, 'targetChannel');
    }
    return { name, prompt, kind: f.kind, cron, at: cron ? null : f.at, timezone: f.timezone, targetChannel: f.targetChannel, targetChatId: f.targetChatId, enabled: f.enabled };
  }

  private nextRun(f: { cron: string | null; timezone: string; at: Date | null; enabled: boolean }): Date | null {
    return this.preview(f, 1)[0] ?? null;
  }
}
