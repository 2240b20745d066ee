/**
 * Splits text into chunks of at most `limit` characters, preferring paragraph, line and word breaks,
 * and never inside a ``` code block: a block that must be split is closed at the end of one chunk and
 * reopened (with its language) at the start of the next.
 */
export function splitMessage(text: string, limit: number): string[] {
  if (limit < 20) throw new Error('limit too small');
  if (text.length <= limit) return [text];
  const chunks: string[] = [];
  let rest = text;
  let openFence: string | null = null;
  while (rest.length) {
    const prefix = openFence ? `${openFence}\n` : '';
    const room = limit - prefix.length;
    if (prefix.length + rest.length <= limit) {
      chunks.push(prefix + rest);
      break;
    }
    // Reserve room for a closing fence in case this chunk ends inside a block.
    const { cut, skip } = bestCut(rest, room - 4);
    const piece = rest.slice(0, cut);
    const fence = fenceStateAfter(piece, openFence);
    let body = prefix + piece;
    if (fence) body = body.replace(/\n?$/, '\n```');
    chunks.push(body);
    rest = rest.slice(cut + skip);
    openFence = fence;
  }
  return chunks;
}

/** Where to cut (prefer a paragraph, then a line, then a word break) and how many separator chars to drop. */
function bestCut(text: string, max: number): { cut: number; skip: number } {
  const window = text.slice(0, max);
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(sep);
    if (at > max * 0.5) return { cut: at, skip: sep.length };
  }
  return { cut: max, skip: 0 };
}

/** The opening fence line (e.g. "```ts") still open after `piece`, given the one open before it. */
function fenceStateAfter(piece: string, openBefore: string | null): string | null {
  let open = openBefore;
  for (const line of piece.split('\n')) {
    const m = /^\s*(```\S*)/.exec(line);
    if (m) open = open ? null : m[1]!;
  }
  return open;
}
