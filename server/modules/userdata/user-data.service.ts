import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type * as Tar from 'tar';
import type { Ctx } from '../../common/ctx';
import { ConflictError, ForbiddenError, NotFoundError, ServiceUnavailableError, UserInputError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { Identity, User } from '../users';
import { buildUserDataMap, type UserTable } from './user-data-map';
import type { ExportTickets, UserErasureHook, UserExportJobs } from './user-data.ports';
import type { UserKey } from './user-data-query';
import { eraseRows, ownedIds } from './user-erasure';
import { writeUserExport, type ExportManifest } from './user-export-writer';

/** tar, required on first use: only an export needs it, not the server's start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tarLib = (): typeof Tar => require('tar') as typeof Tar;

export interface UserDataDeps {
  db: Db;
  audit: AuditService;
  /** Parts of an erasure outside the tables (vector indexes, beat schedules, Redis keys, files). */
  hooks: UserErasureHook[];
  /** Null in processes without Redis (then exports cannot be requested). */
  jobs: UserExportJobs | null;
  tickets: ExportTickets | null;
}

export interface UserDataOptions {
  /** `data_dir`: exports are built in `<dataDir>/exports/<userId>/`. */
  dataDir: string;
  /** `exports.expire_minutes`: how long a download link works. */
  expireMinutes: () => number;
}

/** What `exportUserData` answers: the job to follow and the one-time download link. */
export interface ExportRequest {
  exportId: string;
  jobId: string;
  /** `/exports/<id>?token=…`, relative to the server's URL; works once, until `expiresAt`, after the job completed. */
  downloadUrl: string;
  expiresAt: Date;
}

/** The job's result. */
export interface ExportResult {
  exportId: string;
  userId: string;
  bytes: number;
  tables: Record<string, number>;
}

/** What an erasure removed (counts only: nothing that identifies the user). */
export interface ErasureReport {
  userId: string;
  /** False when there was no such user any more (the call still swept what was left). */
  existed: boolean;
  rows: number;
  tables: Record<string, number>;
  /** Removed outside the tables, per hook (vector index items, schedules, Redis keys, files). */
  outside: Record<string, number>;
}

/** User ids are UUIDs. */
const USER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * "Give me my data" and "delete me" (README "Your data: export and erase"). Which rows are a user's is
 * read from the data model (see user-data-map.ts), so tables added by other modules are covered. Exports
 * are built on the `exports` queue and fetched once through an expiring link; an erasure deletes the rows,
 * calls the hooks for what lives elsewhere and leaves an anonymous tombstone in the audit log.
 */
export class UserDataService {
  private mapCache: Map<string, UserTable> | null = null;

  constructor(
    private readonly deps: UserDataDeps,
    private readonly options: UserDataOptions,
  ) {}

  /** The ownership map of the data model (built once). */
  get map(): Map<string, UserTable> {
    this.mapCache ??= buildUserDataMap(this.deps.db.dataSource);
    return this.mapCache;
  }

  /** The user themself (MEMBER and above) or an OWNER. */
  private requireSelfOrOwner(ctx: Ctx, userId: string, what: string): void {
    if (trustAtLeast(ctx.trust, TrustLevel.OWNER)) return;
    if (ctx.userId === userId && trustAtLeast(ctx.trust, TrustLevel.MEMBER)) return;
    throw new ForbiddenError(`Only the user themself or an OWNER may ${what}.`);
  }

  private async keyOf(ctx: Ctx, userId: string): Promise<UserKey> {
    const identities = await this.deps.db.repo(ctx, Identity).find({ where: { userId }, select: { channel: true, handle: true } });
    return { userId, handles: identities.map((i) => ({ channel: i.channel, handle: i.handle })) };
  }

  // === Export

  /** Queues an export of the user's data; the link works once the job (`jobProgress(jobId)`) completed. */
  async requestExport(ctx: Ctx, userId: string): Promise<ExportRequest> {
    this.requireSelfOrOwner(ctx, userId, 'export their data');
    const { jobs, tickets } = this.deps;
    if (!jobs || !tickets) throw new ServiceUnavailableError('Exports need the queues (Redis), which this process does not run.');
    if (!(await this.deps.db.repo(ctx, User).existsBy({ id: userId }))) throw new NotFoundError('User', userId);
    const exportId = randomUUID();
    const token = randomBytes(32).toString('base64url');
    const ttlMs = this.options.expireMinutes() * 60_000;
    const expiresAt = new Date(Date.now() + ttlMs);
    await tickets.put({ exportId, userId, tokenHash: hashToken(token), expiresAt: expiresAt.toISOString(), file: null }, ttlMs);
    const jobId = await jobs.enqueueExport(ctx, exportId, userId);
    await this.deps.audit.record(ctx, 'user.export', { type: 'User', id: userId }, { exportId });
    return { exportId, jobId, downloadUrl: `/exports/${exportId}?token=${token}`, expiresAt };
  }

