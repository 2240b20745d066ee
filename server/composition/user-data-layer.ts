import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { In } from 'typeorm';
import type { AppConfig } from '../config';
import type { Ctx } from '../common/ctx';
import type { Db } from '../persistence/db';
import type { AuditService } from '../modules/audit';
import { Beat, type BeatScheduler } from '../modules/beats';
import { MemoryEmbedding, MemoryIndexEntry, userOwner, type MemoryStore } from '../modules/memory';
import { chunkItemId } from '../modules/documents';
import { UserDataService, type ErasureScope, type ExportTickets, type UserErasureHook, type UserExportJobs } from '../modules/userdata';

/** Folders of the data folder never searched for a user's files (the database's and the services' own). */
const SHARED_FOLDERS = new Set(['redis', 'lancedb', 'backups', 'whatsapp']);

/** The memory part of an erasure: the user's memories leave the search index (sqlite-vec, pgvector, LanceDB) and the embedding cache. */
export function memoryErasure(db: Db, store: MemoryStore): UserErasureHook {
  return {
    name: 'memory index',
    tables: ['memory_index'],
    async erase(ctx: Ctx, scope: ErasureScope): Promise<number> {
      // Their memories, their documents' chunks, and whatever else the index holds privately for them.
      const ids = [...(scope.ids.get('memories') ?? []), ...(scope.ids.get('document_chunks') ?? []).map(chunkItemId)];
      for (const e of await db.repo(ctx, MemoryIndexEntry).find({ where: { owner: userOwner(scope.userId) }, select: { itemId: true } })) ids.push(e.itemId);
      if (!ids.length) return 0;
      const hashes = new Set<string>();
      for (let i = 0; i < ids.length; i += 500) {
        for (const e of await db.repo(ctx, MemoryIndexEntry).find({ where: { itemId: In(ids.slice(i, i + 500)) }, select: { contentHash: true } })) hashes.add(e.contentHash);
      }
      await store.delete(ctx, ids);
      // Cached vectors of their content go too, unless another item has the same content.
      const list = [...hashes];
      for (let i = 0; i < list.length; i += 500) {
        const part = list.slice(i, i + 500);
        const shared = new Set((await db.repo(ctx, MemoryIndexEntry).find({ where: { contentHash: In(part) }, select: { contentHash: true } })).map((e) => e.contentHash));
        const gone = part.filter((h) => !shared.has(h));
        if (gone.length) await db.repo(ctx, MemoryEmbedding).delete({ contentHash: In(gone) });
      }
      return ids.length;
    },
  };
}

/** The beats part: the schedules of the user's beats leave the heartbeat queue. */
export function beatErasure(db: Db, scheduler: BeatScheduler): UserErasureHook {
  return {
    name: 'beat schedules',
    async erase(ctx: Ctx, scope: ErasureScope): Promise<number> {
      const ids = [...(scope.ids.get('beats') ?? [])];
      let n = 0;
      for (let i = 0; i < ids.length; i += 500) {
        for (const beat of await db.repo(ctx, Beat).findBy({ id: In(ids.slice(i, i + 500)) })) {
          await scheduler.remove(beat);
          n++;
        }
      }
      return n;
    },
  };
}

/**
 * The files part: every file or folder of the data folder named after the user (workspace, exports) or
 * after one of their rows (a document's original file, `documents/<id>`).
 */
export function fileErasure(dataDir: string): UserErasureHook {
  return {
    name: 'files',
    async erase(_ctx: Ctx, scope: ErasureScope): Promise<number> {
      if (scope.userId.length < 32) return 0; // never a prefix that names other files
      let n = 0;
      const owned = new Set([...scope.ids.values()].flat());
      const visit = async (dir: string, depth: number) => {
        for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
          if (depth === 0 && SHARED_FOLDERS.has(entry.name)) continue;
          const abs = path.join(dir, entry.name);
          if (entry.name.startsWith(scope.userId) || (depth > 0 && owned.has(entry.name))) {
            await rm(abs, { recursive: true, force: true });
            n++;
          } else if (entry.isDirectory() && depth < 2) await visit(abs, depth + 1);
        }
      };
      if (existsSync(dataDir)) await visit(dataDir, 0);
      return n;
    },
  };
}

/** Download tickets of the user's exports. */
export function ticketErasure(tickets: ExportTickets): UserErasureHook {
  return { name: 'export links', erase: (_ctx, scope) => tickets.dropUser(scope.userId) };
}

export interface UserDataLayerDeps {
  config: AppConfig;
  db: Db;
  audit: AuditService;
  store: MemoryStore;
  /** Present in processes with Redis. */
  queues: { jobs: UserExportJobs; tickets: ExportTickets; redisKeys: UserErasureHook; beats: BeatScheduler } | null;
}

/** Builds the export and erasure service with every hook this process can reach. */
export function createUserDataService(deps: UserDataLayerDeps): UserDataService {
  const { config, db, queues } = deps;
  const hooks: UserErasureHook[] = [memoryErasure(db, deps.store), fileErasure(config.data_dir)];
  if (queues) hooks.push(beatErasure(db, queues.beats), ticketErasure(queues.tickets), queues.redisKeys);
  return new UserDataService(
    { db, audit: deps.audit, hooks, jobs: queues?.jobs ?? null, tickets: queues?.tickets ?? null },
    { dataDir: config.data_dir, expireMinutes: () => config.exports.expire_minutes },
  );
}
