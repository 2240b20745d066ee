import { isEntityParseError, toTelegramHtml } from '../../../../server/channels/telegram/telegram-format';
import { parseTelegramHtml } from '../../../support/fakes/fake-telegram-server';

/** What the user sees: the HTML as Telegram would parse it (the fake's strict parser). */
function visible(html: string): string {
  const parsed = parseTelegramHtml(html);
  if ('error' in parsed) throw new Error(`${parsed.error} in ${html}`);
  return parsed.text;
}

describe('toTelegramHtml', () => {
  it('escapes <, > and & in plain text', () => {
    expect(toTelegramHtml('a < b && c > d')).toBe('a &lt; b &amp;&amp; c &gt; d');
  });

  it('turns fenced code blocks into <pre><code class="language-…">, escaping their content', () => {
    const html = toTelegramHtml('Try:\n```ts\nconst x = a<b && "<ok>";\n```\nthen run it');
    expect(html).toBe('Try:\n<pre><code class="language-ts">const x = a&lt;b &amp;&amp; "&lt;ok&gt;";</code></pre>\nthen run it');
    expect(visible(html)).toBe('Try:\nconst x = a<b && "<ok>";\nthen run it');
  });

  it('uses <pre> without a language, and closes a block left open at the end of a chunk', () => {
    expect(toTelegramHtml('```\nplain\n```')).toBe('<pre>plain</pre>');
    expect(toTelegramHtml('start\n```py\nprint(1 < 2)')).toBe('start\n<pre><code class="language-py">print(1 &lt; 2)</code></pre>');
  });

  it('keeps a language name from breaking out of the class attribute', () => {
    const html = toTelegramHtml('```js"><b>x\nbody\n```');
    expect(html).toBe('<pre><code class="language-jsbx">body</code></pre>');
    expect(visible(html)).toBe('body');
  });

  it('formats inline code and **bold**, but not inside code', () => {
    const html = toTelegramHtml('Run `ls **not bold** <dir>` and **be bold** & done');
    expect(html).toBe('Run <code>ls **not bold** &lt;dir&gt;</code> and <b>be bold</b> &amp; done');
    expect(visible(html)).toBe('Run ls **not bold** <dir> and be bold & done');
  });

  it('always produces HTML that Telegram parses, whatever the model wrote', () => {
    const nasty = ['<script>alert(1)</script>', '**unclosed bold', '`unclosed code', '``` ``` ```', 'a & b &amp; c', '**<b>**', '```\n</pre>\n```', '&#99999999;', 'x > y'];
    for (const text of nasty) expect(() => visible(toTelegramHtml(text))).not.toThrow();
  });
});

describe('isEntityParseError', () => {
  it('recognises Telegram parse errors only', () => {
    expect(isEntityParseError("Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 3")).toBe(true);
    expect(isEntityParseError('Bad Request: chat not found')).toBe(false);
    expect(isEntityParseError(undefined)).toBe(false);
  });
});
