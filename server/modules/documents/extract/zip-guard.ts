import { UnreadableDocument } from './extraction.types';

// === A look at a zip's central directory before anything is unpacked (zip bombs)
// Word files are zips. The directory lists every entry's packed and unpacked size: a file whose entries
// unpack to more than the limit, or at a ratio no document has, is refused before decompression. Sizes
// that lie are caught later: the unzipper checks each entry against its declared size (docx-text.ts), and
// the extraction thread's memory limit bounds what it inflates meanwhile.

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
/** Packed-to-unpacked ratio above which an entry is taken for a bomb (real documents compress 2–20×). */
const MAX_RATIO = 200;

export interface ZipEntryInfo {
  name: string;
  packed: number;
  unpacked: number;
}

/** The entries a zip's central directory lists; throws UnreadableDocument when there is none. */
export function zipEntries(buf: Buffer): ZipEntryInfo[] {
  const from = Math.max(0, buf.length - 65_557);
  let eocd = -1;
  for (let i = buf.length - 22; i >= from; i--) {
    if (buf.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new UnreadableDocument('the Word file is damaged (its zip directory is missing)');
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const entries: ZipEntryInfo[] = [];
  for (let n = 0; n < count; n++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== CENTRAL) throw new UnreadableDocument('the Word file is damaged (bad zip directory)');
    const packed = buf.readUInt32LE(at + 20);
    const unpacked = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    entries.push({ name: buf.toString('utf8', at + 46, at + 46 + nameLen), packed, unpacked });
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Refuses zips that would unpack to more than `maxUnpackedBytes` or at a bomb's ratio; checks it is a Word file. */
export function checkDocxZip(buf: Buffer, maxUnpackedBytes: number): void {
  const entries = zipEntries(buf);
  if (!entries.some((e) => e.name === 'word/document.xml')) throw new UnreadableDocument('it is a zip archive but not a Word document (no word/document.xml)');
  let total = 0;
  for (const e of entries) {
    total += e.unpacked;
    if (e.unpacked === 0xffffffff || e.packed === 0xffffffff) throw new UnreadableDocument('the Word file uses zip64 entries, which are refused (too large)');
    if (e.unpacked > 1_000_000 && e.unpacked > e.packed * MAX_RATIO) {
      throw new UnreadableDocument(`the Word file looks like a zip bomb (${e.name} unpacks ${Math.round(e.unpacked / Math.max(1, e.packed))}× its size)`);
    }
  }
  if (total > maxUnpackedBytes) {
    throw new UnreadableDocument(`the Word file unpacks to ${Math.round(total / 1e6)} MB, more than the ${Math.round(maxUnpackedBytes / 1e6)} MB allowed`);
  }
}
