import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import type { TurnCompactor } from '../agent';
import { Message } from '../sessions';
import type { Session } from '../sessions';
import { MessageRole, SessionStatus } from '../sessions';
import type { CompactionReason, CompactionService } from './compaction.service';

/**
 * The safety valve of DESIGN §5, on in both summarizer modes: before a turn whose prompt reaches
 * `session.compact_threshold` × the main model's context window, and after the provider refused a
 * prompt as too long, the session is compacted and the turn's messages are answered again in the new
 * session, with a one-line notice each time. At most once per message: messages that a compaction moved
 * (older than their session) never trigger another one, so a context-length error is retried once.
 */
export class CompactionValve implements TurnCompactor {
  constructor(
    private readonly compaction: CompactionService,
    private readonly db: Db,
    private readonly threshold: () => number,
  ) {}

  async beforeTurn(ctx: Ctx, session: Session, batch: Message[], prompt: { estimatedTokens: number; contextWindow: number }): Promise<boolean> {
    if (!this.mayCompact(session, batch)) return false;
    if (prompt.estimatedTokens < this.threshold() * prompt.contextWindow) return false;
    const share = Math.round((100 * prompt.estimatedTokens) / prompt.contextWindow);
    return this.run(ctx, session, batch, 'context-threshold', `🗜️ This conversation reached about ${share}% of the model's context window, so I compacted it: the summary and the last turns continue in a new session (/memory shows the summary).`);
  }

  async afterContextLengthError(ctx: Ctx, session: Session, batch: Message[], turnId: string): Promise<boolean> {
    if (!this.mayCompact(session, batch)) return false;
    // Tools of this turn already ran; answering the message again would run them twice.
    if (await this.db.repo(ctx, Message).existsBy({ sessionId: session.id, turnId, role: MessageRole.TOOL })) return false;
    return this.run(ctx, session, batch, 'context-length', "🗜️ The conversation no longer fit the model's context window, so I compacted it into a new session and am retrying your message once.");
  }

  private mayCompact(session: Session, batch: Message[]): boolean {
    // Ids are time-ordered: a message older than its session was moved there by a compaction.
    return session.status === SessionStatus.ACTIVE && batch.length > 0 && !batch.some((m) => m.id < session.id);
  }

  private async run(ctx: Ctx, session: Session, batch: Message[], reason: CompactionReason, notice: string): Promise<boolean> {
    try {
      await this.compaction.compact(ctx, session, { reason, carry: batch, priority: 'interactive', notice });
      return true;
    } catch (err) {
      ctx.logger.warn({ err, sessionId: session.id, reason }, 'compaction failed; the turn goes on without it');
      return false;
    }
  }
}
