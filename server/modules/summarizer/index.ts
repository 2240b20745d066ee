// Public surface of the summarizer module (DESIGN §5): per-exchange memories, compaction, the valve.
export { SummarizerService, memoryOwnerOf, type MemoryWriter, type MemoryOwner, type ExchangeRef } from './summarizer.service';
export { AutoSummarizer, type SummaryJobs } from './auto-summarizer';
export { parseMemoryCandidates, MAX_CANDIDATES, type MemoryCandidate, type ParsedCandidates } from './memory-candidates';
export { SUMMARY_SECTIONS, normalizeSummary, parseSummarySections, findIdentifiers, hasAllSections, type SummarySection } from './structured-summary';
export {
  CompactionService,
  recentTurns,
  idsBefore,
  SUMMARY_KEY_PREFIX,
  type CompactOptions,
  type CompactionResult,
  type CompactionReason,
} from './compaction.service';
export { CompactionValve } from './compaction-valve';
export { registerSummaryCommands } from './summary-commands';
