import { In } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import type { Db } from '../../persistence/db';
import { MemoryEmbedding } from './memory-embedding.entity';
import { contentHash } from './memory-text';

/** Where vectors come from: the model router's `embeddings` role in the app, anything in tests. */
export interface EmbeddingSource {
  /** `provider/model`; part of the cache key, so a model change never mixes vectors. */
  readonly model: string;
  /** `ctx` is whom the vectors are for: their budget pays for the call. */
  embed(texts: string[], signal: AbortSignal, ctx?: Ctx): Promise<number[][]>;
  /** Loads what the first `embed` would load (client code), without a call. @default nothing */
  prepare?(): void;
}

export interface MemoryEmbedderOptions {
  /** Texts per embeddings request. @default 64 */
  batchSize?: number;
  /** Time limit of one embeddings request. @default 30000 */
  timeoutMs?: number;
  /** After a failure, memory search stays keyword-only this long before the embedder is tried again. @default 300000 */
  retryAfterMs?: number;
  /** Query vectors kept in memory (recall and memory_search often ask the same). @default 256 */
  queryCacheSize?: number;
}

/** Float32 little-endian bytes of a vector, base64. */
export function encodeVector(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

const CACHE_CHUNK = 200;

/**
 * Embeddings for the memory stores: batched, cached by content hash + model in `memory_embeddings`, and
 * failure-tolerant. Without a source, or for `retryAfterMs` after a failure, it answers null and search is
 * keyword-only; the failure is logged once (warn), not per turn, and the recovery once (info).
 */
export class MemoryEmbedder {
  private source: EmbeddingSource | null = null;
  private readonly options: Required<MemoryEmbedderOptions>;
  private downUntil = 0;
  private failureReported = false;
  private readonly queryCache = new Map<string, Float32Array>();

  constructor(
    private readonly db: Db | null,
    private readonly logger: Logger,
    options: MemoryEmbedderOptions = {},
  ) {
    this.options = {
      batchSize: options.batchSize ?? 64,
      timeoutMs: options.timeoutMs ?? 30_000,
      retryAfterMs: options.retryAfterMs ?? 300_000,
      queryCacheSize: options.queryCacheSize ?? 256,
    };
  }

  /** Sets (or, with null, removes) where vectors come from. */
  setSource(source: EmbeddingSource | null): void {
    this.source = source;
    this.downUntil = 0;
    this.failureReported = false;
    this.queryCache.clear();
  }

  /** The configured model, also while it is failing (its stored vectors stay valid); null without one. */
  get model(): string | null {
    return this.source?.model ?? null;
  }

  /** Loads the source's client code ahead of the first query (see `EmbeddingSource.prepare`); a failure is left to that query. */
  prepare(): void {
    try {
      this.source?.prepare?.();
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'embeddings client did not load ahead of the first query');
    }
  }

  /** True when a source is set and not in its back-off after a failure. */
  get available(): boolean {
    return !!this.source && Date.now() >= this.downUntil;
  }

  /** Vectors of documents (cached by `hashes`); null when no embedder works right now. */
  async embedDocuments(ctx: Ctx, texts: readonly string[], hashes?: readonly string[]): Promise<Float32Array[] | null> {
    const source = this.source;
    if (!source || !this.available) return null;
    if (!texts.length) return [];
    const keys = hashes ?? texts.map(contentHash);
    const cached = await this.cacheLookup(ctx, source.model, keys);
    // One embedding per distinct content: repeated texts (and cached ones) are not sent again.
    const missing: number[] = [];
    const queued = new Set<string>();
    for (let i = 0; i < texts.length; i++) {
      const key = keys[i]!;
      if (cached.has(key) || queued.has(key)) continue;
      queued.add(key);
      missing.push(i);
    }
    const fresh = new Map<string, Float32Array>();
    for (let start = 0; start < missing.length; start += this.options.batchSize) {
      const batch = missing.slice(start, start + this.options.batchSize);
      const vectors = await this.call(source, batch.map((i) => texts[i]!), ctx);
      if (!vectors) return null;
      batch.forEach((i, k) => fresh.set(keys[i]!, vectors[k]!));
    }
    if (fresh.size) await this.cacheStore(ctx, source.model, fresh);
    return keys.map((k) => cached.get(k) ?? fresh.get(k)!);
  }

  /** Vector of a search query (kept in a small in-memory cache, never stored); null when no embedder works. */
  async embedQuery(ctx: Ctx, text: string): Promise<Float32Array | null> {
    const source = this.source;
    if (!source || !this.available) return null;
    const key = `${source.model}\n${text}`;
    const hit = this.queryCache.get(key);
    if (hit) {
      this.queryCache.delete(key);
      this.queryCache.set(key, hit);
      return hit;
    }
    const vectors = await this.call(source, [text], ctx);
    if (!vectors) return null;
    this.queryCache.set(key, vectors[0]!);
    if (this.queryCache.size > this.options.queryCacheSize) this.queryCache.delete(this.queryCache.keys().next().value!);
    return vectors[0]!;
  }

  private async call(source: EmbeddingSource, texts: string[], ctx: Ctx): Promise<Float32Array[] | null> {
    try {
      const raw = await source.embed(texts, AbortSignal.timeout(this.options.timeoutMs), ctx);
      if (raw.length !== texts.length || raw.some((v) => !v.length || v.length !== raw[0]!.length || v.some((x) => !Number.isFinite(x)))) {
        throw new Error(`the embedder returned ${raw.length} vectors of unequal or invalid size for ${texts.length} texts`);
      }
      if (this.failureReported) {
        this.logger.info({ model: source.model }, 'embeddings work again — memory search is hybrid (keyword + vector) again');
        this.failureReported = false;
      }
      return raw.map((v) => Float32Array.from(v));
    } catch (err) {
      this.downUntil = Date.now() + this.options.retryAfterMs;
      const detail = { model: source.model, err: (err as Error).message, retryInMs: this.options.retryAfterMs };
      if (!this.failureReported) {
        this.failureReported = true;
        this.logger.warn(
          detail,
          'embeddings failed — memory search is keyword-only until they work again. Fix: point ai.roles.embeddings at an embedding model',
        );
      } else {
        this.logger.debug(detail, 'embeddings still failing');
      }
      return null;
    }
  }

  private async cacheLookup(ctx: Ctx, model: string, keys: readonly string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    if (!this.db) return out;
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += CACHE_CHUNK) {
      const rows = await this.db.repo(ctx, MemoryEmbedding).find({
        select: { contentHash: true, vector: true },
        where: { model, contentHash: In(unique.slice(i, i + CACHE_CHUNK)) },
      });
      for (const row of rows) out.set(row.contentHash, decodeVector(row.vector));
    }
    return out;
  }

  private async cacheStore(ctx: Ctx, model: string, vectors: Map<string, Float32Array>): Promise<void> {
    if (!this.db) return;
    const now = new Date();
    const rows = [...vectors].map(([hash, v]) => ({ contentHash: hash, model, dims: v.length, vector: encodeVector(v), createdAt: now }));
    try {
      for (let i = 0; i < rows.length; i += CACHE_CHUNK) {
        await this.db.repo(ctx, MemoryEmbedding).createQueryBuilder().insert().values(rows.slice(i, i + CACHE_CHUNK)).orIgnore().execute();
      }
    } catch (err) {
      // A cache write that fails costs a re-embedding later, nothing more.
      this.logger.warn({ err: (err as Error).message }, 'could not store embeddings in the cache');
    }
  }
}
