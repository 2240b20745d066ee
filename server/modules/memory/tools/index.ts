import type { Db } from '../../../persistence/db';
import type { Tool } from '../../tools';
import type { MemorySearchService } from '../memory-search.service';
import type { MemoryService } from '../memory.service';
import { createMemorySaveTool } from './memory-save.tool';
import { createMemorySearchTool } from './memory-search.tool';

/** The memory tools (`memory_search`, `memory_save`), MEMBER and above. */
export function createMemoryTools(deps: { search: MemorySearchService; memories: MemoryService; db: Db }): Tool[] {
  return [createMemorySearchTool(deps) as Tool, createMemorySaveTool(deps) as Tool];
}

export { createMemorySearchTool, type MemorySearchArgs } from './memory-search.tool';
export { createMemorySaveTool, type MemorySaveArgs } from './memory-save.tool';
