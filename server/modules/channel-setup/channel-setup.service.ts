import type { Ctx } from '../../common/ctx';
import { UserInputError } from '../../common/errors';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import type { PluginSettingService } from '../plugins';
import { access } from '../users';
import { ChannelSetup } from './channel-setup.entity';
import {
  SETUP_CHANNELS,
  type AppliedSetup,
  type ChannelSettings,
  type ChannelSetupSummary,
  type ConfiguredChannel,
  type SetupChannel,
  type SetupSealer,
  type TelegramTokenCheck,
} from './channel-setup.types';

/** A bot token as @BotFather gives it: the bot's numeric id, a colon, about 35 URL-safe characters. */
const BOT_TOKEN = /^\d{5,12}:[A-Za-z0-9_-]{30,64}$/;

export interface ChannelSetupDeps {
  db: Db;
  box: SetupSealer;
  /** Stored and read secrets are registered here, so logs never show them (the app's SecretRedactor). */
  redactor: { add(secret: string | null | undefined): void };
  audit: AuditService;
  /** The `channel:<name>` switches, turned on when a channel is set up. */
  plugins: Pick<PluginSettingService, 'set'>;
  telegram: TelegramTokenCheck;
  /** The config file's settings of each channel. */
  configured: (channel: SetupChannel) => ConfiguredChannel;
}

/**
 * Telegram and WhatsApp set up from the console by an OWNER (issue 28): the bot token is checked with
 * the Bot API, sealed with the SecretBox and never returned; WhatsApp is enabled and then linked by
 * scanning the QR its transport shows. Stored settings win over the config file's. Every process picks a
 * change up without a restart (`applied` is read by the channel switch), this one at once (`onChange`).
 */
export class ChannelSetupService {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly deps: ChannelSetupDeps) {}

  /** Called after every stored change (the channel switch of this process applies it at once). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Each platform channel's set-up (ADMIN and above): where it comes from, whether a secret is set. */
  async list(ctx: Ctx): Promise<ChannelSetupSummary[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'channel set-up');
    const rows = await this.deps.db.repo(ctx, ChannelSetup).find();
    return SETUP_CHANNELS.map((channel) => {
      const row = rows.find((r) => r.channel === channel);
      if (row) return { channel, source: 'CONSOLE', secretSet: channel === 'telegram', label: row.label, updatedAt: row.updatedAt, updatedById: row.updatedById };
      const file = this.deps.configured(channel);
      return { channel, source: file.enabled ? 'CONFIG' : 'NONE', secretSet: file.secretSet, label: null, updatedAt: null, updatedById: null };
    });
  }

  /**
   * Stores a Telegram bot token (OWNER) after the Bot API accepted it (getMe), and turns the channel on.
   * A token that is malformed or refused is not stored (BAD_USER_INPUT; the message never repeats it).
   */
  async setTelegramBot(ctx: Ctx, botToken: string, signal?: AbortSignal): Promise<ChannelSetupSummary> {
    access.requireTrust(ctx, TrustLevel.OWNER, 'setting up channels');
    const token = botToken.trim();
    this.deps.redactor.add(token);
    if (!BOT_TOKEN.test(token)) {
      throw new UserInputError('That is not a Telegram bot token: it looks like 123456789:AA… (the bot id, a colon, about 35 letters, digits, - and _). Copy it from @BotFather (/mybots → API Token).', 'botToken');
    }
    const checked = await this.deps.telegram.check(token, signal);
    if (!checked.ok) throw new UserInputError(`Telegram did not accept this token: ${checked.reason}`, 'botToken');
    return this.store(ctx, 'telegram', { botToken: token }, `@${checked.username}`);
  }

  /** Turns WhatsApp on (OWNER): its transport starts and shows the linking QR in `channels`. */
  async enableWhatsApp(ctx: Ctx): Promise<ChannelSetupSummary> {
    access.requireTrust(ctx, TrustLevel.OWNER, 'setting up channels');
    return this.store(ctx, 'whatsapp', {}, null);
  }

  /** Forgets the console's settings of a channel (OWNER): the config file's apply again. True when there were some. */
  async remove(ctx: Ctx, channel: string): Promise<boolean> {
    access.requireTrust(ctx, TrustLevel.OWNER, 'setting up channels');
    const name = parseChannel(channel);
    const result = await this.deps.db.repo(ctx, ChannelSetup).delete({ channel: name });
    const removed = (result.affected ?? 0) > 0;
    if (removed) {
      await this.deps.audit.record(ctx, 'channel.setup.remove', { type: 'Channel', id: name }, { channel: name });
      this.changed();
    }
    return removed;
  }

  /** Each stored set-up with a signature that changes with every change (system use: the channel switch). */
  async signatures(ctx: Ctx): Promise<Map<SetupChannel, string>> {
    const rows = await this.deps.db.repo(ctx, ChannelSetup).find({ select: { id: true, channel: true, revision: true } });
    return new Map(rows.filter((r) => isSetupChannel(r.channel)).map((r) => [r.channel as SetupChannel, `${r.id}:${r.revision}`]));
  }

  /** The stored settings of a channel, opened (system use: building its transport), or null. */
  async read<C extends SetupChannel>(ctx: Ctx, channel: C): Promise<AppliedSetup<C> | null> {
    const row = await this.deps.db.repo(ctx, ChannelSetup).findOneBy({ channel });
    if (!row) return null;
    const settings = this.deps.box.openJson<ChannelSettings[C]>(row.sealed);
    for (const value of Object.values(settings)) if (typeof value === 'string') this.deps.redactor.add(value);
    return { channel, signature: `${row.id}:${row.revision}`, settings };
  }

  private async store<C extends SetupChannel>(ctx: Ctx, channel: C, settings: ChannelSettings[C], label: string | null): Promise<ChannelSetupSummary> {
    const saved = await this.deps.db.withTransaction(ctx, async (tx) => {
      const repo = this.deps.db.repo(tx, ChannelSetup);
      const existing = await repo.findOneBy({ channel });
      const row = existing ?? repo.create({ channel, revision: 0 });
      row.sealed = this.deps.box.sealJson(settings);
      row.revision = (existing?.revision ?? 0) + 1;
      row.label = label;
      row.updatedById = ctx.userId ?? null;
      const out = await repo.save(row);
      // Never the secret: what changed and the public label only.
      await this.deps.audit.record(tx, 'channel.setup', { type: 'Channel', id: channel }, { channel, label, replaced: !!existing });
      return out;
    });
    await this.deps.plugins.set(ctx, `channel:${channel}`, null, true);
    this.changed();
    return { channel, source: 'CONSOLE', secretSet: channel === 'telegram', label: saved.label, updatedAt: saved.updatedAt, updatedById: saved.updatedById };
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }
}

function isSetupChannel(name: string): name is SetupChannel {
  return (SETUP_CHANNELS as readonly string[]).includes(name);
}

function parseChannel(name: string): SetupChannel {
  if (!isSetupChannel(name)) throw new UserInputError(`"${name.slice(0, 40)}" is not a channel that can be set up here (telegram or whatsapp).`, 'channel');
  return name;
}
