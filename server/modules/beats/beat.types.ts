import { registerEnumType } from 'type-graphql';

/** What a beat does when it fires (values are stored as is). */
export enum BeatKind {
  /** The text is delivered as is; no model call. */
  REMINDER = 'reminder',
  /** The text is an instruction for an agent turn in the beat's `cron:<beatId>` session. */
  TASK = 'task',
}

/** How a run ended (values are stored as is). */
export enum BeatRunStatus {
  RUNNING = 'running',
  OK = 'ok',
  FAILED = 'failed',
}

/** Why a run happened. */
export enum BeatTrigger {
  SCHEDULE = 'schedule',
  MANUAL = 'manual',
}

registerEnumType(BeatKind, { name: 'BeatKind', description: 'reminder: the text is sent as is; task: an agent turn runs the instruction.' });
registerEnumType(BeatRunStatus, { name: 'BeatRunStatus' });
registerEnumType(BeatTrigger, { name: 'BeatTrigger', description: 'schedule: a cron tick or the one-shot time; manual: runBeat.' });

/** Reserved beat names that run natively instead of a reminder or a turn. */
export const NATIVE_BEATS = { clearImages: '__clear_images__', backup: '__backup__' } as const;

/** Session key of a beat's task runs (DESIGN §4). */
export function beatSessionKey(beatId: string): string {
  return `cron:${beatId}`;
}
