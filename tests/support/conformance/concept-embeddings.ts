import { createHash } from 'node:crypto';
import type { EmbeddingSource } from '../../../server/modules/memory';

/** Words that mean the same to the test embedder (so vector search can find what keywords cannot). */
const CONCEPTS: Record<string, string> = {
  car: 'vehicle',
  automobile: 'vehicle',
  vehicle: 'vehicle',
  sedan: 'vehicle',
  dog: 'canine',
  puppy: 'canine',
  hound: 'canine',
  physician: 'doctor',
  doctor: 'doctor',
  medic: 'doctor',
};

/**
 * Deterministic embeddings for tests: feature hashing of words after mapping synonyms to one concept, so
 * "automobile" and "car" point the same way. Counts calls and texts, and can be made to fail.
 */
export class ConceptEmbeddings implements EmbeddingSource {
  readonly model: string;
  calls = 0;
  texts = 0;
  failing = false;
  /** Awaited inside each call before it answers (to change the index while an embedding is under way). */
  meanwhile: (() => Promise<void>) | null = null;

  constructor(
    readonly dims = 32,
    model = 'test/concepts',
  ) {
    this.model = model;
  }

  async embed(texts: string[]): Promise<number[][]> {
    this.calls++;
    this.texts += texts.length;
    if (this.failing) throw new Error('embeddings endpoint is down (test)');
    await this.meanwhile?.();
    return texts.map((t) => this.vector(t));
  }

  private vector(text: string): number[] {
    const v = new Array<number>(this.dims).fill(0);
    const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? ['empty'];
    for (const word of words) {
      const h = createHash('sha256').update(CONCEPTS[word] ?? word).digest();
      for (let k = 0; k < 3; k++) v[h.readUInt32LE(k * 4) % this.dims]! += h[20 + k]! & 1 ? 1 : -1;
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  }
}
