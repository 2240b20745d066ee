import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { In, type FindOptionsWhere } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { ForbiddenError, NotFoundError, UserInputError } from '../../common/errors';
import type { Page, PageArgs } from '../../common/pagination';
import { TrustLevel } from '../../common/trust';
import { newId } from '../../common/ids';
import type { Db } from '../../persistence/db';
import { findPage } from '../../persistence/paginate';
import { MemoryScope, type MemoryStore } from '../memory';
import { claimedKind, MIME_OF, SUPPORTED_FORMATS } from './extract/document-format';
import { Document } from './document.entity';
import { DocumentChunk } from './document-chunk.entity';
import type { DocumentFiles } from './document-files';
import type { DocumentIngestJobs, DocumentLimits } from './document-ports';
import { chunkItemId, DocumentStatus } from './document.types';

export interface DocumentFilter {
  status?: DocumentStatus | null;
  scope?: MemoryScope | null;
  /** ADMIN: one user's documents. */
  userId?: string | null;
  groupId?: string | null;
}

/** A new document: its bytes, or a file already on disk (an upload streamed to `files.incomingDir`). */
export interface AddDocumentInput {
  name: string;
  mimeType?: string | null;
  data?: Buffer;
  file?: { path: string; size: number };
  scope?: MemoryScope | null;
  groupId?: string | null;
  /** The chat it came from (told when ingestion ends); set by channels. */
  source?: { channel: string; chatId: string } | null;
}

/** The answer for a file of a type we do not read. */
export function unsupportedTypeMessage(name: string, mimeType: string | null | undefined): string {
  return `Unsupported type: "${name}"${mimeType ? ` (${mimeType})` : ''} cannot be read; send a ${SUPPORTED_FORMATS} file.`;
}

/** A file name safe to show and store: no folders, no control characters, at most 200 characters. */
export function cleanDocumentName(name: string): string {
  const base = name.replace(/\\/g, '/').split('/').pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').replace(/\s+/g, ' ').trim();
  return (clean || 'document').slice(0, 200);
}

/**
 * Documents as users see them (DESIGN §10): add one (checked, stored, queued for ingestion), list and read
 * the ones the actor may see, delete (chunks and vectors everywhere) and re-index. Access like memories:
 * MEMBER and above; a document is private to whoever added it, a group chat's collection, or global
 * (ADMIN); ADMIN and above see and manage everyone's.
 */
export class DocumentService {
  constructor(
    private readonly db: Db,
    private readonly files: DocumentFiles,
    private readonly jobs: DocumentIngestJobs,
    private readonly store: MemoryStore,
    readonly limits: DocumentLimits,
  ) {}

