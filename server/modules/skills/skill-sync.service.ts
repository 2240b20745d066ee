import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ctx } from '../../common/ctx';
import { In } from 'typeorm';
import type { Db } from '../../persistence/db';
import { LearnedSkill } from './learned-skill.entity';
import { MAX_SKILL_BYTES, parseSkillFile, SkillFileError, type SkillDefinition } from './skill-file';

/** A skill folder that could not be loaded. */
export interface SkillProblem {
  folder: string;
  message: string;
}

/** What one sync changed in `learned_skills`. */
export interface SkillSyncReport {
  added: string[];
  updated: string[];
  removed: string[];
  unchanged: number;
  problems: SkillProblem[];
}

/** Progress of a running sync: `done` of `total` folders read. */
export type SkillSyncProgress = (done: number, total: number) => void | Promise<void>;

export const SKILL_FILE = 'SKILL.md';

/**
 * Mirrors the skills folder (`skills.dir`, one `<name>/SKILL.md` each) into `learned_skills`: new files
 * are added, changed ones updated (the `enabled` switch is kept), rows whose folder is gone are removed.
 * A broken file is reported with how to fix it and skipped; its last good version, if any, stays.
 */
export class SkillSyncService {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    readonly dir: string,
  ) {}

  /** Runs one sync, after any sync already running in this process. */
  sync(ctx: Ctx, onProgress?: SkillSyncProgress): Promise<SkillSyncReport> {
    const run = this.chain.then(
      () => this.syncNow(ctx, onProgress),
      () => this.syncNow(ctx, onProgress),
    );
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async syncNow(ctx: Ctx, onProgress?: SkillSyncProgress): Promise<SkillSyncReport> {
    const folders = await this.folders();
    const found = new Map<string, SkillDefinition>();
    const problems: SkillProblem[] = [];
    const broken = new Set<string>();
    let done = 0;
    await onProgress?.(0, folders.length);
    for (const folder of folders) {
      try {
        const def = await this.read(folder);
        if (def) found.set(def.name, def);
      } catch (err) {
        const message = err instanceof SkillFileError ? err.message : `cannot read ${SKILL_FILE}: ${(err as Error).message}`;
        problems.push({ folder, message: `${path.join(folder, SKILL_FILE)}: ${message}` });
        broken.add(folder);
      }
      done += 1;
      await onProgress?.(done, folders.length);
    }
    for (const p of problems) ctx.logger.warn({ skill: p.folder }, `skill not loaded — ${p.message}`);
    const report: SkillSyncReport = { added: [], updated: [], removed: [], unchanged: 0, problems };
    const syncedAt = new Date();
    const problemOf = new Map(problems.map((p) => [p.folder, p.message]));
    await this.db.withTransaction(ctx, async (tx) => {
      this.db.changed(tx, 'skills');
      const repo = this.db.repo(tx, LearnedSkill);
      const rows = new Map((await repo.find()).map((r) => [r.name, r]));
      for (const def of found.values()) {
        const row = rows.get(def.name);
        if (row && row.contentHash === def.contentHash) {
          report.unchanged += 1;
          continue;
        }
        const { name, description, readWhen, minTrust, channels, body, contentHash } = def;
        await repo.save(Object.assign(row ?? repo.create({ enabled: true }), { name, description, readWhen, minTrust, channels, body, contentHash, syncedAt, syncError: null }));
        (row ? report.updated : report.added).push(def.name);
      }
      // The time of this sync on every skill it read, and the parse error on those whose file broke.
      const unchanged = [...found.values()].filter((d) => rows.get(d.name)?.contentHash === d.contentHash).map((d) => d.name);
      if (unchanged.length) await repo.update({ name: In(unchanged) }, { syncedAt, syncError: null });
      for (const [folder, message] of problemOf) if (rows.has(folder)) await repo.update({ name: folder }, { syncedAt, syncError: message });
      for (const row of rows.values()) {
        if (found.has(row.name) || broken.has(row.name)) continue;
        await repo.delete({ id: row.id });
        report.removed.push(row.name);
      }
    });
    if (report.added.length || report.updated.length || report.removed.length) {
      ctx.logger.info({ added: report.added, updated: report.updated, removed: report.removed }, 'skills synced');
    }
    return report;
  }

  /** Skill folders (directories, no symlinks), sorted; none when the folder does not exist. */
  private async folders(): Promise<string[]> {
    try {
      const entries = await readdir(this.dir, { withFileTypes: true });
      return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** The folder's SKILL.md parsed; null when the folder has none (not a skill). */
  private async read(folder: string): Promise<SkillDefinition | null> {
    const file = path.join(this.dir, folder, SKILL_FILE);
    let stat;
    try {
      stat = await lstat(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (!stat.isFile()) throw new SkillFileError(`${SKILL_FILE} must be a regular file (not a link or a folder).`);
    if (stat.size > MAX_SKILL_BYTES) throw new SkillFileError(`the file is larger than ${MAX_SKILL_BYTES / 1024} KiB: shorten it.`);
    return parseSkillFile(folder, await readFile(file, 'utf8'));
  }
}
