import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One item of the SQL memory index (SqlMemoryStore): a copy of what search needs, keyed by an integer
 * `seq` that is also the rowid of the item in the keyword index (`memory_fts`, SQLite FTS5) and in the
 * vector table (`memory_vectors`). Rebuilt from `memories` at any time, never the source of truth.
 */
@Entity('memory_index')
// PostgreSQL only: GIN index on to_tsvector('simple', "searchText"), made by a hand-written migration.
@Index('IDX_memory_index_content_tsv', { synchronize: false })
// Every search filters on owner and most on type (recall leaves document passages and reminders out,
// document search keeps only passages): counting the visible items reads this index alone.
@Index(['owner', 'type'])
export class MemoryIndexEntry {
  @PrimaryGeneratedColumn()
  seq!: number;

  /** Id of the indexed item (the memory id). */
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 100 })
  itemId!: string;

  /** Visibility key: `user:<userId>`, `group:<groupId>` or `global`. */
  @Column({ type: 'varchar', length: 340 })
  owner!: string;

  @Column({ type: 'varchar', length: 16 })
  type!: string;

  @Column({ type: 'text' })
  content!: string;

  /** PostgreSQL only: the content case- and accent-folded, for the tsvector index (empty on SQLite, where FTS5 folds). */
  @Column({ type: 'text', default: '' })
  searchText!: string;

  @Column({ type: 'float', default: 0.5 })
  importance!: number;

  /** When the item last changed (recency decay). */
  @Column({ type: Date })
  itemUpdatedAt!: Date;

  /** sha256 of the content (embedding cache key). */
  @Column({ type: 'varchar', length: 64 })
  contentHash!: string;

  /** Embedding model whose vector of this content is in the vector index; null when it has none yet. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  vectorModel!: string | null;
}
