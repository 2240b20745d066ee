import { In, MoreThan } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { Db } from '../../persistence/db';
import { Memory } from './memory.entity';
import { DOCUMENT_ITEM_PREFIX, GLOBAL_OWNER, groupOwner, userOwner, type MemoryStore, type MemoryStoreItem } from './memory-store';
import { MemoryScope } from './memory.types';
import { nextMacrotask, RECONCILE_PAGE } from './reconcile-paging';

/** Visibility key of a memory, or null when its scope fields are incomplete (never indexed then). */
export function ownerOfMemory(memory: Pick<Memory, 'scope' | 'userId' | 'groupId'>): string | null {
  switch (memory.scope) {
    case MemoryScope.USER:
      return memory.userId ? userOwner(memory.userId) : null;
    case MemoryScope.GROUP:
      return memory.groupId ? groupOwner(memory.groupId) : null;
    case MemoryScope.GLOBAL:
      return GLOBAL_OWNER;
    default:
      return null;
  }
}

export function memoryToItem(memory: Memory): MemoryStoreItem | null {
  const owner = ownerOfMemory(memory);
  if (!owner) return null;
  return { id: memory.id, owner, type: memory.type, content: memory.content, importance: memory.importance, updatedAt: memory.updatedAt };
}

/** Told by MemoryService after every change, so the search index follows the memories table. */
export interface MemoryIndexHook {
  indexed(ctx: Ctx, memories: readonly Memory[]): Promise<void>;
  removed(ctx: Ctx, ids: readonly string[]): Promise<void>;
}

const BATCH = 500;
/** Memories per step of a re-index (one progress report each). */
const REINDEX_BATCH = 50;

/**
 * Keeps a MemoryStore in step with the `memories` table: every create/update/delete through MemoryService
 * (the hook), and `reconcile` at start (rows written behind the service's back, a new backend, an index
 * that was lost). Index failures are logged, never thrown: the memory itself is saved either way and the
 * next reconcile repairs the index.
 */
export class MemoryIndexer implements MemoryIndexHook {
  constructor(
    private readonly db: Db,
    readonly store: MemoryStore,
    private readonly logger: Logger,
  ) {}

  async indexed(ctx: Ctx, memories: readonly Memory[]): Promise<void> {
    const items = memories.map(memoryToItem).filter((i): i is MemoryStoreItem => i !== null);
    if (!items.length) return;
    try {
      await this.store.upsert(ctx, items);
    } catch (err) {
      this.logger.error({ err, ids: items.map((i) => i.id) }, 'could not index memories — the next reconcile retries');
    }
  }

  async removed(ctx: Ctx, ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    try {
      await this.store.delete(ctx, ids);
    } catch (err) {
      this.logger.error({ err, ids }, 'could not remove memories from the index — the next reconcile retries');
    }
  }

  /**
   * Rebuilds the index entries of every memory, or of one user's, in batches, reporting `(done, total)`
   * after each; then gives entries without a vector one. Unlike `reconcile` it rewrites entries that look
   * current (a changed tokenizer or embedder, a suspected corrupt index). Stops early when `signal` aborts.
   */
  async reindex(
    ctx: Ctx,
    userId: string | null,
    onProgress: (done: number, total: number) => Promise<void> | void = () => undefined,
    signal?: AbortSignal,
  ): Promise<{ indexed: number; total: number; embedded: number }> {
    const rows = await this.db.repo(ctx, Memory).find({ select: { id: true }, where: userId ? { userId } : {}, order: { createdAt: 'ASC' } });
    const ids = rows.map((r) => r.id);
    let done = 0;
    await onProgress(0, ids.length);
    for (let i = 0; i < ids.length && !signal?.aborted; i += REINDEX_BATCH) {
      const batch = await this.db.repo(ctx, Memory).findBy({ id: In(ids.slice(i, i + REINDEX_BATCH)) });
      await this.store.upsert(ctx, batch.map(memoryToItem).filter((x): x is MemoryStoreItem => x !== null));
      done += batch.length;
      await onProgress(done, ids.length);
    }
    const embedded = signal?.aborted ? 0 : ((await this.store.syncVectors?.(ctx, signal)) ?? 0);
    this.logger.info({ store: this.store.name, userId, indexed: done, embedded }, 'memories re-indexed');
    return { indexed: done, total: ids.length, embedded };
  }

  /**
   * Brings the index in line with the table: indexes rows that are missing or changed, drops items whose
   * memory is gone, then gives items without a vector one (when an embedder works). Returns the counts.
   */
  async reconcile(ctx: Ctx, signal?: AbortSignal): Promise<{ indexed: number; removed: number; embedded: number }> {
    const { stale, gone } = this.store.differences ? await this.store.differences(ctx, signal) : await this.compareEntries(ctx, signal);
    if (signal?.aborted) return { indexed: 0, removed: 0, embedded: 0 };
    for (let i = 0; i < stale.length && !signal?.aborted; i += BATCH) {
      const batch = await this.db.repo(ctx, Memory).findBy({ id: In(stale.slice(i, i + BATCH)) });
      await this.store.upsert(ctx, batch.map(memoryToItem).filter((x): x is MemoryStoreItem => x !== null));
    }
    if (gone.length) await this.store.delete(ctx, gone);
    const embedded = (await this.store.syncVectors?.(ctx, signal)) ?? 0;
    if (stale.length || gone.length || embedded) {
      this.logger.info({ store: this.store.name, indexed: stale.length, removed: gone.length, embedded }, 'memory index reconciled');
    }
    return { indexed: stale.length, removed: gone.length, embedded };
  }

  /** The differences of a store that cannot compare itself: every entry read, then the table in pages. */
  private async compareEntries(ctx: Ctx, signal?: AbortSignal): Promise<{ stale: string[]; gone: string[] }> {
    // The index first, then the table: an entry is `gone` only when its memory was deleted after the index
    // was read, never because it was written after the table was read.
    const indexed = await this.store.entries(ctx);
    const stale: string[] = [];
    const live = new Set<string>();
    // The table in pages by id, with the event loop free between pages (see reconcile-paging.ts).
    for (let after: string | null = null; ; ) {
      const rows: Array<Pick<Memory, 'id' | 'updatedAt'>> = await this.db.repo(ctx, Memory).find({
        select: { id: true, updatedAt: true },
        where: after === null ? {} : { id: MoreThan(after) },
        order: { id: 'ASC' },
        take: RECONCILE_PAGE,
      });
      for (const r of rows) {
        live.add(r.id);
        if (indexed.get(r.id) !== r.updatedAt.getTime()) stale.push(r.id);
      }
      if (rows.length < RECONCILE_PAGE || signal?.aborted) break;
      after = rows[rows.length - 1]!.id;
      await nextMacrotask();
    }
    // Document chunks are kept in step by the documents module.
    const gone = [...indexed.keys()].filter((id) => !live.has(id) && !id.startsWith(DOCUMENT_ITEM_PREFIX));
    return { stale, gone };
  }
}
