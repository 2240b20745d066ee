import type { Ctx } from '../../common/ctx';

/** Port: schedules the ingestion of a document on the `ingest` queue; returns the job id (`jobProgress`). */
export interface DocumentIngestJobs {
  enqueueIngest(ctx: Ctx, documentId: string): Promise<string>;
}

/** Limits of documents (`documents.*` config). */
export interface DocumentLimits {
  maxBytes: number;
  maxPages: number;
  maxTextChars: number;
  chunkTokens: number;
  chunkOverlap: number;
}
