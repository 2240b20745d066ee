import path from 'node:path';
import { ChangeCache } from '../../common/change-cache';
import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { NotFoundError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import type { PluginSettingService } from '../plugins';
import { LearnedSkill } from './learned-skill.entity';

/** The plugin-settings name of a skill: `setPluginSetting({ plugin: "skill:<name>", channel })`. */
export function skillPlugin(name: string): string {
  return `skill:${name}`;
}

/**
 * The synced skills: the list for ADMINs, the enable switch, and which skills a sender may use on a
 * channel (enabled, trust at or above `min_trust`, the channel in `channels` or none listed, and the
 * `skill:<name>` plugin setting not off for the channel). Read from this process's copy of the table,
 * dropped on every change in any process, so a switch takes effect at the next turn.
 */
export class SkillService {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly plugins: PluginSettingService,
    private readonly options: { /** `skills.dir` as configured, for showing where a skill's file is. */ dir?: string } = {},
  ) {
    this.enabledSkills = new ChangeCache(db.changes, ['skills']);
  }

  /** The enabled skills, while none changed in any process. */
  private readonly enabledSkills: ChangeCache<LearnedSkill[]>;

  /** Where the skill's file is: `<skills.dir>/<name>/SKILL.md`. */
  sourceFile(skill: Pick<LearnedSkill, 'name'>): string {
    return path.join(this.options.dir ?? 'plugins/skills', skill.name, 'SKILL.md');
  }

  /** Every skill, by name (ADMIN and above). */
  list(ctx: Ctx): Promise<LearnedSkill[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'skills');
    return this.db.repo(ctx, LearnedSkill).find({ order: { name: 'ASC' } });
  }

  async setEnabled(ctx: Ctx, name: string, enabled: boolean): Promise<LearnedSkill> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'skills');
    return this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, LearnedSkill);
      const skill = await repo.findOneBy({ name });
      if (!skill) throw new NotFoundError('Skill', name);
      const previous = skill.enabled;
      skill.enabled = enabled;
      const saved = await repo.save(skill);
      this.db.changed(tx, 'skills');
      await this.audit.record(tx, 'skill.set_enabled', { type: 'LearnedSkill', id: saved.id }, { name, enabled, previous });
      return saved;
    });
  }

  /** Skills the actor may use on `channel`, by name. GUESTs and anonymous senders get none (DESIGN §3). */
  async usableBy(ctx: Ctx, channel: string): Promise<LearnedSkill[]> {
    if (!trustAtLeast(ctx.trust, TrustLevel.MEMBER)) return [];
    const skills = await this.enabledSkills.get('', () => this.db.repo(ctx, LearnedSkill).find({ where: { enabled: true }, order: { name: 'ASC' } }));
    const allowed = skills.filter((skill) => trustAtLeast(ctx.trust, skill.minTrust) && (!skill.channels.length || skill.channels.includes(channel)));
    const active = await this.plugins.enabledMany(ctx, allowed.map((skill) => ({ plugin: skillPlugin(skill.name), fallback: true })), channel);
    return allowed.filter((skill) => active.get(skillPlugin(skill.name)));
  }

  /** One skill the actor may use on `channel`, or null. */
  async usableOne(ctx: Ctx, channel: string, name: string): Promise<LearnedSkill | null> {
    return (await this.usableBy(ctx, channel)).find((s) => s.name === name.toLowerCase()) ?? null;
  }
}
