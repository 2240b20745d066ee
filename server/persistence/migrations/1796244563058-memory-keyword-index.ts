import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keyword index of the memory store, written by hand (TypeORM knows no virtual tables or expression indexes):
 * - SQLite: a contentless FTS5 table whose rowid is `memory_index.seq` (`contentless_delete` lets the store
 *   delete and replace rows by rowid); diacritics are folded.
 * - PostgreSQL: a GIN index on `to_tsvector('simple', "searchText")` (the content case- and accent-folded by the store) for the keyword search there (declared on
 *   MemoryIndexEntry with `synchronize: false` so schema sync leaves it alone).
 * The vector index (sqlite-vec `vec0`) needs the embedding dimension and is created by the store at run time.
 */
export class MemoryKeywordIndex1796244563058 implements MigrationInterface {
  name = 'MemoryKeywordIndex1796244563058';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query(`CREATE INDEX "IDX_memory_index_content_tsv" ON "memory_index" USING GIN (to_tsvector('simple', "searchText"))`);
    } else {
      await q.query(
        `CREATE VIRTUAL TABLE "memory_fts" USING fts5(content, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query(`DROP INDEX "IDX_memory_index_content_tsv"`);
    } else {
      await q.query(`DROP TABLE IF EXISTS "memory_vec"`);
      await q.query(`DROP TABLE "memory_fts"`);
    }
  }
}
