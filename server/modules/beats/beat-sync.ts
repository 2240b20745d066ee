import { SYSTEM_CLOCK, type Clock } from '../../common/clock';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import { readDefaultBeats, type DefaultBeat } from './beat-defaults';
import { previewRuns } from './beat-schedule';
import { Beat } from './beat.entity';
import type { BeatScheduler } from './beat.ports';

export interface BeatSyncResult {
  created: string[];
  updated: string[];
  removed: string[];
  /** One per skipped entry, naming the entry and the fix. */
  warnings: string[];
}

export interface BeatSyncOptions {
  /** `beats.default_file`. */
  file: string;
  /** `beats.timezone`. */
  defaultTimezone: string;
  /** Built-in managed beats that come from the config rather than the file (the scheduled backup). */
  builtIn?: () => DefaultBeat[];
}

const FIELDS = ['kind', 'prompt', 'cron', 'at', 'timezone', 'targetChannel', 'targetChatId', 'enabled'] as const;

/**
 * Keeps the managed beats equal to heartbeats.default.json (DESIGN §6) and the heartbeat queue equal to
 * the beats table. Beats of users are never touched by the file. Run at every start of a worker process;
 * every step is idempotent, so two processes starting together end in the same state.
 */
export class BeatSync {
  constructor(
    private readonly deps: { db: Db; scheduler: BeatScheduler; clock?: Clock },
    private readonly options: BeatSyncOptions,
  ) {}

  /** Creates, updates and removes managed beats to match the file; a bad entry is skipped with a warning. */
  async syncDefaults(ctx: Ctx): Promise<BeatSyncResult> {
    const now = (this.deps.clock ?? SYSTEM_CLOCK).now();
    const file = readDefaultBeats(this.options.file, this.options.defaultTimezone, now);
    for (const beat of this.options.builtIn?.() ?? []) if (!file.beats.some((b) => b.name === beat.name)) file.beats.push(beat);
    for (const warning of file.warnings) ctx.logger.warn({ file: this.options.file }, warning);
    const result: BeatSyncResult = { created: [], updated: [], removed: [], warnings: file.warnings };
    const repo = this.deps.db.repo(ctx, Beat);
    const managed = await repo.find({ where: { managed: true }, order: { id: 'ASC' } });
    const byName = new Map<string, Beat>();
    for (const beat of managed) {
      // A duplicate left by an earlier race is removed with the stale ones below.
      if (!byName.has(beat.name)) byName.set(beat.name, beat);
    }
    const wanted = new Set(file.beats.map((b) => b.name));
    for (const entry of file.beats) {
      const fields = fieldsOf(entry, now);
      const existing = byName.get(entry.name);
      if (!existing) {
        const beat = await repo.save(repo.create({ ...fields, name: entry.name, userId: null, managed: true, consecutiveFailures: 0, lastRunAt: null }));
        await this.deps.scheduler.apply(beat);
        result.created.push(entry.name);
        continue;
      }
      const changed = FIELDS.some((k) => !same(existing[k], fields[k]));
      if (changed) {
        Object.assign(existing, fields, { consecutiveFailures: fields.enabled && !existing.enabled ? 0 : existing.consecutiveFailures });
        await repo.save(existing);
        result.updated.push(entry.name);
      }
      await this.deps.scheduler.apply(existing);
    }
    for (const beat of managed) {
      if (wanted.has(beat.name) && byName.get(beat.name) === beat) continue;
      await repo.delete({ id: beat.id });
      await this.deps.scheduler.remove(beat);
      result.removed.push(beat.name);
    }
    if (result.created.length || result.updated.length || result.removed.length) {
      ctx.logger.info({ file: this.options.file, created: result.created, updated: result.updated, removed: result.removed }, 'synced managed beats');
    }
    return result;
  }

  /** Applies every beat's schedule and drops schedules whose beat is gone (after a restart or a crash). */
  async reconcile(ctx: Ctx): Promise<void> {
    const beats = await this.deps.db.repo(ctx, Beat).find();
    const ids = new Set(beats.map((b) => b.id));
    for (const beat of beats) await this.deps.scheduler.apply(beat);
    for (const id of await this.deps.scheduler.scheduledBeatIds()) {
      if (!ids.has(id)) await this.deps.scheduler.remove({ id, cron: null, timezone: 'UTC', at: null, enabled: false });
    }
  }
}

function fieldsOf(entry: DefaultBeat, now: Date) {
  const fields = {
    kind: entry.kind,
    prompt: entry.text,
    cron: entry.cron,
    at: entry.at,
    timezone: entry.timezone,
    targetChannel: entry.targetChannel,
    targetChatId: entry.targetChatId,
    enabled: entry.enabled,
  };
  return { ...fields, nextRunAt: entry.enabled ? (previewRuns(fields, now, 1)[0] ?? null) : null };
}

function same(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date) return (a as Date | null)?.getTime?.() === (b as Date | null)?.getTime?.();
  return a === b;
}
