import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Document } from './document.entity';

/**
 * One passage of a document (a heading's paragraphs, about `chunk_tokens` long, overlapping the one before),
 * indexed in the memory search index as item `doc:<id>` of type `document`.
 */
@Entity('document_chunks')
@Index(['documentId', 'seq'], { unique: true })
export class DocumentChunk {
  /** `<documentId>:<seq>`. */
  @PrimaryColumn({ type: 'varchar', length: 48 })
  id!: string;

  @Column({ type: 'varchar', length: 36 })
  documentId!: string;

  @ManyToOne(() => Document, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'documentId' })
  document?: Relation<Document>;

  /** Who added the document (per-user export and erase find chunks by it). */
  @Index()
  @Column({ type: 'varchar', length: 36 })
  userId!: string;

  @Column({ type: 'integer' })
  seq!: number;

  /** Page the passage starts on (PDF); null for formats without pages. */
  @Column({ type: 'integer', nullable: true })
  page!: number | null;

  /** The heading it belongs to, when the document has headings. */
  @Column({ type: 'varchar', length: 300, nullable: true })
  heading!: string | null;

  @Column({ type: 'text' })
  content!: string;

  @Column({ type: Date })
  createdAt!: Date;
}
