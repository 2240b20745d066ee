import type { Ctx } from '../../common/ctx';
import { TrustLevel } from '../../common/trust';
import type { VoiceConfig } from '../../config';
import type { Db } from '../../persistence/db';
import type { CommandResult, SlashCommandService } from '../commands';
import { VoicePreference, type VoiceReplyMode } from './voice-preference.entity';

const WORDS: Record<string, VoiceReplyMode> = { on: 'always', always: 'always', off: 'never', never: 'never', auto: 'when_voice', when_voice: 'when_voice' };
const DESCRIBE: Record<VoiceReplyMode, string> = {
  always: 'I answer every message with a voice message too',
  never: 'I answer in text only',
  when_voice: 'I answer voice notes with a voice message, text with text',
};

/** Per-user spoken-reply choice, stored in `voice_preferences`. */
export class VoicePreferences {
  constructor(private readonly db: Db) {}

  /** The user's own choice, or null when they follow the server's `voice.reply`. */
  async get(ctx: Ctx, userId: string): Promise<VoiceReplyMode | null> {
    return (await this.db.repo(ctx, VoicePreference).findOneBy({ userId }))?.reply ?? null;
  }

  async set(ctx: Ctx, userId: string, reply: VoiceReplyMode): Promise<void> {
    await this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, VoicePreference);
      const row = await repo.findOneBy({ userId });
      if (row) await repo.update({ id: row.id }, { reply, updatedAt: new Date() });
      else await repo.save(repo.create({ userId, reply }));
    });
  }
}

/** `/voice on|off|auto` (MEMBER and above): spoken replies always, never, or to voice notes; `/voice` shows the choice. */
export function registerVoiceCommands(commands: SlashCommandService, deps: { preferences: VoicePreferences; config: () => VoiceConfig; speechConfigured: boolean }): void {
  commands.extend({
    names: ['voice'],
    minTrust: TrustLevel.MEMBER,
    help: '/voice on|off|auto — spoken replies always, never, or to voice notes',
    run: (ctx, _session, args) => voiceCommand(ctx, deps, args),
  });
}

async function voiceCommand(ctx: Ctx, deps: { preferences: VoicePreferences; config: () => VoiceConfig; speechConfigured: boolean }, args: string[]): Promise<CommandResult> {
  const userId = ctx.userId;
  if (!userId) return { reply: 'Only users have voice settings.' };
  const note = deps.speechConfigured ? '' : '\n(No speech model is configured on this server yet, so replies stay text for now.)';
  const word = args[0]?.toLowerCase();
  if (!word) {
    const own = await deps.preferences.get(ctx, userId);
    const mode = own ?? deps.config().reply;
    return { reply: `Voice replies: ${DESCRIBE[mode]}${own ? '' : ' (server default)'}. Change with /voice on, /voice off or /voice auto.${note}` };
  }
  const mode = WORDS[word];
  if (!mode || args.length > 1) return { reply: 'Usage: /voice on (always speak), /voice off (text only), /voice auto (speak when you send a voice note).' };
  await deps.preferences.set(ctx, userId, mode);
  return { reply: `Voice replies: ${DESCRIBE[mode]}.${note}` };
}
