import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import { isUserTable, USERS_TABLE, type UserTable } from './user-data-map';
import { ownedPredicate, Params, q, type UserKey } from './user-data-query';

/** Rows read per query: small pages keep the event loop free while a big export is written. */
const PAGE = 500;
/** Columns never exported (token hashes, sealed secrets). */
const SECRET_COLUMN = /(tokenHash|secret|password|credential|cipher|encrypted|sealed)/i;

export const EXPORT_FORMAT = 'muninn-user-export';

/** What an export holds, written as its manifest.json. */
export interface ExportManifest {
  format: typeof EXPORT_FORMAT;
  formatVersion: 1;
  userId: string;
  createdAt: string;
  /** Rows written per table (`<table>.jsonl`; the user row is `profile.json`). */
  tables: Record<string, number>;
  /** Workspace files copied under `workspace/`. */
  workspaceFiles: boolean;
}

function clean(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (SECRET_COLUMN.test(k)) continue;
    out[k] = Buffer.isBuffer(v) || v instanceof Uint8Array ? undefined : v;
  }
  return out;
}

/**
 * Writes one user's data into `dir`: `profile.json`, one `<table>.jsonl` per table that holds rows of
 * theirs (sessions, messages, memories, documents, beats, usage, … as the data model has them), their
 * workspace files and `manifest.json`. Reads in pages ordered by key, awaiting each page and each write.
 */
export async function writeUserExport(
  ctx: Ctx,
  deps: { db: Db; map: Map<string, UserTable>; dataDir: string },
  key: UserKey,
  dir: string,
  progress: (done: number, total: number) => Promise<void>,
): Promise<ExportManifest> {
  const { db, map } = deps;
  const kind = db.kind;
  const tables = [...map.values()].filter(isUserTable);
  const total = tables.length + 1;
  const counts: Record<string, number> = {};
  let done = 0;
  for (const t of tables) {
    ctx.signal?.throwIfAborted();
    const isProfile = t.table === USERS_TABLE;
    const file = path.join(dir, isProfile ? 'profile.json' : `${t.table}.jsonl`);
    const out = createWriteStream(file, { mode: 0o600 });
    let rows = 0;
    let after: unknown = null;
    try {
      for (;;) {
        const params = new Params(kind);
        const where = ownedPredicate(map, t.table, key, params);
        const paged = t.pk ? `${after !== null ? ` AND ${q(t.pk)} > ${params.add(after)}` : ''} ORDER BY ${q(t.pk)} LIMIT ${PAGE}` : '';
        const page = (await db.dataSource.query(`SELECT * FROM ${q(t.table)} WHERE ${where}${paged}`, params.values)) as Array<Record<string, unknown>>;
        for (const row of page) {
          const line = isProfile ? `${JSON.stringify(clean(row), null, 2)}\n` : `${JSON.stringify(clean(row))}\n`;
          if (!out.write(line)) await once(out, 'drain');
          rows++;
        }
        if (!t.pk || page.length < PAGE) break;
        after = page[page.length - 1]![t.pk];
      }
    } finally {
      out.end();
      await once(out, 'close');
    }
    counts[t.table] = rows;
    await progress(++done, total);
  }
  const workspace = path.join(deps.dataDir, 'workspaces', key.userId);
  const workspaceFiles = existsSync(workspace);
  if (workspaceFiles) await cp(workspace, path.join(dir, 'workspace'), { recursive: true, dereference: false, verbatimSymlinks: true });
  const manifest: ExportManifest = { format: EXPORT_FORMAT, formatVersion: 1, userId: key.userId, createdAt: new Date().toISOString(), tables: counts, workspaceFiles };
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  await progress(total, total);
  return manifest;
}