  async add(ctx: Ctx, input: AddDocumentInput): Promise<Document> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'documents');
    if (!ctx.userId) throw new ForbiddenError('Documents belong to a user; act as one.');
    const name = cleanDocumentName(input.name);
    const kind = claimedKind(name, input.mimeType);
    if (!kind) throw new UserInputError(unsupportedTypeMessage(name, input.mimeType), 'mimeType');
    const size = input.data?.length ?? input.file?.size ?? 0;
    if (!input.data && !input.file) throw new UserInputError('The document has no content.', 'contentBase64');
    if (size === 0) throw new UserInputError('The document is empty.', 'contentBase64');
    if (size > this.limits.maxBytes) {
      throw new UserInputError(`"${name}" is ${formatBytes(size)}; documents may be at most ${formatBytes(this.limits.maxBytes)} (documents.max_bytes).`, 'contentBase64');
    }
    const scope = input.scope ?? MemoryScope.USER;
    let groupId: string | null = null;
    if (scope === MemoryScope.GLOBAL) access.requireTrust(ctx, TrustLevel.ADMIN, 'global documents');
    if (scope === MemoryScope.GROUP) {
      // A group chat adds to its own collection; elsewhere only ADMINs name a group.
      if (!input.source) access.requireTrust(ctx, TrustLevel.ADMIN, 'group documents');
      groupId = input.groupId?.trim() || null;
      if (!groupId) throw new UserInputError('groupId is required for a group document.', 'groupId');
    }
    const mimeType = (input.mimeType ?? '').split(';')[0]!.trim().toLowerCase() || MIME_OF[kind];
    const doc = Object.assign(new Document(), {
      name,
      mimeType: mimeType.slice(0, 120),
      sizeBytes: size,
      scope,
      userId: ctx.userId,
      groupId: groupId as string | null,
      status: DocumentStatus.QUEUED,
      error: null as string | null,
      progress: 0,
      pages: null as number | null,
      chunkCount: 0,
      contentHash: '',
      jobId: null as string | null,
      sourceChannel: input.source?.channel ?? null,
      sourceChatId: input.source?.chatId ?? null,
    });
    doc.id = newId();
    if (input.data) {
      doc.contentHash = createHash('sha256').update(input.data).digest('hex');
      await this.files.write(doc.id, input.data);
    } else {
      doc.contentHash = await hashFile(input.file!.path);
      await this.files.adopt(doc.id, input.file!.path);
    }
    try {
      await this.db.repo(ctx, Document).insert(doc);
      doc.jobId = await this.jobs.enqueueIngest(ctx, doc.id);
      await this.db.repo(ctx, Document).update({ id: doc.id }, { jobId: doc.jobId });
    } catch (err) {
      await this.db.repo(ctx, Document).delete({ id: doc.id }).catch(() => undefined);
      await this.files.remove(doc.id);
      throw err;
    }
    return doc;
  }

  /** `addDocument`: the content comes as base64 (small files; larger ones go through `POST /uploads`). */
  addBase64(ctx: Ctx, input: Omit<AddDocumentInput, 'data' | 'file' | 'source'> & { contentBase64: string }): Promise<Document> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'documents');
    const b64 = input.contentBase64.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 === 1) throw new UserInputError('contentBase64 is not valid base64.', 'contentBase64');
    const { contentBase64: _, ...rest } = input;
    return this.add(ctx, { ...rest, data: Buffer.from(b64, 'base64') });
  }

  /** A fresh path for an upload being streamed to disk (then handed to `add` as `file`). */
  uploadPath(): string {
    return path.join(this.files.incomingDir, `${newId()}.part`);
  }

  /** Documents the actor may see, newest first: own and global ones; everyone's for ADMIN and above. */
  findMany(ctx: Ctx, filter: DocumentFilter, page: PageArgs): Promise<Page<Document>> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'documents');
    const base: FindOptionsWhere<Document> = {};
    if (filter.status) base.status = filter.status;
    if (filter.groupId) base.groupId = filter.groupId;
    let where: Array<FindOptionsWhere<Document>>;
    if (access.seesEveryone(ctx)) {
      where = [{ ...base, ...(filter.scope ? { scope: filter.scope } : {}), ...(filter.userId ? { userId: filter.userId } : {}) }];
    } else {
      if (filter.userId && filter.userId !== ctx.userId) throw new ForbiddenError("Other users' documents are listed by ADMINs only.");
      const own = { ...base, userId: ctx.userId! };
      const global = { ...base, scope: MemoryScope.GLOBAL };
      where = filter.scope === MemoryScope.GLOBAL ? [global] : filter.scope ? [{ ...own, scope: filter.scope }] : [own, global];
    }
    return findPage(this.db.repo(ctx, Document), where, page, 'DESC');
  }

  /** A document the actor may see (own, global, or any for ADMIN); NotFound otherwise. */
  async get(ctx: Ctx, id: string): Promise<Document> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'documents');
    const doc = await this.db.repo(ctx, Document).findOneBy({ id });
    if (!doc || !(access.seesEveryone(ctx) || doc.userId === ctx.userId || doc.scope === MemoryScope.GLOBAL)) throw new NotFoundError('Document', id);
    return doc;
  }

  /** A document the actor may change: one they added, or any for ADMIN and above. */
  private async getWritable(ctx: Ctx, id: string): Promise<Document> {
    const doc = await this.get(ctx, id);
    if (!access.seesEveryone(ctx) && doc.userId !== ctx.userId) throw new ForbiddenError('You may only change documents you added.');
    return doc;
  }

  /** Deletes the document, its chunks, their index entries (keyword and vector) and the file. */
  async delete(ctx: Ctx, id: string): Promise<boolean> {
    const doc = await this.getWritable(ctx, id);
    await this.removeIndexed(ctx, doc.id);
    await this.db.repo(ctx, Document).delete({ id: doc.id });
    await this.files.remove(doc.id);
    return true;
  }

  /** Reads the stored file again (after a failure, a limit or embedder change): back to QUEUED. */
  async reindex(ctx: Ctx, id: string): Promise<Document> {
    const doc = await this.getWritable(ctx, id);
    if (doc.status === DocumentStatus.EXTRACTING || doc.status === DocumentStatus.EMBEDDING) {
      throw new UserInputError(`"${doc.name}" is being read right now; try again when it is ${DocumentStatus.READY} or ${DocumentStatus.FAILED}.`, 'id');
    }
    await this.db.repo(ctx, Document).update({ id: doc.id }, { status: DocumentStatus.QUEUED, error: null, progress: 0 });
    const jobId = await this.jobs.enqueueIngest(ctx, doc.id);
    await this.db.repo(ctx, Document).update({ id: doc.id }, { jobId });
    // The state this call left it in: the ingest worker may already have moved it on.
    return Object.assign(doc, { status: DocumentStatus.QUEUED, error: null, progress: 0, jobId });
  }

  /** Whether the actor added the document whose ingest job this is (they may follow it with `jobProgress`). */
  async ownsJob(ctx: Ctx, jobId: string): Promise<boolean> {
    if (!ctx.userId || !jobId.startsWith('ingest-')) return false;
    return this.db.repo(ctx, Document).existsBy({ jobId, userId: ctx.userId });
  }

  /** The user's documents for `/docs` (own ones; in a group chat that group's collection). */
  async listForChat(ctx: Ctx, groupId: string | null, limit: number): Promise<{ docs: Document[]; total: number }> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'documents');
    const where: FindOptionsWhere<Document> = groupId ? { scope: MemoryScope.GROUP, groupId } : { scope: MemoryScope.USER, userId: ctx.userId! };
    const [docs, total] = await this.db.repo(ctx, Document).findAndCount({ where, order: { id: 'DESC' }, take: limit });
    return { docs, total };
  }

  /** Removes a document's chunks from the index and the chunks table. */
  async removeIndexed(ctx: Ctx, documentId: string): Promise<void> {
    const chunks = await this.db.repo(ctx, DocumentChunk).find({ where: { documentId }, select: { id: true } });
    const ids = chunks.map((c) => c.id);
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      await this.store.delete(ctx, part.map(chunkItemId));
      await this.db.repo(ctx, DocumentChunk).delete({ id: In(part) });
    }
  }
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(n / 1024)} KB`;
}

async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const part of createReadStream(file)) hash.update(part as Buffer);
  return hash.digest('hex');
}
