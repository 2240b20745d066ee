import { createHash } from 'node:crypto';
import { z } from 'zod';
import { TrustLevel } from '../../common/trust';

/** Folder (and skill) names: lowercase letters, digits, `-` and `_`, starting with a letter or digit. */
export const SKILL_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Largest SKILL.md read; larger files are reported as broken. */
export const MAX_SKILL_BYTES = 64 * 1024;

/** A SKILL.md that parsed. */
export interface SkillDefinition {
  name: string;
  description: string;
  readWhen: string | null;
  minTrust: TrustLevel;
  /** Channels the skill is active on; empty means all. */
  channels: string[];
  body: string;
  contentHash: string;
}

/** A SKILL.md that did not parse: why, and how to fix it. */
export class SkillFileError extends Error {
  override name = 'SkillFileError';
}

const trustNames = Object.values(TrustLevel) as [TrustLevel, ...TrustLevel[]];

const frontMatter = z
  .object({
    name: z.string().regex(SKILL_NAME, 'use lowercase letters, digits, - and _ (at most 64)').optional(),
    description: z.string().trim().min(1, 'say in one line what the skill is for').max(500),
    read_when: z.string().trim().max(500).nullish(),
    min_trust: z
      .string()
      .transform((v) => v.trim().toUpperCase())
      .pipe(z.enum(trustNames, { message: `use one of ${trustNames.join(', ')}` }))
      .default(TrustLevel.MEMBER),
    channels: z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : [v]).map((c) => c.trim().toLowerCase()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'use channel names like telegram, whatsapp, web, tui')))
      .default([]),
  })
  .strict();

/**
 * Parses a SKILL.md: YAML front matter between `---` lines (`name`, `description`, `read_when`,
 * `min_trust` default MEMBER, `channels` default all), then the Markdown body the model reads.
 * `folder` is the skill's folder name; a `name` in the front matter must match it.
 */
export function parseSkillFile(folder: string, text: string): SkillDefinition {
  if (!SKILL_NAME.test(folder)) {
    throw new SkillFileError(`folder "${folder}" is not a valid skill name: rename it to lowercase letters, digits, - and _.`);
  }
  const match = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) throw new SkillFileError('no front matter: start the file with a line "---", the keys (name, description, …), and another "---".');
  let raw: unknown;
  try {
    // The YAML parser (≈ 70 files) is loaded with the first skill file, not at start.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    raw = (require('yaml') as typeof import('yaml')).parse(match[1]!);
  } catch (err) {
    throw new SkillFileError(`the front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new SkillFileError('the front matter must be "key: value" lines.');
  const parsed = frontMatter.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.') || 'front matter';
    const fix = issue.code === 'unrecognized_keys' ? `remove ${issue.keys.join(', ')} (known keys: name, description, read_when, min_trust, channels)` : issue.message;
    throw new SkillFileError(`"${key}": ${fix}.`);
  }
  const fm = parsed.data;
  if (fm.name && fm.name !== folder) throw new SkillFileError(`name "${fm.name}" differs from its folder "${folder}": rename one so they match.`);
  const body = match[2]!.trim();
  if (!body) throw new SkillFileError('the body is empty: write the procedure below the front matter.');
  return {
    name: folder,
    description: fm.description,
    readWhen: fm.read_when?.trim() || null,
    minTrust: fm.min_trust,
    channels: [...new Set(fm.channels)],
    body,
    contentHash: createHash('sha256').update(text).digest('hex'),
  };
}
