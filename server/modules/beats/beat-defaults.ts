import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { AppError } from '../../common/errors';
import { checkAt, checkCron, checkTimeZone } from './beat-schedule';
import { BeatKind, NATIVE_BEATS } from './beat.types';

/** One managed beat as heartbeats.default.json declares it, validated. */
export interface DefaultBeat {
  name: string;
  kind: BeatKind;
  text: string;
  cron: string | null;
  at: Date | null;
  timezone: string;
  targetChannel: string | null;
  targetChatId: string | null;
  enabled: boolean;
}

const NATIVE_NAMES = new Set<string>(Object.values(NATIVE_BEATS));

const entrySchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    kind: z.enum(['reminder', 'task']).default('task'),
    text: z.string().trim().min(1).max(8000).optional(),
    cron: z.string().min(1).max(100).optional(),
    at: z.string().min(1).optional(),
    timezone: z.string().min(1).max(64).optional(),
    target: z.object({ channel: z.string().min(1).max(32), chat_id: z.string().min(1).max(200) }).strict().optional(),
    enabled: z.boolean().default(true),
  })
  .strict();

/** What reading the file gave: the valid entries, and a warning (naming the entry and the fix) per skipped one. */
export interface DefaultBeatsFile {
  beats: DefaultBeat[];
  warnings: string[];
}

const EXAMPLE = '{ "name": "morning", "kind": "reminder", "text": "Stand up!", "cron": "0 7 * * 1-5", "timezone": "Europe/Berlin" }';

/**
 * Reads heartbeats.default.json: `{ "beats": [ … ] }` or a bare array. A missing file means no managed
 * beats. A file that is not valid JSON throws (nothing is synced rather than everything removed); a bad
 * entry is skipped with a warning.
 */
export function readDefaultBeats(file: string, defaultTimezone: string, now: Date): DefaultBeatsFile {
  if (!existsSync(file)) return { beats: [], warnings: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file} is not valid JSON (${(err as Error).message}); fix the file, e.g. { "beats": [ ${EXAMPLE} ] }. Managed beats were left as they are.`);
  }
  const list = Array.isArray(raw) ? raw : raw && typeof raw === 'object' && Array.isArray((raw as { beats?: unknown }).beats) ? (raw as { beats: unknown[] }).beats : null;
  if (!list) throw new Error(`${file} must hold { "beats": [ … ] } (or an array of beats), e.g. { "beats": [ ${EXAMPLE} ] }. Managed beats were left as they are.`);
  const beats: DefaultBeat[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  list.forEach((entry, index) => {
    const label = `entry ${index + 1}${entry && typeof entry === 'object' && typeof (entry as { name?: unknown }).name === 'string' ? ` ("${(entry as { name: string }).name}")` : ''}`;
    const skip = (problem: string, fix: string) => warnings.push(`${file}: ${label} skipped: ${problem}. Fix: ${fix}`);
    const parsed = entrySchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return skip(`${issue.path.join('.') || 'entry'}: ${issue.message}`, `write it like ${EXAMPLE}`);
    }
    const e = parsed.data;
    if (seen.has(e.name)) return skip(`the name "${e.name}" is used by an earlier entry`, 'give every entry its own name');
    const native = NATIVE_NAMES.has(e.name);
    if (!native && e.name.startsWith('__')) return skip(`names starting with "__" are reserved for built-in beats (${[...NATIVE_NAMES].join(', ')})`, 'rename the entry');
    if (!native && !e.text) return skip('"text" is missing', 'add the reminder text or the task instruction as "text"');
    if (!e.cron === !e.at) return skip('give either "cron" or "at"', 'add "cron": "0 7 * * *" (with "timezone") or "at": "2030-01-31T07:00:00Z"');
    const timezone = e.timezone ?? defaultTimezone;
    try {
      checkTimeZone(timezone);
      const cron = e.cron ? checkCron(e.cron, timezone) : null;
      const at = e.at ? new Date(e.at) : null;
      if (at) checkAt(at, now);
      seen.add(e.name);
      beats.push({
        name: e.name,
        kind: e.kind as BeatKind,
        text: e.text ?? e.name,
        cron,
        at,
        timezone,
        targetChannel: e.target?.channel ?? null,
        targetChatId: e.target?.chat_id ?? null,
        enabled: e.enabled,
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const [problem, ...fix] = err.message.split(/(?<=[.;]) (?=Use|Give|give)/);
      skip(problem!.replace(/[.;]$/, ''), fix.join(' ') || 'correct the value');
    }
  });
  return { beats, warnings };
}
