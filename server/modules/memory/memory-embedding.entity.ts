import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Embedding cache: one vector per (content hash, model), so unchanged content is never embedded twice
 * (re-indexing, workspace files, a store rebuilt after a backend switch).
 */
@Entity('memory_embeddings')
@Index(['contentHash', 'model'], { unique: true })
export class MemoryEmbedding {
  @PrimaryGeneratedColumn()
  id!: number;

  /** sha256 (hex) of the embedded text. */
  @Column({ type: 'varchar', length: 64 })
  contentHash!: string;

  /** `provider/model` of the embeddings role. */
  @Column({ type: 'varchar', length: 200 })
  model!: string;

  @Column({ type: 'integer' })
  dims!: number;

  /** Float32 little-endian values, base64 (portable across SQLite and PostgreSQL). */
  @Column({ type: 'text' })
  vector!: string;

  @Column({ type: Date })
  createdAt!: Date;
}
