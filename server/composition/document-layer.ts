import path from 'node:path';
import type { AppConfig } from '../config';
import type { Db } from '../persistence/db';
import type { SlashCommandService } from '../modules/commands';
import type { NoticeSender } from '../modules/events';
import {
  createDocumentSearchTool,
  DocumentInbox,
  DocumentFiles,
  DocumentIngestService,
  DocumentService,
  KnowledgeRecall,
  KnowledgeSearchService,
  registerDocumentCommands,
  type DocumentLimits,
} from '../modules/documents';
import type { Tool } from '../modules/tools';
import type { QueueEnv } from '../../jobs/bull';
import { ingestJobs } from '../../jobs/ingest';
import type { MemoryLayer } from './memory-layer';

export interface DocumentLayerDeps {
  config: AppConfig;
  db: Db;
  memory: MemoryLayer;
  queueEnv: QueueEnv;
  notices: NoticeSender;
}

/** The limits of `documents.*` and the chunking of `memory.chunk_tokens` / `memory.chunk_overlap`. */
export function documentLimits(config: AppConfig): DocumentLimits {
  return {
    maxBytes: config.documents.max_bytes,
    maxPages: config.documents.max_pages,
    maxTextChars: config.documents.max_text_chars,
    chunkTokens: config.memory.chunk_tokens,
    chunkOverlap: config.memory.chunk_overlap,
  };
}

/**
 * Documents of one process (DESIGN §10): files under `<data_dir>/documents`, the service behind GraphQL,
 * `/uploads` and the channels, the ingestion the `ingest` worker runs, and the search and recall that
 * merge document passages with memories in the memory index.
 */
export class DocumentLayer {
  readonly files: DocumentFiles;
  readonly service: DocumentService;
  readonly ingest: DocumentIngestService;
  readonly search: KnowledgeSearchService;
  readonly recall: KnowledgeRecall;
  /** Documents sent in chats. */
  readonly inbox: DocumentInbox;
  private readonly jobs: ReturnType<typeof ingestJobs>;

  constructor(private readonly deps: DocumentLayerDeps) {
    const { config, db, memory } = deps;
    const limits = documentLimits(config);
    this.files = new DocumentFiles(path.join(config.data_dir, 'documents'));
    this.jobs = ingestJobs(deps.queueEnv);
    this.service = new DocumentService(db, this.files, this.jobs, memory.store, limits);
    this.ingest = new DocumentIngestService(db, this.files, memory.store, this.service, deps.notices, limits);
    this.search = new KnowledgeSearchService(db, memory.store, memory.search);
    this.recall = new KnowledgeRecall(this.search, memory.search);
    this.inbox = new DocumentInbox(this.service);
  }

  /** `document_search`. */
  tools(): Tool[] {
    return [createDocumentSearchTool({ search: this.search, db: this.deps.db, minScore: this.deps.memory.search.minScore }) as Tool];
  }

  registerCommands(commands: SlashCommandService): void {
    registerDocumentCommands(commands, { documents: this.service });
  }

  close(): Promise<void> {
    return this.jobs.close();
  }
}
