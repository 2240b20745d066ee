import path from 'node:path';
import type { Redis } from 'ioredis';
import type { AppConfig } from '../config';
import type { Ctx } from '../common/ctx';
import type { Db } from '../persistence/db';
import type { AuditService } from '../modules/audit';
import type { SlashCommandService } from '../modules/commands';
import type { PluginSettingService } from '../modules/plugins';
import { registerSkillCommands, SkillPrompter, SkillService, SkillSyncCommands, SkillSyncService, SkillWatcher, type SkillSyncJobs } from '../modules/skills';
import { RedisNextTurnSkills } from '../redis/redis-next-turn-skills';

export interface SkillLayerDeps {
  config: AppConfig;
  db: Db;
  audit: AuditService;
  plugins: PluginSettingService;
  redis: Redis;
  jobs: SkillSyncJobs;
}

/**
 * Skills of one process (DESIGN §6): the folder sync and its watcher (run where workers run), the
 * service behind GraphQL and `/skills`, and the agent's skill slot (`skills.mode`, `skills.max_chars`).
 */
export class SkillLayer {
  readonly sync: SkillSyncService;
  readonly service: SkillService;
  readonly prompter: SkillPrompter;
  readonly syncCommands: SkillSyncCommands;
  private readonly next: RedisNextTurnSkills;
  private watcher: SkillWatcher | null = null;

  constructor(private readonly deps: SkillLayerDeps) {
    const { config, db } = deps;
    this.sync = new SkillSyncService(db, path.resolve(config.skills.dir));
    this.service = new SkillService(db, deps.audit, deps.plugins, { dir: config.skills.dir });
    this.next = new RedisNextTurnSkills(deps.redis, config.redis.prefix);
    this.prompter = new SkillPrompter(this.service, this.next, { mode: () => config.skills.mode, maxChars: () => config.skills.max_chars });
    this.syncCommands = new SkillSyncCommands(deps.jobs);
  }

  registerCommands(commands: SlashCommandService): void {
    registerSkillCommands(commands, { skills: this.service, next: this.next, mode: () => this.deps.config.skills.mode });
  }

  /** Syncs the skills folder once, then keeps following it. */
  async startWatching(ctx: Ctx): Promise<void> {
    if (this.watcher) return;
    this.watcher = new SkillWatcher(this.sync, { debounceMs: this.deps.config.skills.watch_debounce_ms });
    await this.watcher.start(ctx);
  }

  stopWatching(): void {
    this.watcher?.stop();
    this.watcher = null;
  }
}
