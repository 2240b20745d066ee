import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import type { TestApp } from '../../support/test-app';

/** Rows of every table of the database (SQLite: also virtual and shadow tables) that mention a needle. */
export async function scanTables(t: TestApp, needles: string[]): Promise<Array<{ table: string; row: string }>> {
  const ds = t.app.db.dataSource;
  const names =
    t.app.db.kind === 'postgres'
      ? ((await ds.query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'`)) as Array<{ name: string }>)
      : ((await ds.query(`SELECT name FROM sqlite_master WHERE type = 'table'`)) as Array<{ name: string }>);
  const hits: Array<{ table: string; row: string }> = [];
  for (const { name } of names) {
    const rows = (await ds.query(`SELECT * FROM "${name}"`)) as unknown[];
    for (const row of rows) {
      const text = JSON.stringify(row);
      if (needles.some((n) => text.includes(n))) hits.push({ table: name, row: text.slice(0, 300) });
    }
  }
  return hits;
}

/** Keys of the app's Redis keyspace whose name or value mentions a needle. */
export async function scanRedis(t: TestApp, needles: string[]): Promise<string[]> {
  const redis = new Redis(t.config.redis.url!, { lazyConnect: true });
  await redis.connect();
  const hits: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${t.config.redis.prefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        let value: unknown = null;
        if (type === 'string') value = await redis.get(key);
        else if (type === 'hash') value = await redis.hgetall(key);
        else if (type === 'list') value = await redis.lrange(key, 0, -1);
        else if (type === 'set') value = await redis.smembers(key);
        else if (type === 'zset') value = await redis.zrange(key, 0, -1);
        else if (type === 'stream') value = await redis.xrange(key, '-', '+');
        const text = `${key} ${JSON.stringify(value)}`;
        if (needles.some((n) => text.includes(n))) hits.push(key);
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return hits;
}

/** Files of a folder whose path or content mentions a needle. */
export function scanFiles(dir: string, needles: string[]): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const name of existsSync(d) ? readdirSync(d) : []) {
      const abs = path.join(d, name);
      const st = statSync(abs);
      if (st.isDirectory()) {
        if (name === 'redis') continue;
        walk(abs);
      } else if (/\.sqlite(-wal|-shm|-journal)?$/.test(name)) {
        continue; // the database is scanned row by row (scanTables)
      } else if (needles.some((n) => abs.includes(n)) || (st.size < 5_000_000 && needles.some((n) => readFileSync(abs).includes(n)))) hits.push(abs);
    }
  };
  walk(dir);
  return hits;
}
