import { AppError } from '../../common/errors';
import { TrustLevel } from '../../common/trust';
import type { SlashCommandService } from '../commands';
import type { CompactionService } from './compaction.service';
import type { DeferredCompaction } from './deferred-compaction';

/** `/compact [instructions]` and `/memory` (DESIGN §4). */
export function registerSummaryCommands(commands: SlashCommandService, deps: { compaction: CompactionService; deferred: DeferredCompaction }): void {
  commands.extend({
    names: ['compact'],
    minTrust: TrustLevel.MEMBER,
    help: '/compact [instructions] — summarise this session and continue in a new one',
    run: async (ctx, session, _args, raw) => {
      const instructions = raw.trim().replace(/^\/compact(?:@\S+)?/i, '').trim() || null;
      try {
        const outcome = await deps.deferred.compactOrQueue(ctx, session, instructions);
        if (!('result' in outcome)) return { reply: '🗜️ A turn is running: this session will be compacted as soon as it has finished, and you will be told.' };
        const { result } = outcome;
        const memories = result.flushed === 1 ? '1 new memory' : `${result.flushed} new memories`;
        return {
          reply: `🗜️ Compacted: ${memories} saved and a summary written; the new session starts with it and the last ${result.kept} message(s). /memory shows the summary.`,
          session: result.session,
        };
      } catch (err) {
        if (err instanceof AppError && err.code !== 'UPSTREAM_ERROR') throw err;
        ctx.logger.warn({ err, sessionId: session.id }, '/compact failed');
        return { reply: '⚠️ Compaction failed: the summarizer model could not answer. Nothing was changed; try again later.' };
      }
    },
  });
  commands.extend({
    names: ['memory'],
    minTrust: TrustLevel.MEMBER,
    help: "/memory — this session's summary",
    run: async (ctx, session) => {
      const summary = await deps.compaction.currentSummary(ctx, session.id);
      return { reply: summary ?? 'This session has no summary yet: it was not compacted. /compact writes one.' };
    },
  });
}
