import { deflateRawSync } from 'node:zlib';
import { Document as DocxDocument, HeadingLevel, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';

// Test documents built in the test (no binary files in the repository): real PDFs (pdf-lib), real Word
// files (docx), and the hostile ones — encrypted, damaged, scanned, zip bombs, files that lie about their type.

/** A PDF whose page n (1-based) says `pages[n-1]` (lines split on \n), with a real text layer. */
export async function buildPdf(pages: readonly string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage([595, 842]);
    let y = 800;
    for (const line of text.split('\n')) {
      page.drawText(line, { x: 40, y, size: 11, font });
      y -= 16;
    }
  }
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}

/** A PDF of `count` pages, each with a few lines naming its page (`filler page N …`). */
export async function buildLongPdf(count: number, say: (page: number) => string = (n) => `Filler page ${n} of the long report.\nNothing else stands on page ${n}.`): Promise<Buffer> {
  return buildPdf(Array.from({ length: count }, (_, i) => say(i + 1)));
}

/** A "scanned" PDF: pages with drawings only, no text layer. */
export async function buildScannedPdf(pages = 2): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  for (let i = 0; i < pages; i++) {
    const page = pdf.addPage([595, 842]);
    for (let j = 0; j < 20; j++) page.drawRectangle({ x: 40 + j * 10, y: 400 + ((j * 37) % 200), width: 8, height: 30 });
  }
  return Buffer.from(await pdf.save());
}

/** A PDF whose trailer names a Standard security handler with a user password: readers need the password. */
export async function buildEncryptedPdf(): Promise<Buffer> {
  const plain = (await buildPdf(['Top secret text on page one.'])).toString('latin1');
  const hex32 = (seed: number) => Array.from({ length: 32 }, (_, i) => ((i * 37 + seed) & 0xff).toString(16).padStart(2, '0')).join('');
  // A new object (the encryption dictionary) and a trailer that points at it, appended as an incremental update.
  const encObj = 9999;
  const body = `\n${encObj} 0 obj\n<< /Filter /Standard /V 1 /R 2 /O <${hex32(3)}> /U <${hex32(11)}> /P -44 >>\nendobj\n`;
  const start = plain.length + 1;
  const prevXref = /startxref\s+(\d+)/.exec(plain.slice(plain.lastIndexOf('startxref')))![1];
  const root = /\/Root\s+(\d+ \d+ R)/.exec(plain)![1];
  const size = Number(/\/Size\s+(\d+)/.exec(plain)![1]);
  const xrefAt = plain.length + body.length;
  const xref = `xref\n0 1\n0000000000 65535 f \n${encObj} 1\n${String(start).padStart(10, '0')} 00000 n \n`;
  const trailer = `trailer\n<< /Size ${Math.max(size, encObj + 1)} /Root ${root} /Prev ${prevXref} /Encrypt ${encObj} 0 R /ID [<${hex32(5).slice(0, 32)}> <${hex32(5).slice(0, 32)}>] >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(plain + body + xref + trailer, 'latin1');
}

/** Starts like a PDF, then garbage: no readable structure. */
export function buildCorruptPdf(): Buffer {
  const noise = Buffer.alloc(4000);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 131 + 7) & 0xff;
  return Buffer.concat([Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R'), noise]);
}

/** A Word file with headings and paragraphs (the real format, through `docx`). */
export async function buildDocx(sections: ReadonlyArray<{ heading: string; paragraphs: string[] }>): Promise<Buffer> {
  const children = sections.flatMap((s) => [new Paragraph({ text: s.heading, heading: HeadingLevel.HEADING_1 }), ...s.paragraphs.map((p) => new Paragraph(p))]);
  return Buffer.from(await Packer.toBuffer(new DocxDocument({ sections: [{ children }] })));
}

/** A zip of the given entries (deflated), written by hand: enough of the format for Word files and bombs. */
/**
 * A zip of deflated entries. `declaredSize` puts another unpacked size in the entry's headers (local and
 * central) than the data has: a zip that lies about what it unpacks to.
 */
export function buildZip(entries: ReadonlyArray<{ name: string; data: Buffer; declaredSize?: number }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const packed = deflateRawSync(e.data, { level: 9 });
    const name = Buffer.from(e.name);
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(e.declaredSize ?? e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(e.declaredSize ?? e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += local.length + name.length + packed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

/** A "Word file" whose document.xml unpacks to `megabytes` MB of spaces from a few kB: a zip bomb. */
export function buildZipBombDocx(megabytes = 200): Buffer {
  return buildZip([
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>') },
    { name: 'word/document.xml', data: Buffer.alloc(megabytes * 1024 * 1024, 0x20) },
  ]);
}

/**
 * A Word file whose zip directory lies: `word/document.xml` says it unpacks to 4 KB (a ratio no check
 * objects to) but inflates to `megabytes` MB of valid document XML, one run of text.
 */
export function buildLyingSizeDocx(megabytes = 64): Buffer {
  const head = '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>';
  const tail = '</w:t></w:r></w:p></w:body></w:document>';
  const xml = Buffer.concat([Buffer.from(head), Buffer.alloc(megabytes * 1024 * 1024, 0x61), Buffer.from(tail)]);
  return buildZip([
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>') },
    { name: 'word/document.xml', data: xml, declaredSize: 4096 },
  ]);
}

/** Bytes of a small PNG (signature and header): a picture, whatever name it is given. */
export function pngBytes(): Buffer {
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 7)]);
}

function crc32(buf: Buffer): number {
  let crc = ~0;
  for (const byte of buf) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}
