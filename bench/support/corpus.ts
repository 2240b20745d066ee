import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Ctx } from '../../server/common/ctx';
import { loadConfig } from '../../server/config';
import { ENTITIES } from '../../server/entities';
import { Memory, MemoryEmbedder, MemoryScope, MemoryType, SqlMemoryStore, type EmbeddingSource, type MemoryStoreItem } from '../../server/modules/memory';
import { keywordWeights, resolveRankingOptions } from '../../server/modules/memory/hybrid-ranking';
import { queryTerms, tokenize } from '../../server/modules/memory/memory-text';
import { openDatabase } from '../../server/persistence/data-source';
import { Db } from '../../server/persistence/db';

/** A tiny deterministic PRNG (mulberry32), so every run builds the same corpus. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(r: () => number): number {
  return Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
}

function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vel', 'dor', 'quin', 'bra', 'to', 'nex', 'pa', 'ul', 'ri', 'mon', 'ge', 'fa', 'zu', 'lin'];

/**
 * `diverse`: each topic has words of its own, so a query word matches a few hundred memories. `small`: every
 * memory is written with the same 40 words, drawn with Zipf frequencies (the commonest occurs in about 9 of
 * 10 memories, the rarest in 1 of 20) and unrelated to the topic, so a query word matches most rows and only
 * the vector tells topics apart (issue 29: keyword search must stay bounded when a word is everywhere).
 */
export type Vocabulary = 'diverse' | 'small';

/** Words of the small vocabulary. */
const SMALL_WORDS = 40;

/**
 * Synthetic memories with structure that both search sides can find: 200 topics, each with its own words and
 * a centroid vector; a memory mixes its topic's words with common ones and gets centroid + noise (or, with
 * the `small` vocabulary, words of the 40 shared ones).
 */
export class Corpus {
  readonly texts: string[] = [];
  readonly vectors: Float32Array[] = [];
  readonly byText = new Map<string, Float32Array>();
  private readonly centroids: Float32Array[] = [];
  private readonly topicWords: string[][] = [];
  private readonly common: string[] = [];
  /** Cumulative Zipf weights of the small vocabulary (`common`'s first SMALL_WORDS words). */
  private readonly zipf: number[] = [];
  private readonly r: () => number;
  private tokenSets?: Array<Set<string>>;

  constructor(
    readonly size: number,
    readonly dims: number,
    seed = 42,
    readonly vocabulary: Vocabulary = 'diverse',
  ) {
    this.r = rng(seed);
    const word = () => Array.from({ length: 2 + Math.floor(this.r() * 2) }, () => SYLLABLES[Math.floor(this.r() * SYLLABLES.length)]).join('');
    for (let i = 0; i < 300; i++) this.common.push(word());
    for (let t = 0; t < 200; t++) {
      this.topicWords.push(Array.from({ length: 25 }, word));
      this.centroids.push(normalize(Float32Array.from({ length: dims }, () => gaussian(this.r))));
    }
    let sum = 0;
    for (let w = 1; w <= SMALL_WORDS; w++) this.zipf.push((sum += 1 / w));
    for (let i = 0; i < size; i++) {
      const topic = Math.floor(this.r() * 200);
      const words = Array.from({ length: 8 + Math.floor(this.r() * 12) }, () =>
        vocabulary === 'small' ? this.smallWord() : this.r() < 0.5 ? this.pick(this.topicWords[topic]!) : this.pick(this.common),
      );
      const text = `${words.join(' ')} #${i}`;
      const v = this.noisy(topic, 0.25);
      this.texts.push(text);
      this.vectors.push(v);
      this.byText.set(text, v);
    }
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.r() * list.length)]!;
  }

  /** A word of the small vocabulary, drawn with Zipf frequencies. */
  private smallWord(r = this.r): string {
    const x = r() * this.zipf[this.zipf.length - 1]!;
    let w = 0;
    while (this.zipf[w]! < x) w++;
    return this.common[w]!;
  }

  private noisy(topic: number, noise: number): Float32Array {
    const c = this.centroids[topic]!;
    const scale = noise / Math.sqrt(this.dims);
    return normalize(Float32Array.from(c, (x) => x + gaussian(this.r) * scale * 3));
  }

  /**
   * A query: a few of one topic's words (small vocabulary: one of the 3 commonest words and two drawn by
   * frequency), and a vector near that topic.
   */
  query(i: number): { text: string; vector: Float32Array } {
    const r = rng(1000 + i);
    const topic = Math.floor(r() * 200);
    const words =
      this.vocabulary === 'small'
        ? [this.common[Math.floor(r() * 3)]!, this.smallWord(r), this.smallWord(r)]
        : Array.from({ length: 3 }, () => this.topicWords[topic]![Math.floor(r() * 25)]!);
    const text = words.join(' ');
    const v = this.noisy(topic, 0.3);
    this.byText.set(text, v);
    return { text, vector: v };
  }

  /** Milliseconds of the exact scan (`exactTopK`, k = 10) for each of the first 10 queries: the benches' floor. */
  exactScanTimes(queries: ReadonlyArray<{ vector: Float32Array }>): number[] {
    return queries.slice(0, 10).map((q) => {
      const t0 = performance.now();
      this.exactTopK(q.vector, 10);
      return performance.now() - t0;
    });
  }

  /** Indices of the `k` vectors nearest to `q` by cosine (vectors are normalized), by exact scan. */
  exactTopK(q: Float32Array, k: number, count = this.size): number[] {
    const best: Array<[number, number]> = [];
    for (let i = 0; i < count; i++) {
      const v = this.vectors[i]!;
      let dot = 0;
      for (let d = 0; d < q.length; d++) dot += q[d]! * v[d]!;
      if (best.length < k || dot > best[best.length - 1]![0]) {
        best.push([dot, i]);
        best.sort((a, b) => b[0] - a[0]);
        if (best.length > k) best.pop();
      }
    }
    return best.map(([, i]) => i);
  }

  /**
   * Indices of the `k` best memories by SqlMemoryStore's own hybrid score (default weights, relevance only:
   * every memory is equally important and old), by scoring every memory: what a keyword side that scores
   * every match finds, the reference of recall@10 for queries with words.
   */
  exactHybridTopK(text: string, q: Float32Array, k: number): number[] {
    this.tokenSets ??= this.texts.map((t) => new Set(tokenize(t)));
    const terms = queryTerms(text);
    const docFreq = new Map(terms.map((t) => [t, this.tokenSets!.filter((s) => s.has(t)).length]));
    const { weights, denominator } = keywordWeights(terms, { total: this.size, docFreq });
    const { keywordWeight, vectorWeight } = resolveRankingOptions();
    const scored: Array<[number, number]> = [];
    for (let i = 0; i < this.size; i++) {
      let matched = 0;
      for (const [term, w] of weights) if (this.tokenSets[i]!.has(term)) matched += w;
      const keyword = denominator > 0 ? matched / denominator : 0;
      const v = this.vectors[i]!;
      let dot = 0;
      for (let d = 0; d < q.length; d++) dot += q[d]! * v[d]!;
      scored.push([(keywordWeight * keyword + vectorWeight * Math.max(0, Math.min(1, dot))) / (keywordWeight + vectorWeight), i]);
    }
    return scored
      .sort((a, b) => b[0] - a[0])
      .slice(0, k)
      .map(([, i]) => i);
  }

  /** An embeddings source answering from the corpus (unknown texts get a fixed-seed random vector). */
  source(model: string): EmbeddingSource {
    return {
      model,
      embed: async (texts) => texts.map((t) => Array.from(this.byText.get(t) ?? normalize(Float32Array.from({ length: this.dims }, () => gaussian(this.r))))),
    };
  }
}

