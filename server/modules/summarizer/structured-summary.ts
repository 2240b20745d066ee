// === The structured compaction summary (DESIGN §5)
// Five sections, always present and always in this order, whatever the model wrote: a summary that
// silently drops "pending asks" is how compaction loses context. Identifiers found verbatim in the
// transcript are added to "Exact identifiers" when the model left them out.

export const SUMMARY_SECTIONS = ['Decisions', 'Open tasks', 'Constraints', 'Pending asks', 'Exact identifiers'] as const satisfies readonly string[];
export type SummarySection = (typeof SUMMARY_SECTIONS)[number];

const ALIASES: Record<string, SummarySection> = {
  decisions: 'Decisions',
  'decisions made': 'Decisions',
  'open tasks': 'Open tasks',
  tasks: 'Open tasks',
  todos: 'Open tasks',
  'to do': 'Open tasks',
  constraints: 'Constraints',
  requirements: 'Constraints',
  'pending asks': 'Pending asks',
  'pending requests': 'Pending asks',
  'pending questions': 'Pending asks',
  'open questions': 'Pending asks',
  'exact identifiers': 'Exact identifiers',
  identifiers: 'Exact identifiers',
  ids: 'Exact identifiers',
};

/** Most identifiers added from the transcript. */
const MAX_IDENTIFIERS = 40;
const NONE = '- none';

/** A heading line (`## Decisions`, `**Open tasks:**`, `3. Constraints`) → its section, else null. */
function headingOf(line: string): SummarySection | null {
  const text = line
    .trim()
    .replace(/^#{1,6}\s*/, '')
    .replace(/^\d+[.)]\s*/, '')
    .replace(/^[*_]+|[*_]+$/g, '')
    .replace(/:\s*[*_]*$/, '')
    .replace(/^[*_]+|[*_]+$/g, '')
    .trim()
    .toLowerCase();
  if (!text || text.length > 40) return null;
  return ALIASES[text] ?? null;
}

/** Splits a model's summary into the five sections; text before the first heading is returned as `preamble`. */
export function parseSummarySections(text: string): { sections: Map<SummarySection, string[]>; preamble: string[] } {
  const sections = new Map<SummarySection, string[]>();
  const preamble: string[] = [];
  let current: SummarySection | null = null;
  for (const line of (text ?? '').replace(/\r\n/g, '\n').split('\n')) {
    const heading = headingOf(line);
    if (heading) {
      current = heading;
      if (!sections.has(heading)) sections.set(heading, []);
      continue;
    }
    if (current) sections.get(current)!.push(line);
    else preamble.push(line);
  }
  return { sections, preamble };
}

function body(lines: string[] | undefined): string[] {
  const kept = (lines ?? []).map((l) => l.trimEnd());
  while (kept.length && !kept[0]!.trim()) kept.shift();
  while (kept.length && !kept[kept.length - 1]!.trim()) kept.pop();
  const meaningful = kept.filter((l) => l.trim() && !/^[-*•]?\s*(none|n\/a|nothing|-)\.?$/i.test(l.trim()));
  return meaningful.length ? kept : [];
}

/**
 * Verbatim identifiers of a transcript: URLs, e-mail addresses, UUIDs, file paths, ticket-style ids
 * (ABC-123), `code spans` and long numbers, in order of first appearance.
 */
export function findIdentifiers(text: string): string[] {
  const patterns = [
    /\bhttps?:\/\/[^\s<>()"'`]+[^\s<>()"'`.,;:!?]/g,
    /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g,
    /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
    /(?:^|[\s(])((?:~|\.{1,2})?\/(?:[\w.-]+\/)*[\w.-]+\.[\w]+)/g,
    /\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b/g,
    /`([^`\n]{2,80})`/g,
    /\b\d{5,}\b/g,
  ];
  const found: Array<{ start: number; end: number; value: string }> = [];
  for (const pattern of patterns) {
    for (const m of text.matchAll(pattern)) {
      const value = (m[1] ?? m[0]).trim();
      const start = (m.index ?? 0) + m[0].indexOf(value);
      if (value) found.push({ start, end: start + value.length, value });
    }
  }
  // Earliest first, longest first at one position; a match inside a kept one (digits of a UUID) is skipped.
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Array<{ start: number; end: number }> = [];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of found) {
    if (kept.some((k) => f.start >= k.start && f.end <= k.end)) continue;
    kept.push(f);
    if (seen.has(f.value)) continue;
    seen.add(f.value);
    out.push(f.value);
  }
  return out;
}

/**
 * The summary to store: the model's text rearranged into the five sections in order (missing ones say
 * "- none"), with identifiers from `transcript` that the model did not keep appended to "Exact
 * identifiers". Text the model wrote before its first heading is kept on top.
 */
export function normalizeSummary(modelText: string, transcript: string): string {
  const { sections, preamble } = parseSummarySections(modelText);
  const out: string[] = [];
  const intro = body(preamble);
  if (intro.length) out.push(...intro, '');
  for (const name of SUMMARY_SECTIONS) {
    const lines = body(sections.get(name));
    if (name === 'Exact identifiers') {
      const missing = findIdentifiers(transcript)
        .filter((id) => !modelText.includes(id))
        .slice(0, MAX_IDENTIFIERS);
      lines.push(...missing.map((id) => `- \`${id}\``));
    }
    out.push(`## ${name}`, ...(lines.length ? lines : [NONE]), '');
  }
  return out.join('\n').trim();
}

/** True when `text` has the five section headings in order. */
export function hasAllSections(text: string): boolean {
  let from = 0;
  for (const name of SUMMARY_SECTIONS) {
    const at = text.indexOf(`## ${name}`, from);
    if (at < 0) return false;
    from = at;
  }
  return true;
}
