import { watch, type FSWatcher } from 'node:fs';
import type { Ctx } from '../../common/ctx';
import type { SkillSyncService } from './skill-sync.service';

export interface SkillWatcherOptions {
  /** Quiet time after the last change before the folder is synced (`skills.watch_debounce_ms`). */
  debounceMs: number;
  /** Safety-net sync for changes the watcher missed (and a folder created later); 0 turns it off. @default 30000 */
  scanIntervalMs?: number;
}

/**
 * Keeps `learned_skills` in step with the skills folder: one sync at start, then a debounced sync after
 * every change below the folder (a recursive `fs.watch`), and a periodic sync as a safety net.
 */
export class SkillWatcher {
  private watcher: FSWatcher | null = null;
  private debounce: NodeJS.Timeout | null = null;
  private scan: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly sync: SkillSyncService,
    private readonly options: SkillWatcherOptions,
  ) {}

  /** Syncs once (awaited), then watches. */
  async start(ctx: Ctx): Promise<void> {
    await this.runSync(ctx);
    this.watchFolder(ctx);
    const every = this.options.scanIntervalMs ?? 30_000;
    if (every > 0) {
      this.scan = setInterval(() => {
        if (!this.watcher) this.watchFolder(ctx);
        void this.runSync(ctx);
      }, every);
      this.scan.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = null;
    if (this.debounce) clearTimeout(this.debounce);
    if (this.scan) clearInterval(this.scan);
  }

  private watchFolder(ctx: Ctx): void {
    if (this.stopped) return;
    try {
      this.watcher = watch(this.sync.dir, { recursive: true }, () => this.schedule(ctx));
      this.watcher.on('error', (err) => {
        ctx.logger.warn({ err, dir: this.sync.dir }, 'skills watcher failed — relying on the periodic sync');
        this.watcher?.close();
        this.watcher = null;
      });
    } catch (err) {
      // Usually the folder does not exist (yet); the periodic sync looks again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') ctx.logger.warn({ err, dir: this.sync.dir }, 'cannot watch the skills folder');
      this.watcher = null;
    }
  }

  private schedule(ctx: Ctx): void {
    if (this.stopped) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      void this.runSync(ctx);
    }, this.options.debounceMs);
    this.debounce.unref();
  }

  private async runSync(ctx: Ctx): Promise<void> {
    if (this.stopped) return;
    try {
      await this.sync.sync(ctx);
    } catch (err) {
      ctx.logger.error({ err, dir: this.sync.dir }, 'skills sync failed');
    }
  }
}
