import { UnreadableDocument, type TextBlock } from './extraction.types';

// === The text layer of a PDF, page by page (pdfjs-dist, ESM-only: loaded with a real `import()` in the
// extraction thread, never in the main process)

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

// A real dynamic import: the compiled CommonJS (and swc) would turn `import()` into `require()`.
const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;
let pdfjs: Promise<PdfJs> | null = null;

function loadPdfJs(): Promise<PdfJs> {
  pdfjs ??= importEsm('pdfjs-dist/legacy/build/pdf.mjs') as Promise<PdfJs>;
  return pdfjs;
}

/** Most characters of text a page may have without any, counting as "no text layer" below. */
const MIN_TEXT_CHARS = 16;

/**
 * Text blocks of every page (paragraphs, with their page number). Encrypted, damaged and scanned PDFs
 * (no text layer) and PDFs over `maxPages` throw UnreadableDocument with a reason for the user.
 */
export async function pdfBlocks(data: Uint8Array, maxPages: number, maxChars: number, onPage: (done: number, total: number) => void): Promise<{ pages: number; blocks: TextBlock[] }> {
  const lib = await loadPdfJs();
  let doc: Awaited<ReturnType<PdfJs['getDocument']>['promise']>;
  try {
    doc = await lib.getDocument({ data, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, stopAtErrors: false }).promise;
  } catch (err) {
    throw new UnreadableDocument(describePdfError(err));
  }
  try {
    const pages = doc.numPages;
    if (pages > maxPages) throw new UnreadableDocument(`the PDF has ${pages} pages; at most ${maxPages} are read (documents.max_pages)`);
    const blocks: TextBlock[] = [];
    let chars = 0;
    for (let n = 1; n <= pages; n++) {
      let text = '';
      try {
        const page = await doc.getPage(n);
        const content = await page.getTextContent();
        for (const item of content.items) {
          if (!('str' in item)) continue;
          text += item.str + (item.hasEOL ? '\n' : '');
        }
        page.cleanup();
      } catch (err) {
        throw new UnreadableDocument(`page ${n} of the PDF cannot be read (${describePdfError(err)})`);
      }
      chars += text.trim().length;
      if (chars > maxChars) throw new UnreadableDocument(`the PDF has more than ${maxChars} characters of text (documents.max_text_chars)`);
      for (const para of paragraphs(text)) blocks.push({ page: n, heading: null, text: para });
      onPage(n, pages);
    }
    if (chars < MIN_TEXT_CHARS) throw new UnreadableDocument('the PDF has no text layer (a scanned document?) — text in images cannot be read');
    return { pages, blocks };
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

function paragraphs(text: string): string[] {
  return text
    .replace(/[ \t]+\n/g, '\n')
    .split(/\n\s*\n/)
    .map((p) => p.replace(/[ \t]{2,}/g, ' ').trim())
    .filter(Boolean);
}

function describePdfError(err: unknown): string {
  const name = (err as { name?: string } | null)?.name ?? '';
  const message = (err as Error | null)?.message ?? String(err);
  if (name === 'PasswordException') return 'the PDF is encrypted (password-protected); send it without a password';
  if (name === 'InvalidPDFException') return 'the PDF is damaged or not a PDF (invalid structure)';
  if (name === 'UnreadableDocument') return message;
  return `the PDF cannot be read (${message.slice(0, 200)})`;
}
