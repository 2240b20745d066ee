export { Memory } from './memory.entity';
export { MemoryType, MemoryScope } from './memory.types';
export { MemoryService, MAX_MEMORY_CHARS, type MemoryFilter, type CreateMemoryInput, type UpdateMemoryInput } from './memory.service';

// Search index
export {
  GLOBAL_OWNER,
  userOwner,
  groupOwner,
  type MemoryStore,
  type MemoryStoreItem,
  type MemoryStoreHit,
  type MemoryStoreSearchOptions,
} from './memory-store';
export { SqlMemoryStore, type SqlMemoryStoreOptions } from './sql-memory-store';
export { MemoryEmbedder, type EmbeddingSource, type MemoryEmbedderOptions } from './memory-embedder';
export { resolveRankingOptions, type RankingOptions } from './hybrid-ranking';
export { queryTerms, tokenize, foldText, contentHash } from './memory-text';
export { MemoryIndexEntry } from './memory-index-entry.entity';
export { MemoryEmbedding } from './memory-embedding.entity';
