import type { MemoryStoreHit } from './memory-store';
import { tokenize } from './memory-text';

// === Hybrid ranking shared by every MemoryStore
// Keyword score: the IDF-weighted share of the query's terms an item contains, IDF counted only among the
// items the caller may see (so scores reveal nothing about other people's memories). Unlike raw bm25 it is
// bounded (0..1) and comparable across corpora of any size, which is what makes `memory.min_score`
// meaningful. Vector score: cosine similarity. Both are combined with the configured weights, then
// scaled by importance and recency, filtered by the threshold and picked with MMR for diversity.

/** Tuning of the ranking; the weights come from `memory.keyword_weight` / `memory.vector_weight`. */
export interface RankingOptions {
  /** @default 0.4 */
  keywordWeight?: number;
  /** @default 0.6 */
  vectorWeight?: number;
  /** MMR trade-off: 1 = relevance only, 0 = diversity only. @default 0.75 */
  mmrLambda?: number;
  /** Age at which the recency bonus is halved, in days. @default 60 */
  recencyHalfLifeDays?: number;
  /** Most an old item loses to recency decay (0..1). @default 0.2 */
  recencyWeight?: number;
}

export type ResolvedRankingOptions = Required<RankingOptions>;

export function resolveRankingOptions(options: RankingOptions = {}): ResolvedRankingOptions {
  let keywordWeight = options.keywordWeight ?? 0.4;
  let vectorWeight = options.vectorWeight ?? 0.6;
  if (keywordWeight + vectorWeight <= 0) keywordWeight = vectorWeight = 0.5;
  return {
    keywordWeight,
    vectorWeight,
    mmrLambda: options.mmrLambda ?? 0.75,
    recencyHalfLifeDays: options.recencyHalfLifeDays ?? 60,
    recencyWeight: options.recencyWeight ?? 0.2,
  };
}

/** A candidate found by keyword or vector search, before ranking. */
export interface RankCandidate {
  id: string;
  owner: string;
  type: string;
  content: string;
  importance: number;
  updatedAt: Date;
  /** Cosine similarity to the query vector, or null when this item took no part in vector search. */
  vector: number | null;
  /** The item's embedding, for diversity; null when unknown. */
  embedding: Float32Array | null;
}

/** Corpus statistics of the query terms among the visible items. */
export interface TermStats {
  /** Visible items. */
  total: number;
  /** Visible items containing each term (terms absent from the map count as 0). */
  docFreq: Map<string, number>;
}

/** IDF of a term (BM25's, kept positive). */
function idf(total: number, df: number): number {
  return Math.log(1 + (total - df + 0.5) / (df + 0.5));
}

/** Weight (IDF) of each query term that occurs among the visible items, and their sum. */
export function keywordWeights(terms: readonly string[], stats: TermStats): { weights: Map<string, number>; denominator: number } {
  const weights = new Map<string, number>();
  let denominator = 0;
  for (const term of terms) {
    const df = stats.docFreq.get(term) ?? 0;
    if (df <= 0) continue;
    const w = idf(stats.total, df);
    weights.set(term, w);
    denominator += w;
  }
  return { weights, denominator };
}

/**
 * Keyword score of a text: Σ idf of the query terms it contains / Σ idf of the query terms that occur
 * anywhere in the visible corpus (words that occur nowhere cannot tell items apart and are ignored).
 */
export function keywordScorer(terms: readonly string[], stats: TermStats): (content: string) => number {
  const { weights, denominator } = keywordWeights(terms, stats);
  if (denominator <= 0) return () => 0;
  return (content) => {
    const tokens = new Set(tokenize(content));
    let matched = 0;
    for (const [term, w] of weights) if (tokens.has(term)) matched += w;
    return matched / denominator;
  };
}

function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/** Cosine similarity of two vectors, clipped to 0..1 (what the vector score means). */
export function similarity(a: Float32Array, b: Float32Array): number {
  return Math.max(0, Math.min(1, cosine(a, b)));
}

