// === Chunking of workspace files (MEMORY.md, memory/*.md)
// Lines are packed into chunks of about `chunkTokens`; each chunk starts with the last lines of the one
// before (about `overlapTokens`), so a fact that straddles a boundary is whole in at least one chunk.
// Lines longer than a chunk are split at word boundaries (or hard, for very long words).

export interface ChunkOptions {
  chunkTokens: number;
  overlapTokens: number;
  estimate: (text: string) => number;
}

function splitLongLine(line: string, options: ChunkOptions): string[] {
  const out: string[] = [];
  let current = '';
  for (const word of line.split(/(\s+)/)) {
    const next = current + word;
    if (current && options.estimate(next) > options.chunkTokens) {
      out.push(current.trimEnd());
      current = word.trimStart();
    } else {
      current = next;
    }
    // A single "word" longer than a chunk (base64, a URL): cut it by characters.
    while (options.estimate(current) > options.chunkTokens && current.length > 1) {
      const cut = Math.max(1, Math.floor(current.length * (options.chunkTokens / options.estimate(current)) * 0.9));
      out.push(current.slice(0, cut));
      current = current.slice(cut);
    }
  }
  if (current.trim()) out.push(current.trimEnd());
  return out;
}

/** Chunks of `text`, trimmed, never empty, in order. */
export function chunkText(text: string, options: ChunkOptions): string[] {
  const chunkTokens = Math.max(1, options.chunkTokens);
  const overlapTokens = Math.max(0, Math.min(options.overlapTokens, Math.floor(chunkTokens / 2)));
  const opts = { ...options, chunkTokens, overlapTokens };
  const lines: Array<{ text: string; tokens: number }> = [];
  for (const raw of text.replace(/\r\n?/g, '\n').split('\n')) {
    const pieces = options.estimate(raw) > chunkTokens ? splitLongLine(raw, opts) : [raw];
    for (const piece of pieces) lines.push({ text: piece, tokens: Math.max(1, options.estimate(piece)) });
  }
  const chunks: string[] = [];
  let current: typeof lines = [];
  let tokens = 0;
  let fresh = 0; // lines in `current` that are not overlap from the previous chunk
  const flush = () => {
    const body = current.map((l) => l.text).join('\n').trim();
    if (body && fresh > 0) chunks.push(body);
    // Carry the tail as overlap.
    const carry: typeof lines = [];
    let carried = 0;
    for (let i = current.length - 1; i >= 0 && carried + current[i]!.tokens <= overlapTokens; i--) {
      carry.unshift(current[i]!);
      carried += current[i]!.tokens;
    }
    current = carry;
    tokens = carried;
    fresh = 0;
  };
  for (const line of lines) {
    if (current.length && tokens + line.tokens > chunkTokens) flush();
    current.push(line);
    tokens += line.tokens;
    if (line.text.trim()) fresh++;
  }
  if (fresh > 0) flush();
  return chunks;
}
