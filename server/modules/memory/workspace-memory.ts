import { watch, type FSWatcher } from 'node:fs';
import { lstat, mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { In, Like } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { newId } from '../../common/ids';
import type { Db } from '../../persistence/db';
import { User } from '../users';
import { Memory } from './memory.entity';
import type { MemoryIndexHook } from './memory-indexer';
import { MemoryScope, MemoryType } from './memory.types';
import { chunkText } from './workspace-chunker';

export interface WorkspaceMemoryOptions {
  /** `data_dir`; workspaces live in `<dataDir>/workspaces/<userId>/`. */
  dataDir: string;
  /** `memory.chunk_tokens`. */
  chunkTokens: number;
  /** `memory.chunk_overlap`. */
  chunkOverlap: number;
  /** Token estimate of a text (the models module's `estimateTokens`). */
  estimate: (text: string) => number;
  /** Quiet time after the last change before a user's files are re-indexed. @default 500 */
  debounceMs?: number;
  /** Safety-net rescan of every workspace (for changes the watcher missed); 0 turns it off. @default 30000 */
  scanIntervalMs?: number;
  /** Larger files are skipped (logged). @default 1 MiB */
  maxFileBytes?: number;
}

/** `source` marker of a chunk of a workspace file. */
export const WORKSPACE_SOURCE_PREFIX = 'workspace:';
const USER_DIR = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Workspace files as memories (DESIGN §5): `<dataDir>/workspaces/<userId>/MEMORY.md` and `memory/*.md` are
 * chunked (`memory.chunk_tokens` / `memory.chunk_overlap`) and stored as that user's `fact` memories with
 * `source = workspace:<path>`, replaced as a whole when the file changes and removed with it. A debounced
 * recursive `fs.watch` re-indexes a user's files shortly after a change, a periodic scan catches what the
 * watcher missed, and `start` re-indexes everything once.
 */
export class WorkspaceMemory {
  readonly root: string;
  private readonly options: Required<WorkspaceMemoryOptions>;
  private watcher: FSWatcher | null = null;
  private scanTimer: NodeJS.Timeout | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** File signatures (path → mtime:size) per user, from the last index run. */
  private readonly signatures = new Map<string, string>();
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly index: MemoryIndexHook,
    private readonly logger: Logger,
    options: WorkspaceMemoryOptions,
  ) {
    this.options = { debounceMs: 500, scanIntervalMs: 30_000, maxFileBytes: 1024 * 1024, ...options };
    this.root = path.join(options.dataDir, 'workspaces');
  }

  /** The workspace folder of a user. */
  folderOf(userId: string): string {
    return path.join(this.root, userId);
  }

  /** Re-indexes every workspace, then watches for changes. */
  async start(ctx: Ctx): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await this.reindexAll(ctx);
    if (this.stopped) return;
    try {
      this.watcher = watch(this.root, { recursive: true }, (_event, filename) => {
        const userId = filename ? String(filename).split(path.sep)[0]! : null;
        if (userId && USER_DIR.test(userId)) this.schedule(ctx, userId);
        else if (!userId) this.schedule(ctx, null);
      });
      this.watcher.on('error', (err) => this.logger.warn({ err }, 'workspace watcher failed — relying on the periodic scan'));
    } catch (err) {
      this.logger.warn({ err }, 'cannot watch the workspaces folder — relying on the periodic scan');
    }
    if (this.options.scanIntervalMs > 0) {
      this.scanTimer = setInterval(() => void this.enqueue(() => this.scanForChanges(ctx)), this.options.scanIntervalMs);
      this.scanTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = null;
    if (this.scanTimer) clearInterval(this.scanTimer);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.chain.catch(() => undefined);
  }

  /** Re-indexes every user folder, and drops workspace memories of folders that are gone. */
  async reindexAll(ctx: Ctx): Promise<void> {
    await this.enqueue(async () => {
      const users = new Set(await this.userFolders());
      const withChunks = await this.db
        .repo(ctx, Memory)
        .createQueryBuilder('m')
        .select('DISTINCT m.userId', 'userId')
        .where('m.source LIKE :prefix', { prefix: `${WORKSPACE_SOURCE_PREFIX}%` })
        .getRawMany<{ userId: string | null }>();
      for (const row of withChunks) if (row.userId) users.add(row.userId);
      for (const userId of users) await this.reindexUserNow(ctx, userId);
    });
  }

  /** Re-indexes one user's workspace files now (queued behind any running re-index). */
  reindexUser(ctx: Ctx, userId: string): Promise<void> {
    return this.enqueue(() => this.reindexUserNow(ctx, userId));
  }

  // === Internals

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch((err) => this.logger.error({ err }, 'workspace re-index failed'));
    return run;
  }

  private schedule(ctx: Ctx, userId: string | null): void {
    if (this.stopped) return;
    const key = userId ?? '*';
    clearTimeout(this.timers.get(key));
    const timer = setTimeout(() => {
      this.timers.delete(key);
      void (userId ? this.reindexUser(ctx, userId) : this.enqueue(() => this.scanForChanges(ctx))).catch(() => undefined);
    }, this.options.debounceMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  private async userFolders(): Promise<string[]> {
    try {
      const entries = await readdir(this.root, { withFileTypes: true });
      return entries.filter((e) => e.isDirectory() && USER_DIR.test(e.name)).map((e) => e.name);
    } catch {
      return [];
    }
  }

  /** Workspace files of a user: relative path → absolute path (regular files only, no symlinks). */
  private async filesOf(userId: string): Promise<Map<string, string>> {
    const folder = this.folderOf(userId);
    const out = new Map<string, string>();
    const consider = async (rel: string) => {
      const abs = path.join(folder, rel);
      try {
        const st = await lstat(abs);
        if (st.isFile()) out.set(rel.split(path.sep).join('/'), abs);
      } catch {
        /* absent */
      }
    };
    await consider('MEMORY.md');
    try {
      for (const e of await readdir(path.join(folder, 'memory'), { withFileTypes: true })) {
        if (e.isFile() && e.name.toLowerCase().endsWith('.md')) await consider(path.join('memory', e.name));
      }
    } catch {
      /* no memory/ folder */
    }
    return out;
  }

  private async signatureOf(files: Map<string, string>): Promise<string> {
    const parts: string[] = [];
    for (const [rel, abs] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
      try {
        const st = await lstat(abs);
        parts.push(`${rel}:${st.mtimeMs}:${st.size}`);
      } catch {
        /* vanished meanwhile */
      }
    }
    return parts.join('|');
  }

  private async scanForChanges(ctx: Ctx): Promise<void> {
    const users = new Set([...(await this.userFolders()), ...this.signatures.keys()]);
    for (const userId of users) {
      const signature = await this.signatureOf(await this.filesOf(userId));
      if (signature !== this.signatures.get(userId)) await this.reindexUserNow(ctx, userId);
    }
  }

  private async reindexUserNow(ctx: Ctx, userId: string): Promise<void> {
    if (!USER_DIR.test(userId)) return;
    const files = await this.filesOf(userId);
    this.signatures.set(userId, await this.signatureOf(files));
    if (!(await this.db.repo(ctx, User).existsBy({ id: userId }))) {
      if (files.size) this.logger.warn({ folder: this.folderOf(userId) }, 'workspace folder of an unknown user — not indexed');
      return;
    }
    const wanted = new Map<string, string[]>();
    for (const [rel, abs] of files) {
      const source = `${WORKSPACE_SOURCE_PREFIX}${rel}`;
      if (source.length > 300) continue;
      try {
        const st = await lstat(abs);
        if (st.size > this.options.maxFileBytes) {
          this.logger.warn({ file: abs, bytes: st.size, max: this.options.maxFileBytes }, 'workspace file too large — not indexed');
          continue;
        }
        const text = await readFile(abs, 'utf8');
        wanted.set(source, chunkText(text, { chunkTokens: this.options.chunkTokens, overlapTokens: this.options.chunkOverlap, estimate: this.options.estimate }));
      } catch (err) {
        this.logger.warn({ err, file: abs }, 'cannot read a workspace file');
      }
    }
    const existing = await this.db.repo(ctx, Memory).findBy({ userId, source: Like(`${WORKSPACE_SOURCE_PREFIX}%`) });
    const bySource = new Map<string, Memory[]>();
    for (const m of existing) bySource.set(m.source!, [...(bySource.get(m.source!) ?? []), m]);
    const removed: string[] = [];
    const added: Memory[] = [];
    await this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, Memory);
      for (const [source, old] of bySource) {
        const chunks = wanted.get(source);
        const same = chunks && chunks.length === old.length && [...chunks].sort().join('\u0000') === old.map((m) => m.content).sort().join('\u0000');
        if (same) {
          wanted.delete(source);
          continue;
        }
        await repo.delete({ id: In(old.map((m) => m.id)) });
        removed.push(...old.map((m) => m.id));
      }
      const now = Date.now();
      for (const [source, chunks] of wanted) {
        const rows = chunks.map((content, i) =>
          repo.create({ id: newId(now + i), content, type: MemoryType.FACT, scope: MemoryScope.USER, userId, groupId: null, importance: 0.5, sourceSessionId: null, source }),
        );
        if (rows.length) added.push(...(await repo.save(rows, { chunk: 100 })));
      }
    });
    if (removed.length) await this.index.removed(ctx, removed);
    if (added.length) await this.index.indexed(ctx, added);
    if (removed.length || added.length) {
      this.logger.info({ userId, chunks: added.length, replaced: removed.length }, 'workspace memory re-indexed');
    }
  }
}
