import { loadSqliteDriver } from '../../../server/persistence/sqlite-driver';

/** better-sqlite3 12 or 13, as the server loads it on this Node. */
const Database = loadSqliteDriver();

export interface StoredCheck {
  acknowledged: number;
  /** Acknowledged messages not in the database. */
  lost: number;
  /** Acknowledged messages with no assistant reply. */
  unanswered: number;
  /** Replies beyond the first to the same message. */
  duplicated: number;
  /** Messages of any session left QUEUED or PROCESSING. */
  stuck: number;
  /** Acknowledged messages that did not end DONE. */
  notDone: number;
}

/**
 * Reads a Muninn SQLite file directly (read-only, beside a running server: WAL lets readers in) and
 * checks the acknowledged user messages: present, DONE, answered exactly once, nothing left running.
 */
export function checkStored(file: string, acknowledged: string[]): StoredCheck {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const users = new Map(
      (db.prepare(`SELECT id, status FROM messages WHERE role = 'USER'`).all() as Array<{ id: string; status: string }>).map((r) => [r.id, r.status]),
    );
    const replies = new Map<string, number>();
    for (const r of db.prepare(`SELECT replyToId FROM messages WHERE role = 'ASSISTANT' AND replyToId IS NOT NULL`).all() as Array<{ replyToId: string }>) {
      replies.set(r.replyToId, (replies.get(r.replyToId) ?? 0) + 1);
    }
    const stuck = (db.prepare(`SELECT COUNT(*) AS n FROM messages WHERE status IN ('QUEUED', 'PROCESSING')`).get() as { n: number }).n;
    const out: StoredCheck = { acknowledged: acknowledged.length, lost: 0, unanswered: 0, duplicated: 0, stuck, notDone: 0 };
    for (const id of acknowledged) {
      const status = users.get(id);
      if (status === undefined) out.lost++;
      else if (status !== 'DONE') out.notDone++;
      const n = replies.get(id) ?? 0;
      if (n === 0) out.unanswered++;
      if (n > 1) out.duplicated += n - 1;
    }
    return out;
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check` of a SQLite file: 'ok', or the problems it lists. */
export function integrityCheck(file: string): string {
  const db = new Database(file, { fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    return rows.map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}
