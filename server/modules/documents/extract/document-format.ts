// === Which format a file is, from its name and media type, checked against its first bytes
// Pure (no I/O): runs on the request path before anything is stored, and again in the extraction thread.

export type DocumentKind = 'pdf' | 'docx' | 'markdown' | 'text' | 'html' | 'csv';

const BY_EXTENSION: Record<string, DocumentKind> = {
  pdf: 'pdf',
  docx: 'docx',
  md: 'markdown',
  markdown: 'markdown',
  txt: 'text',
  text: 'text',
  log: 'text',
  html: 'html',
  htm: 'html',
  csv: 'csv',
};

const BY_MIME: Record<string, DocumentKind> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/plain': 'text',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/csv': 'csv',
  'application/csv': 'csv',
};

/** Media types of the kinds (what a document without a usable type is stored as). */
export const MIME_OF: Record<DocumentKind, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  markdown: 'text/markdown',
  text: 'text/plain',
  html: 'text/html',
  csv: 'text/csv',
};

/** The answer for anything else. */
export const SUPPORTED_FORMATS = 'PDF, Word (.docx), Markdown, plain text, HTML or CSV';

/** Types that say nothing about the content: the file name decides. */
const GENERIC = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/x-download', 'application/unknown']);

/**
 * The kind a file claims to be: its media type when that is one we read, else its name's extension;
 * null when neither names a supported format.
 */
export function claimedKind(name: string, mimeType: string | null | undefined): DocumentKind | null {
  const mime = (mimeType ?? '').split(';')[0]!.trim().toLowerCase();
  const ext = /\.([a-z0-9]{1,10})$/i.exec(name.trim())?.[1]?.toLowerCase() ?? '';
  const byName = BY_EXTENSION[ext] ?? null;
  if (GENERIC.has(mime)) return byName;
  const byMime = BY_MIME[mime] ?? null;
  // `text/plain` on a .md or .csv file is what many clients send: the name is more precise.
  if (byMime === 'text' && byName && byName !== 'pdf' && byName !== 'docx') return byName;
  return byMime;
}

const TEXT_KINDS = new Set<DocumentKind>(['markdown', 'text', 'html', 'csv']);

/**
 * Why the first bytes do not match the claimed kind (a file whose type lies), or null when they do.
 * PDF must start with `%PDF-`, DOCX is a zip; text formats must not be a PDF, a zip or binary data.
 */
export function contentMismatch(kind: DocumentKind, head: Uint8Array): string | null {
  const ascii = Buffer.from(head.subarray(0, 1024)).toString('latin1');
  const isPdf = ascii.slice(0, 1024).includes('%PDF-');
  const isZip = head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
  if (kind === 'pdf') return isPdf ? null : `it is called a PDF but is not one (${describeHead(head)})`;
  if (kind === 'docx') return isZip ? null : `it is called a Word file but is not one (${describeHead(head)})`;
  if (TEXT_KINDS.has(kind)) {
    if (isPdf) return `it is called ${kind} but is a PDF`;
    if (isZip) return `it is called ${kind} but is a zip archive (a Word or other Office file?)`;
    const sample = head.subarray(0, 8192);
    if (sample.includes(0)) return `it is called ${kind} but holds binary data`;
  }
  return null;
}

function describeHead(head: Uint8Array): string {
  if (!head.length) return 'the file is empty';
  const ascii = Buffer.from(head.subarray(0, 4)).toString('latin1');
  if (head[0] === 0x50 && head[1] === 0x4b) return 'it is a zip archive';
  if (ascii.startsWith('%PDF')) return 'it is a PDF';
  if (head[0] === 0xff && head[1] === 0xd8) return 'it is a JPEG image';
  if (ascii === '\x89PNG') return 'it is a PNG image';
  return 'unknown content';
}