export interface CorpusDb {
  db: Db;
  store: SqlMemoryStore;
  embedder: MemoryEmbedder;
  ctx: Ctx;
  dataDir: string;
  close(): Promise<void>;
}

/** A migrated SQLite database in `dataDir` with the real SqlMemoryStore over a corpus-backed embedder. */
export async function openCorpusDb(corpus: Corpus, model: string, dataDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-bench-mem-'))): Promise<CorpusDb> {
  const config = loadConfig({ raw: { data_dir: dataDir }, env: {} });
  const { dataSource } = await openDatabase(config, ENTITIES);
  const logger = pino({ level: 'warn' });
  const db = new Db(dataSource);
  const embedder = new MemoryEmbedder(db, logger);
  embedder.setSource(corpus.source(model));
  const store = new SqlMemoryStore(db, { embedder, logger });
  const ctx = Ctx.system(logger, 'bench');
  await store.init(ctx);
  return { db, store, embedder, ctx, dataDir, close: async () => (await store.dispose(), await dataSource.destroy()) };
}

/** Memories rows for the corpus (user-scoped to `userId`) plus their index entries, in batches; returns memories/s of the index part. */
export async function fillMemories(t: CorpusDb, corpus: Corpus, userId: string, batch = 500, onBatch?: (done: number) => void): Promise<{ ids: string[]; indexPerSecond: number }> {
  const ids: string[] = [];
  let indexMs = 0;
  const at = new Date(Date.now() - 86_400_000);
  for (let start = 0; start < corpus.size; start += batch) {
    const rows: Memory[] = [];
    for (let i = start; i < Math.min(corpus.size, start + batch); i++) {
      const id = randomUUID();
      ids.push(id);
      rows.push(Object.assign(new Memory(), { id, type: MemoryType.FACT, scope: MemoryScope.USER, userId, groupId: null, content: corpus.texts[i]!, sourceSessionId: null, importance: 0.5, source: null, createdAt: at, updatedAt: at }));
    }
    await t.db.repo(t.ctx, Memory).insert(rows);
    const items: MemoryStoreItem[] = rows.map((m) => ({ id: m.id, owner: `user:${userId}`, type: m.type, content: m.content, importance: m.importance, updatedAt: m.updatedAt }));
    const t0 = performance.now();
    await t.store.upsert(t.ctx, items);
    indexMs += performance.now() - t0;
    onBatch?.(ids.length);
  }
  return { ids, indexPerSecond: (corpus.size / indexMs) * 1000 };
}
