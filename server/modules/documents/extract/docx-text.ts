import mammoth from 'mammoth';
import { htmlBlocks } from './html-text';
import { checkDocxZip } from './zip-guard';
import { UnreadableDocument, type TextBlock } from './extraction.types';

/** A Word file's text as blocks under its headings (mammoth → HTML → blocks), after the zip-bomb check. */
export async function docxBlocks(buf: Buffer, maxUnpackedBytes: number): Promise<TextBlock[]> {
  checkDocxZip(buf, maxUnpackedBytes);
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: buf })).value;
  } catch (err) {
    const message = (err as Error).message ?? String(err);
    // The unzipper checks each entry against the size its headers declare (a zip that lies about its sizes).
    if (/size mismatch/i.test(message)) throw new UnreadableDocument('the Word file is damaged or forged (a zip entry unpacks to another size than it declares)');
    throw new UnreadableDocument(`the Word file cannot be read (${message.slice(0, 200)})`);
  }
  return htmlBlocks(html);
}
