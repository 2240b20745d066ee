import type { ExtractedChunk, TextBlock } from './extraction.types';

// === Blocks into passages for the index: by headings and paragraphs, within a token budget, overlapping
// A passage never spans two pages or two headings (so its citation and heading are right); within one,
// paragraphs are packed up to `chunkTokens`, and each passage starts with the last paragraphs of the one
// before (up to `overlapTokens`), so a fact at a boundary is whole in one of them. A paragraph longer than
// a passage is cut at word boundaries.

export interface DocumentChunkOptions {
  chunkTokens: number;
  overlapTokens: number;
  estimate: (text: string) => number;
}

interface Unit {
  page: number | null;
  heading: string | null;
  text: string;
  tokens: number;
}

/** Cuts a long text into pieces of about `maxTokens` (by characters, measured on the text itself). */
function cutLong(text: string, maxTokens: number, estimate: (t: string) => number): string[] {
  const tokens = estimate(text);
  if (tokens <= maxTokens) return [text];
  const charsPerToken = text.length / Math.max(1, tokens);
  const size = Math.max(20, Math.floor(maxTokens * charsPerToken * 0.95));
  const out: string[] = [];
  let rest = text;
  while (rest.length > size) {
    let cut = rest.lastIndexOf(' ', size);
    if (cut < size / 2) cut = size;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out.filter(Boolean);
}

export function chunkBlocks(blocks: readonly TextBlock[], options: DocumentChunkOptions): ExtractedChunk[] {
  const chunkTokens = Math.max(20, options.chunkTokens);
  const overlapTokens = Math.max(0, Math.min(options.overlapTokens, Math.floor(chunkTokens / 2)));
  const units: Unit[] = [];
  for (const block of blocks) {
    for (const piece of cutLong(block.text, chunkTokens, options.estimate)) {
      units.push({ page: block.page, heading: block.heading, text: piece, tokens: Math.max(1, options.estimate(piece)) });
    }
  }
  const chunks: ExtractedChunk[] = [];
  let current: Unit[] = [];
  let tokens = 0;
  let fresh = 0;
  const flush = (carry: boolean) => {
    if (fresh > 0) {
      const first = current[current.length - fresh]!;
      const body = current.map((u) => u.text).join('\n\n').trim();
      const heading = first.heading;
      const content = heading && !body.includes(heading) ? `${heading}\n\n${body}` : body;
      chunks.push({ seq: chunks.length, page: first.page, heading, content });
    }
    const kept: Unit[] = [];
    let keptTokens = 0;
    if (carry) {
      for (let i = current.length - 1; i >= 0 && keptTokens + current[i]!.tokens <= overlapTokens; i--) {
        kept.unshift(current[i]!);
        keptTokens += current[i]!.tokens;
      }
    }
    current = kept;
    tokens = keptTokens;
    fresh = 0;
  };
  for (const unit of units) {
    const last = current[current.length - 1];
    if (last && (last.page !== unit.page || last.heading !== unit.heading)) flush(false);
    else if (current.length && tokens + unit.tokens > chunkTokens) flush(true);
    current.push(unit);
    tokens += unit.tokens;
    fresh++;
  }
  flush(false);
  return chunks;
}
