import type { SerializedCtx } from '../server/common/ctx';
import type { HousekeepingResult } from '../server/modules/maintenance';
import type { ChatResult, ModelCallInput, WireModelError } from '../server/modules/models';
import type { SkillSyncReport } from '../server/modules/skills';
import type { ExportResult } from '../server/modules/userdata';
import type { SpeakJob, TranscribeJob, TranscribeOutcome } from '../server/modules/voice';

/**
 * Queue names (BullMQ). Model calls get one queue per provider (`model-calls.<provider>`), deliveries one
 * per platform channel (`outbound.<channel>`), served by the process that holds the channel.
 */
export const QUEUES = {
  turns: 'turns',
  outbound: (channel: string) => `outbound.${channel}`,
  summarizer: 'summarizer',
  maintenance: 'maintenance',
  heartbeat: 'heartbeat',
  skills: 'skills',
  exports: 'exports',
  ingest: 'ingest',
  voice: 'voice',
  speech: 'speech',
  memory: 'memory',
  modelCalls: (provider: string) => `model-calls.${provider}`,
} as const;

/** Job names and their typed payloads and results. */
export interface JobMap {
  'turn.drain': { data: { ctx: SerializedCtx; sessionId: string; messageId: string }; result: { turns: number } };
  'model.call': {
    /**
     * `rateLimited`: how often the provider answered 429 to this call so far. `failed`: a direct call's
     * final failure, kept as a failed job for the queue view (its first run fails with it at once; a retry
     * of the job runs the call).
     */
    data: { ctx: SerializedCtx; input: ModelCallInput; provider: string; model: string; rateLimited?: number; failed?: WireModelError };
    result: ChatResult;
  };
  'outbound.deliver': {
    /** Serves the chat's outbound mailbox; `key` is the message this job was added for. */
    data: { ctx: SerializedCtx; channel: string; chatId: string; key: string };
    result: { sent: number; skipped: number };
  };
  'summarizer.exchange': {
    /**
     * Condenses the session's waiting exchanges into memories (`session.summarizer_mode: auto`). Jobs queued
     * before batching carry their one exchange in `userMessageIds` + `replyMessageId`. With `quietMs`, the job
     * waits on (delayed) until the newest waiting exchange is that old.
     */
    data: { ctx: SerializedCtx; sessionId: string; userMessageIds?: string[]; replyMessageId?: string; quietMs?: number };
    result: { memories: number; exchanges: number };
  };
  'beat.run': {
    /** One tick of a beat's schedule (or its one-shot time `at`, ms epoch); the job id is the tick. */
    data: { beatId: string; at?: number };
    result: { runId: string | null };
  };
  'maintenance.run': {
    /** Retention of archived sessions, overdue tool approvals. */
    data: Record<string, never>;
    result: HousekeepingResult;
  };
  'user.export': {
    /** Builds the export archive of one user (GraphQL `exportUserData`); progress: `{ done, total }` tables. */
    data: { ctx: SerializedCtx; exportId: string; userId: string };
    result: ExportResult;
  };
  'document.ingest': {
    /** Extracts, chunks, embeds and indexes one document; progress: percent (0–100). */
    data: { ctx: SerializedCtx; documentId: string };
    result: { status: string; chunks: number };
  };
  'voice.transcribe': {
    /** Transcribes a stashed voice note and submits the transcript as the sender's message. */
    data: TranscribeJob;
    result: { outcome: TranscribeOutcome };
  };
  'voice.speak': {
    /** Speaks a reply and hands the voice message to its chat (or the text, when speech fails). */
    data: SpeakJob;
    result: { outcome: 'voice' | 'text' };
  };
  'skills.sync': {
    /** Mirrors the skills folder into `learned_skills` (GraphQL `syncSkills`); progress: `{ done, total }`. */
    data: { ctx: SerializedCtx };
    result: SkillSyncReport;
  };
  'memory.reindex': {
    /** Rebuilds the memory search index, of every memory or one user's (GraphQL `reindexMemories`); progress: `{ done, total }`. */
    data: { ctx: SerializedCtx; userId: string | null };
    result: { indexed: number; total: number; embedded: number };
  };
}

export type JobName = keyof JobMap;
export type JobData<N extends JobName> = JobMap[N]['data'];
export type JobResult<N extends JobName> = JobMap[N]['result'];

/** BullMQ priorities: lower runs first. */
export const PRIORITY = { interactive: 1, heartbeat: 5, summarizer: 10 } as const;