  /** The job: writes the archive in pages (never holding the event loop), reporting `{ done, total }`. */
  async buildExport(ctx: Ctx, exportId: string, userId: string, progress: (done: number, total: number) => Promise<void>): Promise<ExportResult> {
    const folder = path.join(this.options.dataDir, 'exports', userId);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await this.sweepExpired();
    const staging = path.join(folder, `${exportId}.d`);
    const file = path.join(folder, `${exportId}.tar.gz`);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true, mode: 0o700 });
    let manifest: ExportManifest;
    try {
      manifest = await writeUserExport(ctx, { db: this.deps.db, map: this.map, dataDir: this.options.dataDir }, await this.keyOf(ctx, userId), staging, progress);
      const entries = await readdir(staging);
      await tarLib().create(
        { gzip: true, file, cwd: staging, portable: true, mode: 0o600, filter: (_p: string, st: { isSymbolicLink?: () => boolean }) => !st.isSymbolicLink?.() } as Tar.TarOptionsWithAliasesAsyncFile,
        ['manifest.json', ...entries.filter((e) => e !== 'manifest.json').sort()],
      );
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    const ready = await this.deps.tickets?.ready(exportId, path.relative(this.options.dataDir, file));
    if (!ready) await rm(file, { force: true });
    return { exportId, userId, bytes: ready ? (await stat(file)).size : 0, tables: manifest.tables };
  }

  /**
   * Takes a download ticket: the archive's path when `token` is right and the archive is built, once.
   * Null for an unknown, expired, used or wrong link (all alike, so nothing is learnt from the answer);
   * CONFLICT while the archive is still being built (the link stays valid).
   */
  async claimDownload(exportId: string, token: string): Promise<{ file: string; userId: string } | null> {
    const tickets = this.deps.tickets;
    if (!tickets || !/^[0-9a-f-]{36}$/.test(exportId)) return null;
    const ticket = await tickets.get(exportId);
    if (!ticket || ticket.tokenHash !== hashToken(token)) return null;
    if (!ticket.file) throw new ConflictError('The export is still being prepared; follow jobProgress(jobId) and try again when it completed.');
    const claimed = await tickets.claim(exportId, hashToken(token));
    if (!claimed?.file) return null;
    const file = path.resolve(this.options.dataDir, claimed.file);
    if (!file.startsWith(path.resolve(this.options.dataDir, 'exports') + path.sep) || !existsSync(file)) return null;
    return { file, userId: claimed.userId };
  }

  /** What the link would give now, without using it (HEAD): 'ready', 'pending', or null as for claimDownload. */
  async peekDownload(exportId: string, token: string): Promise<'ready' | 'pending' | null> {
    const tickets = this.deps.tickets;
    if (!tickets || !/^[0-9a-f-]{36}$/.test(exportId)) return null;
    const ticket = await tickets.get(exportId);
    if (!ticket || ticket.tokenHash !== hashToken(token)) return null;
    return ticket.file ? 'ready' : 'pending';
  }

  /** Removes a downloaded archive. */
  async downloaded(file: string): Promise<void> {
    await rm(file, { force: true });
  }

  /** Archives older than the link's lifetime (never downloaded) are removed. */
  private async sweepExpired(): Promise<void> {
    const root = path.join(this.options.dataDir, 'exports');
    const cutoff = Date.now() - this.options.expireMinutes() * 60_000 - 60_000;
    for (const user of existsSync(root) ? await readdir(root) : []) {
      const dir = path.join(root, user);
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const abs = path.join(dir, name);
        const st = await stat(abs).catch(() => null);
        if (st && st.mtimeMs < cutoff) await rm(abs, { recursive: true, force: true });
      }
    }
  }

  // === Erasure

  /**
   * Erases everything of a user: their rows in every table, their items in the vector indexes, their beat
   * schedules, Redis keys and files; the audit log keeps its entries without them and gains an anonymous
   * tombstone. OWNER, or the user themself. Idempotent: a second call finds nothing and succeeds.
   * CONFLICT for the last OWNER.
   */
  async erase(ctx: Ctx, userId: string): Promise<ErasureReport> {
    this.requireSelfOrOwner(ctx, userId, 'erase their data');
    // The id names files and Redis keys to sweep: only ever a well-formed user id.
    if (!USER_ID.test(userId)) throw new UserInputError('userId is not a user id.', 'userId');
    const { db } = this.deps;
    const user = await db.repo(ctx, User).findOneBy({ id: userId });
    if (user?.trust === TrustLevel.OWNER && (await db.repo(ctx, User).countBy({ trust: TrustLevel.OWNER })) <= 1) {
      throw new ConflictError('This is the last OWNER; make another user OWNER first.');
    }
    const key = await this.keyOf(ctx, userId);
    const ids = await ownedIds(ctx, db, this.map, key);
    const outside: Record<string, number> = {};
    for (const hook of this.deps.hooks) outside[hook.name] = await hook.erase(ctx, { userId, ids, handles: key.handles });
    const hookTables = new Set(this.deps.hooks.flatMap((h) => h.tables ?? []));
    const tables = await db.withTransaction(ctx, (tx) => {
      // The user's tokens and budget go, and their memories: copies of them in any process are dropped.
      db.changed(tx, 'users');
      db.changed(tx, 'memory');
      return eraseRows(tx, db, this.map, key, hookTables);
    });
    // Keys and files written by work that was still running during the erasure are swept once more.
    for (const hook of this.deps.hooks) outside[hook.name]! += await hook.erase(ctx, { userId, ids, handles: key.handles });
    const rows = Object.values(tables).reduce((a, b) => a + b, 0);
    const report: ErasureReport = { userId, existed: !!user, rows, tables, outside };
    if (user || rows) {
      const self = ctx.userId === userId;
      await this.deps.audit.record(self ? ctx.asSystem('erasure') : ctx, 'user.erase', { type: 'ErasedUser', id: randomUUID() }, {
        by: self ? 'the user themself' : 'an OWNER',
        trust: user?.trust ?? null,
        rows,
        tables,
        outside,
      });
    }
    return report;
  }
}
