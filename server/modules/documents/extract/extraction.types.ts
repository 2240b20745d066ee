// === What extraction yields and what it is given (shared by the service and the extraction thread)

import type { DocumentKind } from './document-format';

/** One stretch of text: a paragraph (or a heading's worth), with the page it is on and its heading. */
export interface TextBlock {
  page: number | null;
  heading: string | null;
  text: string;
}

/** A passage ready to index. */
export interface ExtractedChunk {
  seq: number;
  page: number | null;
  heading: string | null;
  content: string;
}

export interface ExtractionLimits {
  /** Most pages of a PDF (`documents.max_pages`). */
  maxPages: number;
  /** Most characters of extracted text (`documents.max_text_chars`). */
  maxTextChars: number;
  /** Most bytes a DOCX may unpack to. */
  maxUnpackedBytes: number;
  chunkTokens: number;
  chunkOverlap: number;
}

export interface ExtractionRequest {
  file: string;
  kind: DocumentKind;
  limits: ExtractionLimits;
}

export type ExtractionResult = { ok: true; pages: number | null; chunks: ExtractedChunk[]; chars: number } | { ok: false; reason: string };

/** A file we cannot read: the reason is shown to the user as is. */
export class UnreadableDocument extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'UnreadableDocument';
  }
}
