import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import type { NoticeSender } from '../events';
import { DOCUMENT_CHUNK_TYPE, GLOBAL_OWNER, groupOwner, MemoryScope, userOwner, type MemoryStore, type MemoryStoreItem } from '../memory';
import { claimedKind } from './extract/document-format';
import { runExtraction, type ExtractionRunOptions } from './extract/extraction-runner';
import type { ExtractedChunk } from './extract/extraction.types';
import { Document } from './document.entity';
import { DocumentChunk } from './document-chunk.entity';
import type { DocumentFiles } from './document-files';
import type { DocumentLimits } from './document-ports';
import type { DocumentService } from './document.service';
import { chunkItemId, DocumentStatus } from './document.types';

/** Visibility key of a document's chunks in the search index (the same keys as memories). */
export function ownerOfDocument(doc: Pick<Document, 'scope' | 'userId' | 'groupId'>): string {
  if (doc.scope === MemoryScope.GLOBAL) return GLOBAL_OWNER;
  if (doc.scope === MemoryScope.GROUP && doc.groupId) return groupOwner(doc.groupId);
  return userOwner(doc.userId);
}

/** Chunks embedded and indexed per step (progress is reported after each). */
const INDEX_BATCH = 64;
/** Bytes a DOCX may unpack to at most, as a multiple of `documents.max_bytes`. */
const UNPACK_FACTOR = 8;

export interface IngestOptions {
  /** Memory and time limits of the extraction thread. */
  extraction?: Pick<ExtractionRunOptions, 'maxMemoryMb' | 'timeoutMs'>;
}

/**
 * The ingestion of one document (the `ingest` job calls it): extract on a thread of its own → chunk →
 * embed with the memory embedder and index in the memory search index → READY, or FAILED with the reason.
 * Progress goes to the job (0–50 extraction, 50–100 indexing) and the row; the chat the document came
 * from is told how it ended. A document deleted meanwhile leaves nothing behind.
 */
export class DocumentIngestService {
  constructor(
    private readonly db: Db,
    private readonly files: DocumentFiles,
    private readonly store: MemoryStore,
    private readonly documents: DocumentService,
    private readonly notices: NoticeSender | null,
    private readonly limits: DocumentLimits,
    private readonly options: IngestOptions = {},
  ) {}

  async ingest(ctx: Ctx, documentId: string, progress: (percent: number) => Promise<void> | void = () => undefined): Promise<{ status: DocumentStatus; chunks: number }> {
    const repo = () => this.db.repo(ctx, Document);
    const doc = await repo().findOneBy({ id: documentId });
    if (!doc) return { status: DocumentStatus.FAILED, chunks: 0 };
    const kind = claimedKind(doc.name, doc.mimeType);
    await repo().update({ id: doc.id }, { status: DocumentStatus.EXTRACTING, progress: 0, error: null });
    let lastPercent = -1;
    const report = async (percent: number) => {
      const p = Math.max(0, Math.min(100, Math.round(percent)));
      if (p === lastPercent) return;
      lastPercent = p;
      await progress(p);
      await repo().update({ id: doc.id }, { progress: p });
    };
    if (!kind) return this.fail(ctx, doc, 'unsupported type');
    let pending = Promise.resolve();
    const result = await runExtraction(
      {
        file: this.files.pathOf(doc.id),
        kind,
        limits: {
          maxPages: this.limits.maxPages,
          maxTextChars: this.limits.maxTextChars,
          maxUnpackedBytes: this.limits.maxBytes * UNPACK_FACTOR,
          chunkTokens: this.limits.chunkTokens,
          chunkOverlap: this.limits.chunkOverlap,
        },
      },
      { ...this.options.extraction, signal: ctx.signal, onProgress: (done, total) => void (pending = pending.then(() => report((done / Math.max(1, total)) * 50)).catch(() => undefined)) },
    ).catch((err: Error) => ({ ok: false as const, reason: `the document could not be read (${err.message})` }));
    await pending;
    if (!result.ok) return this.fail(ctx, doc, result.reason);
    if (!(await repo().existsBy({ id: doc.id }))) return { status: DocumentStatus.FAILED, chunks: 0 };
    await repo().update({ id: doc.id }, { status: DocumentStatus.EMBEDDING, pages: result.pages });
    await report(50);
    try {
      await this.documents.removeIndexed(ctx, doc.id);
      await this.index(ctx, doc, result.chunks, (done) => report(50 + (done / Math.max(1, result.chunks.length)) * 50));
    } catch (err) {
      await this.documents.removeIndexed(ctx, doc.id).catch(() => undefined);
      return this.fail(ctx, doc, `indexing failed (${(err as Error).message.slice(0, 200)})`);
    }
    // Deleted while it was indexed: take back what was just written.
    if (!(await repo().existsBy({ id: doc.id }))) {
      await this.documents.removeIndexed(ctx, doc.id);
      return { status: DocumentStatus.FAILED, chunks: 0 };
    }
    await repo().update({ id: doc.id }, { status: DocumentStatus.READY, progress: 100, chunkCount: result.chunks.length, pages: result.pages, error: null });
    const pages = result.pages ? `${result.pages} page${result.pages === 1 ? '' : 's'}, ` : '';
    await this.tell(ctx, doc, 'ready', `📄 "${doc.name}" is ready (${pages}${result.chunks.length} passage${result.chunks.length === 1 ? '' : 's'}). Ask me about it.`);
    return { status: DocumentStatus.READY, chunks: result.chunks.length };
  }

