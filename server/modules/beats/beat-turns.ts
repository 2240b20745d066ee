import { randomUUID } from 'node:crypto';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import type { AgentLoop, TurnProfile } from '../agent';
import { ChatKind, Message, MessageRole, MessageStatus, type SessionLifecycleService } from '../sessions';
import type { BeatTaskResult, BeatTaskRunner } from './beat.ports';
import { beatSessionKey } from './beat.types';

/** The beat tools, withheld from beat runs (a beat does not schedule beats). */
export const BEAT_TOOL_NAMES: ReadonlySet<string> = new Set(['set_beat', 'list_beats', 'update_beat', 'delete_beat']);

/** A beat's task turn: heartbeat model role and priority, no earlier messages, no beat tools, no summary. */
export const HEARTBEAT_TURN: TurnProfile = { role: 'heartbeat', priority: 'heartbeat', history: false, withheldTools: BEAT_TOOL_NAMES, summarize: false };

/**
 * Runs a task's instruction as a turn of its owner in the beat's own `cron:<beatId>` session (DESIGN §6):
 * the agent loop reads the owner's trust when the turn runs, so a demoted owner's beat runs with the new
 * trust. The reply is stored in that session (readable like any transcript) and returned; delivering it
 * is the caller's job.
 */
export class BeatTurns implements BeatTaskRunner {
  constructor(private readonly deps: { db: Db; lifecycle: SessionLifecycleService; agent: Pick<AgentLoop, 'runTurn'> }) {}

  async runTask(ctx: Ctx, beat: { id: string; prompt: string }, ownerId: string, signal: AbortSignal): Promise<BeatTaskResult> {
    const session = await this.deps.lifecycle.resolveActive(ctx, { key: beatSessionKey(beat.id), userId: ownerId, channel: 'cron', chatId: null, chatKind: ChatKind.DM });
    const repo = this.deps.db.repo(ctx, Message);
    const turnId = randomUUID();
    const instruction = await repo.save(
      repo.create({ sessionId: session.id, userId: ownerId, role: MessageRole.USER, content: beat.prompt, status: MessageStatus.PROCESSING, turnId, dedupeKey: null }),
    );
    await this.deps.agent.runTurn(ctx, session, [instruction], turnId, signal, HEARTBEAT_TURN);
    const reply = await repo.findOneBy({ dedupeKey: `reply:${turnId}` });
    if (!reply) return { ok: false, text: 'The turn ended without a reply (it was stopped).', sessionId: session.id, inputTokens: 0, outputTokens: 0 };
    return {
      ok: reply.status === MessageStatus.DONE,
      text: reply.content,
      sessionId: session.id,
      inputTokens: reply.inputTokens ?? 0,
      outputTokens: reply.outputTokens ?? 0,
    };
  }
}
