import type { ChangeFeed, ChangeTopic } from './change-feed';

/** How old a copy may get at most, whatever the feed says (a writer without the feed, a lost message). */
export const CHANGE_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

/**
 * A per-process copy of reads that rarely change (a token's user, plugin settings, skills), by key.
 * Every change of one of its topics, from this process or another (ChangeFeed), drops all of it; a copy
 * is also dropped after `ttlMs`, and none is kept while the feed is not live. A read
 * that started before a change is not kept, so a copy is never older than the last change it heard of.
 */
export class ChangeCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private generation = 0;

  constructor(
    private readonly feed: ChangeFeed,
    topics: readonly ChangeTopic[],
    private readonly ttlMs = CHANGE_CACHE_TTL_MS,
  ) {
    feed.onChange((topic) => {
      if (topic === null || topics.includes(topic)) this.clear();
    });
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    if (!this.feed.live) return load();
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.value;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation && this.feed.live) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { value, until: now + this.ttlMs });
    }
    return value;
  }

  /** Drops every copy, and any read still running is not kept. */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
