import type { TextBlock } from './extraction.types';

// === Plain text, Markdown and CSV into blocks (paragraphs under their headings)

const HEADING = /^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$/;

/** Paragraphs (blank-line separated) of `text`; Markdown `#` headings start a new section. */
export function markdownBlocks(text: string, page: number | null = null): TextBlock[] {
  const blocks: TextBlock[] = [];
  let heading: string | null = null;
  let para: string[] = [];
  let fenced = false;
  const flush = () => {
    const body = para.join('\n').trim();
    if (body) blocks.push({ page, heading, text: body });
    para = [];
  };
  for (const line of normalize(text).split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const h = fenced ? null : HEADING.exec(line);
    if (h) {
      flush();
      heading = h[2]!.slice(0, 300);
      blocks.push({ page, heading, text: line.trim() });
      continue;
    }
    if (!line.trim() && !fenced) flush();
    else para.push(line);
  }
  flush();
  return blocks;
}

/** Plain text: paragraphs, no headings. */
export function plainBlocks(text: string): TextBlock[] {
  return normalize(text)
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => ({ page: null, heading: null, text: p }));
}

/** CSV: rows as lines, about 40 rows a block, each block starting with the header row. */
export function csvBlocks(text: string): TextBlock[] {
  const rows = normalize(text).split('\n').filter((r) => r.trim());
  if (!rows.length) return [];
  const [header, ...body] = rows;
  const blocks: TextBlock[] = [];
  for (let i = 0; i < body.length || i === 0; i += 40) {
    blocks.push({ page: null, heading: null, text: [header, ...body.slice(i, i + 40)].join('\n') });
    if (!body.length) break;
  }
  return blocks;
}

function normalize(text: string): string {
  return text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}
