import type { z } from 'zod';

const SECRET_KEY = /(pass(word)?|secret|token|api[_-]?key|auth(orization)?|cookie|credential|private)/i;
const MAX_SUMMARY = 200;

/** Cuts `text` to `max` characters, marking the cut with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

function summarizeValue(key: string, value: unknown): string {
  if (SECRET_KEY.test(key)) return '[redacted]';
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return JSON.stringify(clip(value, 60));
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.length} items]`;
  if (typeof value === 'object') return `{${Object.keys(value).length} keys}`;
  return typeof value;
}

/**
 * A short, generic summary of tool arguments for the audit log: top-level keys with clipped scalar
 * values, nested objects only counted (headers and bodies may carry secrets), secret-looking keys
 * redacted, at most 200 characters.
 */
export function summarizeArgs(args: unknown): string {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return clip(summarizeValue('', args), MAX_SUMMARY);
  const parts = Object.entries(args as Record<string, unknown>).map(([k, v]) => `${k}=${summarizeValue(k, v)}`);
  return clip(parts.join(' '), MAX_SUMMARY);
}

/** Parses the raw JSON arguments of a tool call; empty text means `{}`. */
export function parseArgsJson(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const text = raw.trim();
  if (!text) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: `arguments are not valid JSON (${clip((err as Error).message, 120)})` };
  }
}

/** One line per issue, naming the field: `timezone: Invalid input: expected string, received number`. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(arguments)'}: ${issue.message}`)
    .join('; ');
}

/** Renders tool output as text and caps it, noting how much was cut. */
export function renderOutput(output: string | Record<string, unknown>, maxChars: number): string {
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  if (text.length <= maxChars) return text;
  const cut = text.length - maxChars;
  return `${text.slice(0, maxChars)}\n[truncated ${cut} chars]`;
}
