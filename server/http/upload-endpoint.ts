import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import express, { type Request, type Response, type Router } from 'express';
import { AppError } from '../common/errors';
import type { Logger } from '../common/logger';
import { TrustLevel, trustAtLeast } from '../common/trust';
import type { GraphQLContext } from '../graphql/context';
import { claimedKind, unsupportedTypeMessage, type DocumentService } from '../modules/documents';
import { MemoryScope } from '../modules/memory';

function errorBody(message: string, code: string) {
  return { errors: [{ message, extensions: { code } }] };
}

const STATUS: Record<string, number> = { UNAUTHENTICATED: 401, FORBIDDEN: 403, BAD_USER_INPUT: 400, NOT_FOUND: 404, CONFLICT: 409, RATE_LIMITED: 429 };

type Received = { path: string; size: number; name: string; mimeType: string; truncated: boolean } | { refused: [number, string, string] };

export interface UploadRouterOptions {
  documents: DocumentService;
  contextFor(authorization: string | undefined): Promise<GraphQLContext>;
  logger: Logger;
}

/**
 * `POST /uploads` (DESIGN §10): a document as `multipart/form-data` with one file part (fields `scope` and
 * `groupId`, before the file, are optional), with `Authorization: Bearer <token>`. The token and trust are
 * checked before the body is read; the file is streamed to disk and cut off at `documents.max_bytes`
 * (413); an unsupported type gets 415. Answers `201 { id, name, status, jobId }`; ingestion runs on the
 * `ingest` queue.
 */
export function uploadRouter(options: UploadRouterOptions): Router {
  const router = express.Router();
  router.post('/uploads', (req, res) => void handle(req, res, options));
  return router;
}

async function handle(req: Request, res: Response, options: UploadRouterOptions): Promise<void> {
  const { documents, logger } = options;
  const refuse = (status: number, message: string, code: string) => {
    if (res.headersSent) return;
    if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
    // The rest of the body is not read: the connection closes after the answer.
    res.setHeader('Connection', 'close');
    res.status(status).json(errorBody(message, code));
  };
  const gql = await options.contextFor(req.headers.authorization);
  if (gql.authError || gql.ctx.actor.kind !== 'user') return refuse(401, gql.authError ?? 'An API token is required (Authorization: Bearer <token>).', 'UNAUTHENTICATED');
  if (!trustAtLeast(gql.ctx.trust, TrustLevel.MEMBER)) return refuse(403, 'MEMBER trust or higher is required for documents.', 'FORBIDDEN');
  if (!/^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '')) {
    return refuse(415, 'Send the file as multipart/form-data with one file part.', 'UNSUPPORTED_MEDIA_TYPE');
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > documents.limits.maxBytes + 64 * 1024) return refuse(413, `The file is larger than ${documents.limits.maxBytes} bytes (documents.max_bytes).`, 'PAYLOAD_TOO_LARGE');

  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: documents.limits.maxBytes, fields: 10, fieldSize: 1024, parts: 20, headerPairs: 50 } });
  } catch (err) {
    return refuse(400, `Not a readable multipart body (${(err as Error).message}).`, 'BAD_REQUEST');
  }
  const fields: Record<string, string> = {};
  const got: { upload: Promise<Received> | null } = { upload: null };
  parser.on('field', (name, value) => {
    fields[name] = value;
  });
  parser.on('file', (_field, stream, info) => {
    if (got.upload) return void stream.resume();
    const name = info.filename ?? '';
    if (!claimedKind(name, info.mimeType)) {
      stream.resume();
      got.upload = Promise.resolve({ refused: [415, unsupportedTypeMessage(name || 'the file', info.mimeType), 'UNSUPPORTED_MEDIA_TYPE'] as [number, string, string] });
      return;
    }
    const target = documents.uploadPath();
    let size = 0;
    let truncated = false;
    stream.on('data', (chunk: Buffer) => (size += chunk.length));
    stream.on('limit', () => (truncated = true));
    got.upload = pipeline(stream, createWriteStream(target, { mode: 0o600 })).then(
      () => ({ path: target, size, name, mimeType: info.mimeType, truncated }),
      async (err: Error) => {
        await rm(target, { force: true });
        throw err;
      },
    );
  });
  const finished = new Promise<void>((resolve, reject) => {
    parser.on('close', resolve);
    parser.on('error', reject);
    req.on('aborted', () => reject(new Error('the upload was aborted')));
  });
  req.pipe(parser);
  let file: Received | null = null;
  try {
    await finished;
    file = got.upload ? await got.upload : null;
  } catch (err) {
    await got.upload?.then((f) => ('path' in f ? rm(f.path, { force: true }) : undefined)).catch(() => undefined);
    logger.debug({ reason: (err as Error).message }, 'upload refused');
    return refuse(400, `The upload could not be read (${(err as Error).message}).`, 'BAD_REQUEST');
  }
  if (!file) return refuse(400, 'The request has no file part.', 'BAD_USER_INPUT');
  if ('refused' in file) return refuse(...file.refused);
  if (file.truncated) {
    await rm(file.path, { force: true });
    return refuse(413, `The file is larger than ${documents.limits.maxBytes} bytes (documents.max_bytes).`, 'PAYLOAD_TOO_LARGE');
  }
  const scope = Object.values(MemoryScope).find((s) => s === fields.scope?.toLowerCase()) ?? null;
  if (fields.scope && !scope) {
    await rm(file.path, { force: true });
    return refuse(400, `scope must be one of ${Object.values(MemoryScope).join(', ')}.`, 'BAD_USER_INPUT');
  }
  try {
    const doc = await documents.add(gql.ctx, { name: file.name || 'upload', mimeType: file.mimeType, file: { path: file.path, size: file.size }, scope, groupId: fields.groupId ?? null });
    res.status(201).json({ id: doc.id, name: doc.name, status: doc.status, jobId: doc.jobId });
  } catch (err) {
    await rm(file.path, { force: true });
    if (err instanceof AppError) return refuse(STATUS[err.code] ?? 400, err.message, err.code);
    logger.error({ err }, 'upload failed');
    refuse(500, 'Internal server error', 'INTERNAL_SERVER_ERROR');
  }
}
