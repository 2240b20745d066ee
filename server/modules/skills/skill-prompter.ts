import type { Ctx } from '../../common/ctx';
import type { SkillSource, SkillText } from '../agent';
import type { LearnedSkill } from './learned-skill.entity';
import type { SkillService } from './skill.service';

/** `skills.mode`: `auto` puts the usable skills in the prompt; `manual` lists them and `/skill` loads one. */
export type SkillMode = 'auto' | 'manual';

/** Port: the skill `/skill <name>` asked for, injected into the session's next turn only. */
export interface NextTurnSkills {
  set(sessionId: string, name: string): Promise<void>;
  /** Returns and forgets the skill asked for (null when none). */
  take(sessionId: string): Promise<string | null>;
}

function describe(skill: LearnedSkill): string {
  return skill.readWhen ? `${skill.description} (use it when: ${skill.readWhen})` : skill.description;
}

function full(skill: LearnedSkill): SkillText {
  return { name: skill.name, description: describe(skill), body: skill.body };
}

function listed(skill: LearnedSkill): SkillText {
  return { name: skill.name, description: describe(skill), body: `Not loaded. The user can load it for the next message with /skill ${skill.name}.` };
}

function size(s: SkillText): number {
  return s.name.length + s.description.length + s.body.length + 8;
}

/**
 * The agent's skill slot (DESIGN §2.4: skills the sender may use). In `auto` mode every usable skill, whole,
 * as long as they fit in `skills.max_chars` (by name; the rest is left out); in `manual` mode a list
 * of names and descriptions only. A skill asked for with `/skill <name>` comes first, whole, in either
 * mode, for that one turn.
 */
export class SkillPrompter implements SkillSource {
  constructor(
    private readonly skills: SkillService,
    private readonly next: NextTurnSkills,
    private readonly options: { mode: () => SkillMode; maxChars: () => number },
  ) {}

  async skillsFor(ctx: Ctx, channel: string, sessionId?: string): Promise<SkillText[]> {
    const requested = sessionId ? await this.next.take(sessionId) : null;
    const usable = await this.skills.usableBy(ctx, channel);
    if (!usable.length) return [];
    const budget = this.options.maxChars();
    const out: SkillText[] = [];
    let used = 0;
    const add = (s: SkillText, force = false) => {
      if (!force && used + size(s) > budget) return;
      out.push(s);
      used += size(s);
    };
    const asked = requested ? usable.find((s) => s.name === requested) : undefined;
    if (asked) add(full(asked), true);
    const manual = this.options.mode() === 'manual';
    for (const skill of usable) {
      if (skill === asked) continue;
      add(manual ? listed(skill) : full(skill));
    }
    if (out.length < usable.length) ctx.logger.debug({ left: usable.length - out.length }, 'skills left out of the prompt (skills.max_chars)');
    return out;
  }
}
