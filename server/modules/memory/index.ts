export { Memory } from './memory.entity';
export { MemoryType, MemoryScope } from './memory.types';
export { MemoryService, MAX_MEMORY_CHARS, type MemoryFilter, type CreateMemoryInput, type UpdateMemoryInput } from './memory.service';
