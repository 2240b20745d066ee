import { TrustLevel } from '../../common/trust';
import type { SlashCommandService } from '../commands';
import type { BeatService } from './beat.service';
import type { Beat } from './beat.entity';

function line(beat: Beat, next: Date | undefined): string {
  const when = beat.cron ? `${beat.cron} (${beat.timezone})` : `once at ${beat.at?.toISOString() ?? '?'}`;
  const state = beat.enabled ? (next ? `next ${next.toISOString()}` : 'no run ahead') : beat.consecutiveFailures ? `disabled after ${beat.consecutiveFailures} failures` : 'disabled';
  return `• ${beat.name}${beat.managed ? ' [managed]' : ''} — ${beat.kind}, ${when}; ${state}`;
}

/** `/beats` (DESIGN §4): the sender's beats (everyone's for ADMIN) with their schedule and next run. */
export function registerBeatCommands(commands: SlashCommandService, beats: BeatService): void {
  commands.extend({
    names: ['beats'],
    minTrust: TrustLevel.MEMBER,
    help: '/beats — your scheduled beats and their next runs',
    run: async (ctx) => {
      const list = await beats.findMany(ctx);
      if (!list.length) {
        return { reply: 'You have no beats. TRUSTED users can ask me to schedule one, e.g. "remind me every weekday at 7:00 to stand up".' };
      }
      return { reply: ['Your beats:', ...list.map((b) => line(b, beats.preview(b, 1)[0]))].join('\n') };
    },
  });
}
