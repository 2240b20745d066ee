import { z } from 'zod';
import type { Ctx } from '../../common/ctx';
import { AppError, ForbiddenError } from '../../common/errors';
import { TrustLevel } from '../../common/trust';
import { defineTool, ToolRefusedError, type Tool } from '../tools';
import type { BeatPatch, BeatService } from './beat.service';
import type { Beat } from './beat.entity';
import { BeatKind } from './beat.types';

const timing = {
  cron: z.string().min(1).max(100).optional().describe('Cron expression, e.g. "0 7 * * *" (07:00 daily) or "30 8 * * 1-5" (08:30 on weekdays).'),
  at: z.string().min(1).max(40).optional().describe('One-shot time instead of cron, ISO 8601, e.g. "2030-01-31T07:00:00Z".'),
  timezone: z.string().min(1).max(64).optional().describe('IANA time zone of the cron expression, e.g. "Europe/Berlin".'),
};
const target = {
  channel: z.string().min(1).max(32).optional().describe('Target channel (telegram, whatsapp, web, tui); leave out for the principal chat.'),
  chat_id: z.string().min(1).max(200).optional().describe('Target chat id on that channel (for a DM: the handle).'),
};

const setSchema = z
  .object({
    name: z.string().min(1).max(100).describe('Short unique name, e.g. "morning briefing".'),
    text: z.string().min(1).max(8000).describe('Reminder text (kind reminder) or the instruction to carry out (kind task).'),
    kind: z.enum(['reminder', 'task']).optional().describe('reminder: send the text as is; task: run it as an instruction. Default task.'),
    ...timing,
    ...target,
    enabled: z.boolean().optional(),
  })
  .strict();

const ref = { beat: z.string().min(1).max(100).describe('Id or name of the beat.') };
const updateSchema = z
  .object({
    ...ref,
    name: z.string().min(1).max(100).optional(),
    text: z.string().min(1).max(8000).optional(),
    kind: z.enum(['reminder', 'task']).optional(),
    ...timing,
    ...target,
    enabled: z.boolean().optional(),
  })
  .strict();

/** A beat as the tools show it to the model. */
export function describeBeat(beat: Beat, nextRuns: Date[]): Record<string, unknown> {
  return {
    id: beat.id,
    name: beat.name,
    kind: beat.kind,
    text: beat.prompt,
    schedule: beat.cron ? `${beat.cron} (${beat.timezone})` : `once at ${beat.at?.toISOString()}`,
    target: beat.targetChannel ? `${beat.targetChannel}:${beat.targetChatId}` : 'principal chat',
    enabled: beat.enabled,
    managed: beat.managed,
    lastRunAt: beat.lastRunAt?.toISOString() ?? null,
    nextRuns: nextRuns.map((d) => d.toISOString()),
  };
}

/** Policy refusals are audited as refused tool calls; input errors go back to the model as errors. */
async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ForbiddenError) throw new ToolRefusedError(err.message);
    if (err instanceof AppError) throw new Error(err.message);
    throw err;
  }
}

function patchOf(a: z.output<typeof updateSchema> | z.output<typeof setSchema>): BeatPatch {
  const patch: BeatPatch = {};
  if (a.name !== undefined) patch.name = a.name;
  if (a.text !== undefined) patch.text = a.text;
  if (a.kind !== undefined) patch.kind = a.kind as BeatKind;
  if (a.cron !== undefined) patch.cron = a.cron;
  if (a.at !== undefined) patch.at = new Date(a.at);
  if (a.timezone !== undefined) patch.timezone = a.timezone;
  if (a.channel !== undefined || a.chat_id !== undefined) {
    patch.targetChannel = a.channel ?? null;
    patch.targetChatId = a.chat_id ?? null;
  }
  if (a.enabled !== undefined) patch.enabled = a.enabled;
  return patch;
}

/**
 * The beat tools (DESIGN §3, §6): TRUSTED and above on their own beats, ADMIN and above on everyone's.
 * The pipeline checks the tool's floor; the service checks ownership when the tool runs.
 */
export function createBeatTools(beats: BeatService): Tool[] {
  const show = (beat: Beat) => describeBeat(beat, beats.preview(beat));
  const resolve = (ctx: Ctx, idOrName: string) => beats.resolve(ctx, idOrName);
  return [
    defineTool({
      name: 'set_beat',
      description: 'Schedules a beat: a reminder sent as is, or a task you carry out, on a cron schedule or once; the result goes to the chosen chat or the principal chat.',
      schema: setSchema,
      minTrust: TrustLevel.TRUSTED,
      summarizeArgs: (a) => `name=${a.name} ${a.cron ? `cron=${a.cron}` : `at=${a.at ?? '?'}`}`,
      run: (tc, a) => guarded(async () => show(await beats.create(tc.ctx, { ...patchOf(a), name: a.name, text: a.text }))),
    }),
    defineTool({
      name: 'list_beats',
      description: 'Lists your beats (everyone\'s for ADMIN) with their schedule and next runs.',
      schema: z.object({}).strict(),
      minTrust: TrustLevel.TRUSTED,
      run: (tc) => guarded(async () => ({ beats: (await beats.findMany(tc.ctx)).map(show) })),
    }),
    defineTool({
      name: 'update_beat',
      description: 'Changes a beat (by id or name): text, kind, schedule, target, enabled.',
      schema: updateSchema,
      minTrust: TrustLevel.TRUSTED,
      summarizeArgs: (a) => `beat=${a.beat}`,
      run: (tc, a) => guarded(async () => show(await beats.update(tc.ctx, (await resolve(tc.ctx, a.beat)).id, patchOf(a)))),
    }),
    defineTool({
      name: 'delete_beat',
      description: 'Deletes a beat (by id or name).',
      schema: z.object(ref).strict(),
      minTrust: TrustLevel.TRUSTED,
      summarizeArgs: (a) => `beat=${a.beat}`,
      run: (tc, a) => guarded(async () => ({ deleted: await beats.delete(tc.ctx, (await resolve(tc.ctx, a.beat)).id) })),
    }),
  ];
}
