import { Worker } from 'node:worker_threads';
import { sqliteDriverModule } from '../../persistence/sqlite-driver';

// === SQLite work of backups, on a thread of its own
// The online backup copies the whole database in one step (one read transaction, so a consistent snapshot
// while the server keeps writing: WAL readers do not block writers), then checks and counts the copy.
// All of it runs on a worker thread, so neither the CLI nor the server's event loop waits on it; the
// thread closes its connections before it ends.

/** Rows per table of a SQLite file, and the result of `PRAGMA integrity_check`. */
export interface SqliteInspection {
  tables: Record<string, number>;
  /** 'ok', or the problems SQLite reported. */
  integrity: string;
}

const THREAD = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
function open(file, readonly) {
  const db = new Database(file, { fileMustExist: true, readonly });
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  try { require(workerData.vec).load(db); } catch {}
  return db;
}
function inspect(file) {
  const db = open(file, true);
  try {
    const integrity = db.pragma('integrity_check').map((r) => r.integrity_check).join('; ');
    const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND (sql IS NULL OR sql NOT LIKE 'CREATE VIRTUAL TABLE%') ORDER BY name").all().map((r) => r.name);
    const tables = {};
    for (const name of names) tables[name] = Number(db.prepare('SELECT count(*) AS n FROM "' + name.replace(/"/g, '""') + '"').get().n);
    return { tables, integrity };
  } finally {
    db.close();
  }
}
(async () => {
  if (workerData.op === 'snapshot') {
    const db = open(workerData.source, false);
    try {
      await db.backup(workerData.target, { progress: ({ totalPages }) => Math.max(totalPages, 1) });
    } finally {
      db.close();
    }
  }
  return inspect(workerData.op === 'snapshot' ? workerData.target : workerData.source);
})().then((result) => parentPort.postMessage({ result }), (err) => parentPort.postMessage({ error: String(err && err.message || err) }));
`;

function runThread(data: Record<string, unknown>): Promise<SqliteInspection> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(THREAD, {
      eval: true,
      workerData: { ...data, driver: require.resolve(sqliteDriverModule()), vec: require.resolve('sqlite-vec'), busyTimeoutMs: 5000 },
    });
    let settled = false;
    worker.once('message', (msg: { result?: SqliteInspection; error?: string }) => {
      settled = true;
      if (msg.error) reject(new Error(msg.error));
      else resolve(msg.result!);
    });
    worker.once('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the SQLite backup thread ended early (exit code ${code})`));
    });
  });
}

/** Copies the live database `source` into `target` with SQLite's online backup API, then inspects the copy. */
export function snapshotSqlite(source: string, target: string): Promise<SqliteInspection> {
  return runThread({ op: 'snapshot', source, target });
}

/** Integrity check and row counts of a SQLite file (opened read-only). */
export function inspectSqlite(file: string): Promise<SqliteInspection> {
  return runThread({ op: 'inspect', source: file });
}
