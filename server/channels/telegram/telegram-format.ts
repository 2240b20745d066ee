/**
 * Telegram-safe formatting of model replies: Telegram's HTML parse mode with `<pre>`/`<code>` for
 * fenced code blocks, `<code>` for inline code and `<b>` for `**bold**`; every other `<`, `>` and `&` is
 * escaped, so the result always parses. A fence left open (a chunk that ends inside a block) is closed.
 *
 * @example
 * toTelegramHtml('Run `ls` now:\n```sh\nls -l <dir>\n```') // 'Run <code>ls</code> now:\n<pre><code class="language-sh">ls -l &lt;dir&gt;</code></pre>'
 */
export function toTelegramHtml(text: string): string {
  const out: string[] = [];
  const fence = /```([^\n`]*)\n([\s\S]*?)(?:\n?```|$)/g;
  let last = 0;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    out.push(inline(text.slice(last, m.index)));
    const lang = (m[1] ?? '').trim().replace(/[^\w+#-]/g, '');
    const code = escapeHtml(m[2] ?? '');
    out.push(lang ? `<pre><code class="language-${lang}">${code}</code></pre>` : `<pre>${code}</pre>`);
    last = m.index + m[0].length;
  }
  out.push(inline(text.slice(last)));
  return out.join('');
}

/** Escapes the three characters Telegram's HTML mode requires escaped outside tags. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Inline code and bold in text outside code blocks. */
function inline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part) =>
      part.length > 2 && part.startsWith('`') && part.endsWith('`')
        ? `<code>${escapeHtml(part.slice(1, -1))}</code>`
        : escapeHtml(part).replace(/\*\*([^*\n]+?)\*\*/g, '<b>$1</b>'),
    )
    .join('');
}

/** True when Telegram rejected the formatting of a message (then it is resent as plain text). */
export function isEntityParseError(description: string | undefined): boolean {
  return !!description && /can't parse entities|can't find end tag|unsupported start tag|unexpected end tag/i.test(description);
}
