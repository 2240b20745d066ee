import { MemoryType } from '../memory';

// === Parsing what the summarizer model answers
// Models wrap JSON in code fences, add prose before or after it, use single items instead of lists or
// other words for the types. `parseMemoryCandidates` accepts all of that and reports, instead of
// throwing, when nothing usable is there; callers log and skip.

/** A memory the model proposed, checked and normalized. */
export interface MemoryCandidate {
  type: MemoryType.FACT | MemoryType.LESSON | MemoryType.REMINDER;
  content: string;
  importance: number;
}

export type ParsedCandidates = { ok: true; memories: MemoryCandidate[]; skipped: number } | { ok: false; error: string };

/** Most memories taken from one answer. */
export const MAX_CANDIDATES = 12;
/** Longest memory kept (longer ones are cut at a word boundary). */
export const MAX_CANDIDATE_CHARS = 1_000;

const TYPE_WORDS: Record<string, MemoryCandidate['type']> = {
  fact: MemoryType.FACT,
  facts: MemoryType.FACT,
  preference: MemoryType.FACT,
  profile: MemoryType.FACT,
  lesson: MemoryType.LESSON,
  lessons: MemoryType.LESSON,
  learning: MemoryType.LESSON,
  correction: MemoryType.LESSON,
  reminder: MemoryType.REMINDER,
  reminders: MemoryType.REMINDER,
  todo: MemoryType.REMINDER,
  task: MemoryType.REMINDER,
  'follow-up': MemoryType.REMINDER,
  followup: MemoryType.REMINDER,
};

/** The JSON values embedded in `text`: the whole text, fenced blocks, then each balanced {…} or […]. */
function jsonValues(text: string): unknown[] {
  const out: unknown[] = [];
  const tryParse = (s: string): boolean => {
    try {
      out.push(JSON.parse(s) as unknown);
      return true;
    } catch {
      return false;
    }
  };
  const trimmed = text.trim();
  if (tryParse(trimmed)) return out;
  for (const m of trimmed.matchAll(/```(?:json)?\s*([\s\S]*?)```/gi)) tryParse(m[1]!.trim());
  if (out.length) return out;
  // Scan for balanced brackets, respecting strings, and parse each outermost span.
  for (let i = 0; i < trimmed.length; i++) {
    const open = trimmed[i];
    if (open !== '{' && open !== '[') continue;
    const end = balancedEnd(trimmed, i);
    if (end > i && tryParse(trimmed.slice(i, end + 1))) i = end;
  }
  return out;
}

function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') stack.push(c === '{' ? '}' : ']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (!stack.length) return i;
    }
  }
  return -1;
}

/** The list of raw items in a parsed value: `{memories:[…]}`, `[…]`, `{facts:[…], lessons:[…]}` or one item. */
function rawItems(value: unknown): Array<{ item: unknown; typeHint?: string }> | null {
  if (Array.isArray(value)) return value.map((item) => ({ item }));
  if (!value || typeof value !== 'object') return null;
  const record = value as Record<string, unknown>;
  for (const key of ['memories', 'items', 'memory']) {
    if (Array.isArray(record[key])) return (record[key] as unknown[]).map((item) => ({ item }));
  }
  const grouped = Object.entries(record).filter(([k, v]) => TYPE_WORDS[k.toLowerCase()] && Array.isArray(v));
  if (grouped.length) return grouped.flatMap(([k, v]) => (v as unknown[]).map((item) => ({ item, typeHint: k })));
  if (typeof record.content === 'string' || typeof record.text === 'string') return [{ item: record }];
  return null;
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function candidateOf(raw: unknown, typeHint?: string): MemoryCandidate | null {
  let record: Record<string, unknown>;
  if (typeof raw === 'string') record = { content: raw };
  else if (raw && typeof raw === 'object' && !Array.isArray(raw)) record = raw as Record<string, unknown>;
  else return null;
  const contentValue = record.content ?? record.text ?? record.memory;
  if (typeof contentValue !== 'string') return null;
  const content = clip(contentValue.replace(/\s+/g, ' ').trim(), MAX_CANDIDATE_CHARS);
  if (!content) return null;
  const typeWord = String(record.type ?? record.kind ?? typeHint ?? 'fact').trim().toLowerCase();
  const type = TYPE_WORDS[typeWord];
  if (!type) return null;
  const rawImportance = typeof record.importance === 'string' ? Number(record.importance) : record.importance;
  const importance = typeof rawImportance === 'number' && Number.isFinite(rawImportance) ? Math.min(1, Math.max(0, rawImportance > 1 && rawImportance <= 10 ? rawImportance / 10 : rawImportance)) : 0.5;
  return { type, content, importance: Math.round(importance * 100) / 100 };
}

/**
 * Reads the memories a summarizer model proposed. Never throws: `ok: false` (with the reason) when the
 * answer holds no usable JSON; otherwise the valid items (fact, lesson, reminder; duplicates and
 * unknown types dropped, at most MAX_CANDIDATES) and how many were skipped.
 */
export function parseMemoryCandidates(answer: string): ParsedCandidates {
  const values = jsonValues(answer ?? '');
  let items: Array<{ item: unknown; typeHint?: string }> | null = null;
  for (const value of values) {
    items = rawItems(value);
    if (items) break;
  }
  if (!items) return { ok: false, error: values.length ? 'the JSON has no list of memories' : 'no JSON in the answer' };
  const seen = new Set<string>();
  const memories: MemoryCandidate[] = [];
  let skipped = 0;
  for (const { item, typeHint } of items) {
    const candidate = candidateOf(item, typeHint);
    const key = candidate?.content.toLowerCase();
    if (!candidate || seen.has(key!) || memories.length >= MAX_CANDIDATES) {
      skipped += 1;
      continue;
    }
    seen.add(key!);
    memories.push(candidate);
  }
  return { ok: true, memories, skipped };
}