function tokensOf(item: { hit: MemoryStoreHit; tokens: Set<string> | null }): Set<string> {
  return (item.tokens ??= new Set(tokenize(item.hit.content)));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let common = 0;
  for (const t of a) if (b.has(t)) common++;
  return common / (a.size + b.size - common);
}

/**
 * Ranks candidates: hybrid score (weights renormalized over the signals an item has), × importance
 * (0.85 + 0.3·importance, neutral at 0.5), × recency, threshold, then greedy MMR selection.
 */
export function rankCandidates(
  candidates: readonly RankCandidate[],
  keywordScore: (content: string) => number,
  options: ResolvedRankingOptions & { limit: number; minScore: number; vectorOnlyMinSimilarity?: number; now?: Date },
): MemoryStoreHit[] {
  const now = (options.now ?? new Date()).getTime();
  const dayMs = 86_400_000;
  const seen = new Set<string>();
  const scored: Array<{ hit: MemoryStoreHit; tokens: Set<string> | null; embedding: Float32Array | null }> = [];
  for (const c of candidates) {
    if (seen.has(c.id)) continue;
    seen.add(c.id);
    const keyword = keywordScore(c.content);
    if (keyword <= 0 && (c.vector ?? 0) < (options.vectorOnlyMinSimilarity ?? 0)) continue;
    const base =
      c.vector === null
        ? keyword
        : (options.keywordWeight * keyword + options.vectorWeight * c.vector) / (options.keywordWeight + options.vectorWeight);
    const ageDays = Math.max(0, (now - c.updatedAt.getTime()) / dayMs);
    const recency = 1 - options.recencyWeight * (1 - Math.pow(0.5, ageDays / options.recencyHalfLifeDays));
    const importance = 0.85 + 0.3 * Math.max(0, Math.min(1, c.importance));
    const score = Math.max(0, Math.min(1, base * importance * recency));
    if (score <= 0 || score < options.minScore) continue;
    scored.push({
      hit: {
        id: c.id,
        owner: c.owner,
        type: c.type,
        content: c.content,
        importance: c.importance,
        updatedAt: c.updatedAt,
        score,
        keywordScore: keyword,
        vectorScore: c.vector,
      },
      tokens: null, // only when diversity is by words (no embedding)
      embedding: c.embedding,
    });
  }
  scored.sort((a, b) => b.hit.score - a.hit.score);
  // Maximal marginal relevance: each pick trades relevance against similarity to what is already picked.
  const picked: typeof scored = [];
  const pool = scored.slice(0, Math.max(options.limit * 5, 30));
  // Each pool item's highest similarity to what is picked so far, updated with every new pick only.
  const maxSims = pool.map(() => 0);
  const contents = new Set<string>();
  while (picked.length < options.limit && pool.length) {
    let bestIndex = -1;
    let bestValue = -Infinity;
    for (let i = 0; i < pool.length; i++) {
      const value = options.mmrLambda * pool[i]!.hit.score - (1 - options.mmrLambda) * maxSims[i]!;
      if (value > bestValue) {
        bestValue = value;
        bestIndex = i;
      }
    }
    const [chosen] = pool.splice(bestIndex, 1);
    maxSims.splice(bestIndex, 1);
    const normalized = chosen!.hit.content.trim().toLowerCase();
    if (contents.has(normalized)) continue; // exact duplicates add nothing
    contents.add(normalized);
    picked.push(chosen!);
    for (let i = 0; i < pool.length; i++) {
      const item = pool[i]!;
      const sim = item.embedding && chosen!.embedding ? similarity(item.embedding, chosen!.embedding) : jaccard(tokensOf(item), tokensOf(chosen!));
      if (sim > maxSims[i]!) maxSims[i] = sim;
    }
  }
  return picked.map((p) => p.hit);
}
