import { readFile } from 'node:fs/promises';
import { loadTokenCounter } from '../../../common/token-ranks';
import { chunkBlocks } from './document-chunker';
import { contentMismatch } from './document-format';
import { docxBlocks } from './docx-text';
import { htmlBlocks } from './html-text';
import { pdfBlocks } from './pdf-text';
import { csvBlocks, markdownBlocks, plainBlocks } from './text-blocks';
import { UnreadableDocument, type ExtractionRequest, type ExtractionResult, type TextBlock } from './extraction.types';

const NO_SPECIALS = { disallowedSpecial: new Set<string>() };
// Loaded at the first document, from the built ranks when there are (see common/token-ranks.ts).
let countTokens: ReturnType<typeof loadTokenCounter> | null = null;
const estimate = (text: string) => (countTokens ??= loadTokenCounter())(text, NO_SPECIALS);

/**
 * Reads a stored file and returns its passages (runs in the extraction thread: pure CPU and file
 * reading, no database). Unreadable files give `{ ok: false, reason }`; other errors throw.
 */
export async function extractDocument(req: ExtractionRequest, onProgress: (done: number, total: number) => void): Promise<ExtractionResult> {
  try {
    const data = await readFile(req.file);
    const mismatch = contentMismatch(req.kind, data.subarray(0, 8192));
    if (mismatch) throw new UnreadableDocument(`the file's type is wrong: ${mismatch}`);
    let blocks: TextBlock[];
    let pages: number | null = null;
    switch (req.kind) {
      case 'pdf': {
        const out = await pdfBlocks(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), req.limits.maxPages, req.limits.maxTextChars, onProgress);
        pages = out.pages;
        blocks = out.blocks;
        break;
      }
      case 'docx':
        blocks = await docxBlocks(data, req.limits.maxUnpackedBytes);
        break;
      case 'html':
        blocks = htmlBlocks(decodeText(data));
        break;
      case 'markdown':
        blocks = markdownBlocks(decodeText(data));
        break;
      case 'csv':
        blocks = csvBlocks(decodeText(data));
        break;
      default:
        blocks = plainBlocks(decodeText(data));
    }
    const chars = blocks.reduce((n, b) => n + b.text.length, 0);
    if (chars > req.limits.maxTextChars) throw new UnreadableDocument(`the document has more than ${req.limits.maxTextChars} characters of text (documents.max_text_chars)`);
    if (!blocks.some((b) => b.text.trim())) throw new UnreadableDocument('the document has no text');
    const chunks = chunkBlocks(blocks, { chunkTokens: req.limits.chunkTokens, overlapTokens: req.limits.chunkOverlap, estimate });
    return { ok: true, pages, chunks, chars };
  } catch (err) {
    if (err instanceof UnreadableDocument || (err as Error)?.name === 'UnreadableDocument') return { ok: false, reason: (err as Error).message };
    throw err;
  }
}

/** UTF-8 (with or without BOM); text that is not valid UTF-8 is read as Latin-1 (Windows exports). */
function decodeText(data: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return data.toString('latin1');
  }
}
