import { In, IsNull } from 'typeorm';
import { ChangeCache } from '../../common/change-cache';
import type { Ctx } from '../../common/ctx';
import { UserInputError } from '../../common/errors';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { access } from '../users';
import { PluginSetting } from './plugin-setting.entity';

const NAME = /^[a-z][a-z0-9_:.-]{0,99}$/;

/** On/off switches for tools and channels, globally or per channel. */
export class PluginSettingService {
  /** Every setting (a small table), while none changed in any process. */
  private readonly all: ChangeCache<PluginSetting[]>;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
  ) {
    this.all = new ChangeCache(db.changes, ['plugins']);
  }

  list(ctx: Ctx): Promise<PluginSetting[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'plugin settings');
    return this.db.repo(ctx, PluginSetting).find({ order: { plugin: 'ASC', id: 'ASC' } });
  }

  async set(ctx: Ctx, plugin: string, channel: string | null, enabled: boolean): Promise<PluginSetting> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'plugin settings');
    if (!NAME.test(plugin)) throw new UserInputError(`plugin "${plugin}" is not a valid name (lowercase letters, digits, _ : . -).`, 'plugin');
    if (channel !== null && !NAME.test(channel)) throw new UserInputError(`channel "${channel}" is not a valid name.`, 'channel');
    return this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, PluginSetting);
      const existing = await repo.findOneBy({ plugin, channel: channel === null ? IsNull() : channel });
      const row = existing ?? repo.create({ plugin, channel });
      const previous = existing?.enabled ?? null;
      row.enabled = enabled;
      const saved = await repo.save(row);
      this.db.changed(tx, 'plugins');
      await this.audit.record(tx, 'plugin.set', { type: 'PluginSetting', id: saved.id }, { plugin, channel, enabled, previous });
      return saved;
    });
  }

  /** Whether `plugin` is on for `channel`: the per-channel row wins over the global one, else `fallback`. */
  async isEnabled(ctx: Ctx, plugin: string, channel: string | null, fallback: boolean): Promise<boolean> {
    return (await this.enabledMany(ctx, [{ plugin, fallback }], channel)).get(plugin)!;
  }

  /** {@link isEnabled} for several plugins at once, in one query: plugin name → on. */
  async enabledMany(ctx: Ctx, plugins: ReadonlyArray<{ plugin: string; fallback: boolean }>, channel: string | null): Promise<Map<string, boolean>> {
    const out = new Map<string, boolean>();
    if (!plugins.length) return out;
    // Outside a transaction, this process's copy of the whole table (read again after any change).
    const rows = ctx.manager
      ? await this.db.repo(ctx, PluginSetting).findBy({ plugin: In([...new Set(plugins.map((p) => p.plugin))]) })
      : await this.all.get('', () => this.db.repo(ctx, PluginSetting).find());
    for (const { plugin, fallback } of plugins) {
      const specific = channel ? rows.find((r) => r.plugin === plugin && r.channel === channel) : undefined;
      const global = rows.find((r) => r.plugin === plugin && r.channel === null);
      out.set(plugin, specific?.enabled ?? global?.enabled ?? fallback);
    }
    return out;
  }
}
