import { convert } from 'html-to-text';
import { markdownBlocks } from './text-blocks';
import type { TextBlock } from './extraction.types';

// === HTML (and Word files, converted to HTML) into blocks: headings become Markdown headings, so one
// block parser serves both.

const headingSelectors = [1, 2, 3, 4, 5, 6].map((n) => ({ selector: `h${n}`, format: 'mdHeading', options: { level: n } }));

/** Readable text of an HTML document as blocks under their headings; scripts, styles and images dropped. */
export function htmlBlocks(html: string): TextBlock[] {
  const text = convert(html, {
    wordwrap: false,
    formatters: {
      mdHeading: (elem, walk, builder, options) => {
        builder.openBlock({ leadingLineBreaks: 2 });
        builder.addLiteral(`${'#'.repeat(Number((options as { level?: number }).level ?? 1))} `);
        walk(elem.children, builder);
        builder.closeBlock({ trailingLineBreaks: 2 });
      },
    },
    selectors: [
      ...headingSelectors,
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'table', format: 'dataTable' },
    ],
  });
  return markdownBlocks(text);
}
