/** One part of a multipart/form-data body. */
export interface MultipartPart {
  name: string;
  fileName: string | null;
  type: string | null;
  data: Buffer;
}

/**
 * Parses a multipart/form-data body leniently, as servers in front of real APIs do: header names in any
 * case, with or without a space after the colon, quoted or bare `name`/`filename` (grammY writes
 * `filename=reply.ogg`, which strict parsers such as undici's refuse). Throws when there is no boundary.
 */
export function parseMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!boundary) throw new Error('multipart body without a boundary');
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: MultipartPart[] = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const from = start + delimiter.length;
    if (body.subarray(from, from + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, from);
    if (next < 0) break;
    const part = body.subarray(from + 2, next - 2); // CRLF after the delimiter, CRLF before the next one
    const split = part.indexOf('\r\n\r\n');
    if (split >= 0) {
      const headers = part.subarray(0, split).toString('utf8');
      const disposition = /content-disposition:\s*form-data([^\r\n]*)/i.exec(headers)?.[1] ?? '';
      const param = (key: string) => new RegExp(`;\\s*${key}=(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(disposition);
      const name = param('name');
      const fileName = param('filename');
      const type = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim() ?? null;
      if (name) parts.push({ name: name[1] ?? name[2]!, fileName: fileName ? (fileName[1] ?? fileName[2]!) : null, type, data: part.subarray(split + 4) });
    }
    start = next;
  }
  return parts;
}