  private async index(ctx: Ctx, doc: Document, chunks: readonly ExtractedChunk[], done: (n: number) => Promise<void>): Promise<void> {
    const owner = ownerOfDocument(doc);
    const now = new Date();
    for (let i = 0; i < chunks.length; i += INDEX_BATCH) {
      if (ctx.signal?.aborted) throw new Error('aborted');
      const rows = chunks.slice(i, i + INDEX_BATCH).map((c) =>
        Object.assign(new DocumentChunk(), { id: `${doc.id}:${c.seq}`, documentId: doc.id, userId: doc.userId, seq: c.seq, page: c.page, heading: c.heading?.slice(0, 300) ?? null, content: c.content, createdAt: now }),
      );
      await this.db.repo(ctx, DocumentChunk).insert(rows);
      const items: MemoryStoreItem[] = rows.map((r) => ({ id: chunkItemId(r.id), owner, type: DOCUMENT_CHUNK_TYPE, content: r.content, importance: 0.5, updatedAt: doc.createdAt }));
      await this.store.upsert(ctx, items);
      await done(Math.min(chunks.length, i + INDEX_BATCH));
    }
  }

  private async fail(ctx: Ctx, doc: Document, reason: string): Promise<{ status: DocumentStatus; chunks: number }> {
    ctx.logger.info({ documentId: doc.id, reason }, 'document ingestion failed');
    const updated = await this.db.repo(ctx, Document).update({ id: doc.id }, { status: DocumentStatus.FAILED, error: reason.slice(0, 1000), progress: 100 });
    if (updated.affected) await this.tell(ctx, doc, 'failed', `⚠️ I could not read "${doc.name}": ${reason}.`);
    return { status: DocumentStatus.FAILED, chunks: 0 };
  }

  private async tell(ctx: Ctx, doc: Document, what: string, text: string): Promise<void> {
    if (!this.notices || !doc.sourceChannel || !doc.sourceChatId) return;
    try {
      await this.notices.notify(ctx, { channel: doc.sourceChannel, chatId: doc.sourceChatId, key: `document:${doc.id}:${doc.jobId ?? ''}:${what}` }, text);
    } catch (err) {
      ctx.logger.warn({ err, documentId: doc.id }, 'could not tell the chat how the document ingestion ended');
    }
  }
}
