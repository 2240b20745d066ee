import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import { promisify } from 'node:util';

type Decoder = (input: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions) => Promise<Buffer>;

const DECODERS: Record<string, Decoder> = {
  gzip: promisify(zlib.gunzip) as Decoder,
  'x-gzip': promisify(zlib.gunzip) as Decoder,
  deflate: promisify(zlib.inflate) as Decoder,
  br: promisify(zlib.brotliDecompress) as Decoder,
};

function sendError(res: ServerResponse, status: number, message: string, code: string): void {
  // The OpenAI-compatible API answers in OpenAI's error shape, everything else in GraphQL's.
  const openai = res.req?.url?.startsWith('/v1/');
  const body = openai ? { error: { message, type: 'invalid_request_error', param: null, code: code.toLowerCase() } } : { errors: [{ message, extensions: { code } }] };
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), connection: 'close' });
  res.end(text);
}

/** Whether the request carries a body under a `Content-Encoding` other than identity. */
export function hasEncodedBody(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding === undefined || encoding.trim().toLowerCase() === 'identity' || encoding.trim() === '') return false;
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Decodes a compressed request body before any route sees it, so every route (GraphQL, webhooks, the
 * OpenAI-compatible API, uploads) answers the same way: an unknown encoding is a 415, a body that does not
 * match its `Content-Encoding` a 400, one that is too large (compressed or once decoded) a 413, each at
 * once. (Express's own body parser never answered a gzip-labelled body that was not gzip.) On success the
 * request is handed on as a plain one: `onDecoded` gets a request that reads the decoded bytes, with
 * `Content-Length` set and `Content-Encoding` removed. Decoding runs on libuv's pool, not the event loop.
 */
export function decodeRequestBody(
  req: IncomingMessage,
  res: ServerResponse,
  limitBytes: number,
  onDecoded: (req: IncomingMessage) => void,
): void {
  const encoding = String(req.headers['content-encoding']).trim().toLowerCase();
  const decode = DECODERS[encoding];
  if (!decode) {
    req.resume();
    sendError(res, 415, `Unsupported Content-Encoding "${encoding.slice(0, 40)}": send the body as gzip, deflate, br or without encoding.`, 'UNSUPPORTED_MEDIA_TYPE');
    return;
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    sendError(res, 413, `Request body is larger than the ${Math.floor(limitBytes / 1024)} KiB limit.`, 'PAYLOAD_TOO_LARGE');
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('data', (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size > limitBytes) {
      refused = true;
      chunks.length = 0;
      sendError(res, 413, `Request body is larger than the ${Math.floor(limitBytes / 1024)} KiB limit.`, 'PAYLOAD_TOO_LARGE');
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => undefined);
  req.on('end', () => {
    if (refused) return;
    decode(Buffer.concat(chunks), { maxOutputLength: limitBytes }).then(
      (body) => onDecoded(replayRequest(req, body)),
      (err: NodeJS.ErrnoException) => {
        if (res.headersSent) return;
        if (err instanceof RangeError || err.code === 'ERR_BUFFER_TOO_LARGE') {
          sendError(res, 413, `Request body is larger than the ${Math.floor(limitBytes / 1024)} KiB limit once decoded.`, 'PAYLOAD_TOO_LARGE');
        } else {
          sendError(res, 400, `Request body is not valid ${encoding} data: it does not match its Content-Encoding header.`, 'BAD_REQUEST');
        }
      },
    );
  });
}

/** A request like `original` whose body stream yields `body` (the decoded bytes). */
function replayRequest(original: IncomingMessage, body: Buffer): IncomingMessage {
  const req = new http.IncomingMessage(original.socket);
  req.method = original.method;
  req.url = original.url;
  req.httpVersion = original.httpVersion;
  req.httpVersionMajor = original.httpVersionMajor;
  req.httpVersionMinor = original.httpVersionMinor;
  const headers = { ...original.headers };
  delete headers['content-encoding'];
  delete headers['transfer-encoding'];
  headers['content-length'] = String(body.length);
  req.headers = headers;
  req.rawHeaders = Object.entries(headers).flatMap(([k, v]) => (Array.isArray(v) ? v.flatMap((x) => [k, x]) : [k, String(v)]));
  req.complete = true;
  if (body.length) req.push(body);
  req.push(null);
  return req;
}
