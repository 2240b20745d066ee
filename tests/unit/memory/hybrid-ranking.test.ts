import { keywordScorer, rankCandidates, resolveRankingOptions, type RankCandidate } from '../../../server/modules/memory/hybrid-ranking';
import { queryTerms } from '../../../server/modules/memory';

const now = new Date('2026-12-01T12:00:00Z');
const cand = (id: string, content: string, extra: Partial<RankCandidate> = {}): RankCandidate => ({
  id,
  owner: 'user:a',
  type: 'fact',
  content,
  importance: 0.5,
  updatedAt: now,
  vector: null,
  embedding: null,
  ...extra,
});

describe('hybrid ranking', () => {
  it('query terms drop stopwords and single letters, fold accents, keep numbers', () => {
    expect(queryTerms("What's the code of my gym locker? Müller 7")).toEqual(['code', 'gym', 'locker', 'muller', '7']);
  });

  it('keyword score is the IDF-weighted share of query terms present', () => {
    const score = keywordScorer(['gym', 'locker', 'code', 'unknownword'], { total: 100, docFreq: new Map([['gym', 10], ['locker', 5], ['code', 50]]) });
    expect(score('gym locker code')).toBeCloseTo(1);
    expect(score('nothing here')).toBe(0);
    const rare = score('locker');
    const common = score('code');
    expect(rare).toBeGreaterThan(common);
    expect(rare + score('gym') + common).toBeCloseTo(1);
  });

  it('combines weights, importance and recency; applies minScore and limit', () => {
    const opts = { ...resolveRankingOptions({ keywordWeight: 0.4, vectorWeight: 0.6 }), limit: 10, minScore: 0, now };
    const kw = keywordScorer(['tea'], { total: 10, docFreq: new Map([['tea', 2]]) });
    const hits = rankCandidates(
      [
        cand('kw-only', 'I like tea'),
        cand('hybrid', 'tea please', { vector: 0.5 }),
        cand('old', 'tea again', { updatedAt: new Date(now.getTime() - 3650 * 86_400_000) }),
        cand('important', 'tea with honey', { importance: 1 }),
      ],
      kw,
      opts,
    );
    const byId = Object.fromEntries(hits.map((h) => [h.id, h]));
    expect(byId['kw-only']!.score).toBeCloseTo(1);
    expect(byId['hybrid']!.score).toBeCloseTo(0.4 * 1 + 0.6 * 0.5);
    expect(byId['old']!.score).toBeCloseTo(0.8, 1);
    expect(byId['important']!.score).toBe(1);
    expect(rankCandidates([cand('x', 'tea'), cand('y', 'coffee')], kw, { ...opts, minScore: 0.5 }).map((h) => h.id)).toEqual(['x']);
    expect(rankCandidates([cand('x', 'tea'), cand('y', 'tea too'), cand('z', 'tea three')], kw, { ...opts, limit: 2 })).toHaveLength(2);
  });

  it('vector-only hits need vectorOnlyMinSimilarity when it is set', () => {
    const opts = { ...resolveRankingOptions(), limit: 10, minScore: 0, now };
    const kw = keywordScorer(['car'], { total: 10, docFreq: new Map([['car', 1]]) });
    const list = [cand('close', 'automobile', { vector: 0.9 }), cand('vague', 'bicycle', { vector: 0.5 })];
    expect(rankCandidates(list, kw, opts).map((h) => h.id)).toEqual(['close', 'vague']);
    expect(rankCandidates(list, kw, { ...opts, vectorOnlyMinSimilarity: 0.8 }).map((h) => h.id)).toEqual(['close']);
  });

  it('MMR prefers a different item over a near-copy of the best one', () => {
    const e = (...v: number[]) => Float32Array.from(v);
    const opts = { ...resolveRankingOptions({ mmrLambda: 0.5 }), limit: 2, minScore: 0, now };
    const none = () => 0;
    const hits = rankCandidates(
      [
        cand('best', 'a', { vector: 0.9, embedding: e(1, 0, 0) }),
        cand('copy', 'b', { vector: 0.88, embedding: e(0.99, 0.05, 0) }),
        cand('other', 'c', { vector: 0.7, embedding: e(0, 1, 0) }),
      ],
      none,
      opts,
    );
    expect(hits.map((h) => h.id)).toEqual(['best', 'other']);
  });
});
