export { Memory } from './memory.entity';
export { MemoryType, MemoryScope } from './memory.types';
export { MemoryService, MAX_MEMORY_CHARS, type MemoryFilter, type CreateMemoryInput, type UpdateMemoryInput } from './memory.service';

// Search index
export {
  GLOBAL_OWNER,
  DOCUMENT_CHUNK_TYPE,
  DOCUMENT_ITEM_PREFIX,
  userOwner,
  groupOwner,
  type MemoryStore,
  type MemoryStoreItem,
  type MemoryStoreHit,
  type MemoryStoreSearchOptions,
} from './memory-store';
export { SqlMemoryStore, type SqlMemoryStoreOptions } from './sql-memory-store';
export { LanceDbMemoryStore, type LanceDbMemoryStoreOptions } from './lancedb-memory-store';
export { MemoryEmbedder, type EmbeddingSource, type MemoryEmbedderOptions } from './memory-embedder';
export { resolveRankingOptions, type RankingOptions } from './hybrid-ranking';
export { queryTerms, tokenize, foldText, contentHash } from './memory-text';
export { MemoryIndexEntry } from './memory-index-entry.entity';
export { MemoryEmbedding } from './memory-embedding.entity';
export { MemoryIndexer, ownerOfMemory, memoryToItem, type MemoryIndexHook } from './memory-indexer';
export {
  MemorySearchService,
  memoryGroupIdOf,
  visibleOwnersInSession,
  MAX_SEARCH_LIMIT,
  RECALL_VECTOR_ONLY_MIN_SIMILARITY,
  type SearchRunOptions,
  type MemorySearchResult,
  type MemorySearchOptions,
  type SessionScope,
} from './memory-search.service';
export { MemoryRecallService } from './memory-recall';
export { registerMemoryCommands } from './memory-commands';
export { createMemoryTools, createMemorySearchTool, createMemorySaveTool } from './tools';

// Workspace files
export { WorkspaceMemory, WORKSPACE_SOURCE_PREFIX, type WorkspaceMemoryOptions } from './workspace-memory';
export { chunkText, type ChunkOptions } from './workspace-chunker';
export { MemoryReindexCommands, type MemoryReindexJobs } from './memory-reindex';
