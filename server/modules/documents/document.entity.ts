import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, Int, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';
import { MemoryScope } from '../memory';
import { DocumentStatus } from './document.types';

/**
 * A document added by a user (chat attachment, upload, `addDocument`): its original file is kept under
 * `<data_dir>/documents/<id>`, its text is split into `document_chunks` and indexed with the memories.
 * Scoped like memories: private to `userId` (default), a group chat's collection (`groupId`), or global.
 */
@ObjectType({ description: 'A document: a PDF, Word file, Markdown, text, HTML or CSV file, searched together with memories.' })
@Entity('documents')
@Index(['scope', 'groupId'])
export class Document extends BaseRecord {
  @Field()
  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Field({ description: 'The media type the file was sent with (or detected from its name).' })
  @Column({ type: 'varchar', length: 120 })
  mimeType!: string;

  @Field(() => Int)
  @Column({ type: 'integer' })
  sizeBytes!: number;

  @Field(() => MemoryScope)
  @Column({ type: 'varchar', length: 16 })
  scope!: MemoryScope;

  /** Who added it (and, for private documents, the only one who sees it). */
  @Field(() => String)
  @Index()
  @Column({ type: 'varchar', length: 36 })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User>;

  /** Group chat key (the group session key) of a group collection. */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 300, nullable: true })
  groupId!: string | null;

  @Field(() => DocumentStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: DocumentStatus;

  /** Why ingestion failed (FAILED only). */
  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  error!: string | null;

  /** Ingestion progress, 0..100. */
  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  progress!: number;

  @Field(() => Int, { nullable: true, description: 'Pages (PDF); null for formats without pages.' })
  @Column({ type: 'integer', nullable: true })
  pages!: number | null;

  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  chunkCount!: number;

  /** sha256 of the file. */
  @Column({ type: 'varchar', length: 64 })
  contentHash!: string;

  /** The ingest job that `jobProgress(jobId)` follows (the latest one). */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 120, nullable: true })
  jobId!: string | null;

  /** Chat the document came from, told when ingestion ends (`telegram`, `whatsapp`, …); null for uploads. */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 32, nullable: true })
  sourceChannel!: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  sourceChatId!: string | null;
}
