import { TrustLevel } from '../../common/trust';
import type { SlashCommandService } from '../commands';
import type { NextTurnSkills, SkillMode } from './skill-prompter';
import type { SkillService } from './skill.service';

/** `/skills` (what this sender may use here) and `/skill <name>` (load one for the next message). */
export function registerSkillCommands(commands: SlashCommandService, deps: { skills: SkillService; next: NextTurnSkills; mode: () => SkillMode }): void {
  commands.extend({
    names: ['skills'],
    minTrust: TrustLevel.MEMBER,
    help: '/skills — skills you may use here',
    run: async (ctx, session) => {
      const usable = await deps.skills.usableBy(ctx, session.channel);
      if (!usable.length) return { reply: 'No skills are available to you here.' };
      const how =
        deps.mode() === 'manual'
          ? 'Load one for your next message with /skill <name>.'
          : 'I use them by myself when they fit; /skill <name> makes sure one is used for your next message.';
      return { reply: ['Skills you may use here:', ...usable.map((s) => `• ${s.name} — ${s.description}`), how].join('\n') };
    },
  });
  commands.extend({
    names: ['skill'],
    minTrust: TrustLevel.MEMBER,
    help: '/skill <name> — use a skill for your next message',
    run: async (ctx, session, args) => {
      const name = args[0];
      if (!name) return { reply: 'Usage: /skill <name>. /skills lists the skills you may use.' };
      const skill = await deps.skills.usableOne(ctx, session.channel, name);
      if (!skill) return { reply: `No skill "${name}" is available to you here. /skills lists the ones you may use.` };
      await deps.next.set(session.id, skill.name);
      return { reply: `Skill "${skill.name}" is loaded for your next message.` };
    },
  });
}
