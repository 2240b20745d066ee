import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import pino from 'pino';
import { Ctx } from '../../../server/common/ctx';
import type { Logger } from '../../../server/common/logger';
import { loadConfig, type AppConfig } from '../../../server/config';
import { MemoryEmbedder, type EmbeddingSource } from '../../../server/modules/memory';
import { Db } from '../../../server/persistence/db';
import { openDatabase } from '../../../server/persistence/data-source';
import { ENTITIES } from '../../../server/entities';
import { LogCapture } from '../../support/log-capture';

export const PG_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A migrated database (SQLite in a temp folder, or a fresh PostgreSQL database) with a logger that is kept. */
export interface TestDb {
  db: Db;
  config: AppConfig;
  dataDir: string;
  logs: LogCapture;
  logger: Logger;
  ctx: Ctx;
  close(): Promise<void>;
}

export async function openTestDb(kind: 'sqlite' | 'postgres' = 'sqlite', raw: Record<string, unknown> = {}): Promise<TestDb> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-memory-'));
  let dropPg: (() => Promise<void>) | null = null;
  let url: string | undefined;
  if (kind === 'postgres') {
    const name = `muninn_mem_${randomBytes(5).toString('hex')}`;
    const admin = new Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(PG_ADMIN_URL);
    u.pathname = `/${name}`;
    url = u.toString();
    dropPg = async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    };
  }
  const config = loadConfig({ raw: { data_dir: dataDir, ...(url ? { database: { url } } : {}), ...raw }, env: {} });
  const { dataSource } = await openDatabase(config, ENTITIES);
  const logs = new LogCapture();
  const logger = pino({ level: 'debug' }, logs);
  return {
    db: new Db(dataSource),
    config,
    dataDir,
    logs,
    logger,
    ctx: Ctx.system(logger, 'test'),
    close: async () => {
      await dataSource.destroy();
      await dropPg?.();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An embedder over `source` with the test database as its cache. */
export function embedderFor(t: TestDb, source: EmbeddingSource | null): MemoryEmbedder {
  const embedder = new MemoryEmbedder(t.db, t.logger.child({ module: 'memory' }));
  embedder.setSource(source);
  return embedder;
}
