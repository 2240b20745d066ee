import { registerEnumType } from 'type-graphql';
import { DOCUMENT_ITEM_PREFIX } from '../memory';

/** Where a document is in its ingestion: `QUEUED → EXTRACTING → EMBEDDING → READY | FAILED`. */
export enum DocumentStatus {
  QUEUED = 'QUEUED',
  EXTRACTING = 'EXTRACTING',
  EMBEDDING = 'EMBEDDING',
  READY = 'READY',
  FAILED = 'FAILED',
}
registerEnumType(DocumentStatus, { name: 'DocumentStatus', description: 'QUEUED → EXTRACTING → EMBEDDING → READY | FAILED (with a reason).' });

/** Where a search hit comes from. */
export enum KnowledgeSource {
  MEMORY = 'MEMORY',
  DOCUMENT = 'DOCUMENT',
}
registerEnumType(KnowledgeSource, { name: 'KnowledgeSource', description: 'Whether a search hit is a memory or a chunk of a document.' });

/** Index item id of a chunk: `doc:<chunkId>` (memory ids never start so). */
export function chunkItemId(chunkId: string): string {
  return `${DOCUMENT_ITEM_PREFIX}${chunkId}`;
}

/** The chunk id of an index item id, or null when the item is not a document chunk. */
export function chunkIdOfItem(itemId: string): string | null {
  return itemId.startsWith(DOCUMENT_ITEM_PREFIX) ? itemId.slice(DOCUMENT_ITEM_PREFIX.length) : null;
}

/** How a passage is cited: `name, p. 3` (no page for formats without pages). */
export function citationOf(name: string, page: number | null): string {
  return page ? `${name}, p. ${page}` : name;
}
