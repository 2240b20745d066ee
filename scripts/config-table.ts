/** Prints the configuration reference (every key, default, description) as a Markdown table for the README. */
import { z } from 'zod';
import { appConfigSchema, defaultConfig } from '../server/config';

type AnySchema = z.ZodType & { def?: { type?: string; innerType?: AnySchema; shape?: Record<string, AnySchema> }; description?: string };

function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  while (s.def && ['default', 'prefault', 'optional', 'nullable'].includes(s.def.type ?? '') && s.def.innerType) s = s.def.innerType;
  return s;
}

function walk(schema: AnySchema, prefix: string, defaults: unknown, rows: string[]): void {
  const inner = unwrap(schema);
  const shape = inner.def?.type === 'object' ? (inner as unknown as { shape: Record<string, AnySchema> }).shape : null;
  if (shape && prefix !== 'ai.providers' && !prefix.startsWith('ai.roles.')) {
    for (const [key, child] of Object.entries(shape)) {
      walk(child, prefix ? `${prefix}.${key}` : key, (defaults as Record<string, unknown> | undefined)?.[key], rows);
    }
    return;
  }
  const description = schema.description ?? inner.description ?? '';
  rows.push(`| \`${prefix}\` | \`${JSON.stringify(defaults ?? null)}\` | ${description.replace(/\|/g, '\\|')} |`);
}

const rows: string[] = ['| key | default | meaning |', '|---|---|---|'];
walk(appConfigSchema as unknown as AnySchema, '', defaultConfig(), rows);
console.log(rows.join('\n'));
