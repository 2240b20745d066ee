import { loadSqliteDriver, sqliteDriverModule } from '../../../server/persistence/sqlite-driver';

describe('the SQLite driver for this Node', () => {
  it('is better-sqlite3 12 on Node 20 and the Node-API build (13) from Node 22 on', () => {
    expect(sqliteDriverModule('20.19.0')).toBe('better-sqlite3');
    expect(sqliteDriverModule('22.12.0')).toBe('better-sqlite3-napi');
    expect(sqliteDriverModule('24.21.0')).toBe('better-sqlite3-napi');
    expect(sqliteDriverModule('26.10.0')).toBe('better-sqlite3-napi');
  });

  it('loads and runs on this Node, with FTS5', () => {
    const Database = loadSqliteDriver();
    const db = new Database(':memory:');
    try {
      db.exec("CREATE VIRTUAL TABLE t USING fts5(body); INSERT INTO t VALUES ('the quick brown fox')");
      expect(db.prepare("SELECT count(*) AS n FROM t WHERE t MATCH 'quick'").get()).toEqual({ n: 1 });
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const expected = (require(`${sqliteDriverModule()}/package.json`) as { version: string }).version;
      expect(expected.split('.')[0]).toBe(Number(process.versions.node.split('.')[0]) >= 22 ? '13' : '12');
    } finally {
      db.close();
    }
  });
});
