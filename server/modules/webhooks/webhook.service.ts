import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { ConflictError, ForbiddenError, NotFoundError, UserInputError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { Message, MessageRole, Session } from '../sessions';
import { CHANNELS, type UserService } from '../users';
import { Webhook } from './webhook.entity';
import { generateWebhookSecret, hashWebhookSecret } from './webhook-secret';
import { WebhookDelivery } from './webhook-delivery';

/** Webhook names: the last part of `/hooks/<name>`. */
export const WEBHOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Channels a result may be sent to. */
const TARGET_CHANNELS: readonly string[] = CHANNELS;

export interface CreateWebhookInput {
  name: string;
  instructions?: string | null;
  /** Whose turn it is; default the caller. Not someone with more trust than the caller. */
  ownerId?: string | null;
  targetChannel?: string | null;
  targetChatId?: string | null;
}

/**
 * Webhooks for ADMINs and above: list with their recent deliveries, create (the secret is returned once),
 * switch off and on, rotate the secret and delete, audited.
 */
export class WebhookService {
  constructor(
    private readonly db: Db,
    private readonly users: UserService,
    private readonly audit: AuditService,
  ) {}

  list(ctx: Ctx): Promise<Webhook[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'webhooks');
    return this.db.repo(ctx, Webhook).find({ order: { name: 'ASC' } });
  }

  findByName(ctx: Ctx, name: string): Promise<Webhook | null> {
    return this.db.repo(ctx, Webhook).findOneBy({ name });
  }

  async create(ctx: Ctx, input: CreateWebhookInput): Promise<{ webhook: Webhook; secret: string }> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'webhooks');
    const name = input.name.trim();
    if (!WEBHOOK_NAME.test(name)) throw new UserInputError(`name "${input.name}" is not valid: use lowercase letters, digits, - and _ (at most 64).`, 'name');
    const ownerId = input.ownerId ?? ctx.userId;
    if (!ownerId) throw new UserInputError('ownerId is required when the caller is not a user.', 'ownerId');
    const owner = await this.users.get(ctx, ownerId);
    if (!trustAtLeast(ctx.trust, owner.trust)) throw new ForbiddenError(`A webhook may not run with more trust than yours (the owner is ${owner.trust}).`);
    if (!trustAtLeast(owner.trust, TrustLevel.MEMBER)) throw new UserInputError(`The owner is ${owner.trust}; a webhook's owner must be MEMBER or above.`, 'ownerId');
    const target = this.target(input);
    const instructions = input.instructions?.trim() || null;
    if (instructions && instructions.length > 4000) throw new UserInputError('instructions are longer than 4000 characters.', 'instructions');
    const secret = generateWebhookSecret();
    const webhook = await this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, Webhook);
      if (await repo.existsBy({ name })) throw new ConflictError(`A webhook named "${name}" exists already; delete it first or pick another name.`);
      const saved = await repo.save(
        repo.create({ name, instructions, ownerId, secretHash: hashWebhookSecret(secret), ...target, enabled: true, lastCalledAt: null }),
      );
      await this.audit.record(tx, 'webhook.create', { type: 'Webhook', id: saved.id }, { name, ownerId, ...target });
      return saved;
    });
    return { webhook, secret };
  }

  /** Switches a webhook off (calls get 401, like an unknown name) or on again. */
  async setEnabled(ctx: Ctx, name: string, enabled: boolean): Promise<Webhook> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'webhooks');
    return this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, Webhook);
      const hook = await repo.findOneBy({ name });
      if (!hook) throw new NotFoundError('Webhook', name);
      if (hook.enabled === enabled) return hook;
      hook.enabled = enabled;
      const saved = await repo.save(hook);
      await this.audit.record(tx, enabled ? 'webhook.enable' : 'webhook.disable', { type: 'Webhook', id: hook.id }, { name });
      return saved;
    });
  }

  /** A new secret for a webhook (returned once); the old one stops working at once. */
  async rotateSecret(ctx: Ctx, name: string): Promise<{ webhook: Webhook; secret: string }> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'webhooks');
    const secret = generateWebhookSecret();
    const webhook = await this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, Webhook);
      const hook = await repo.findOneBy({ name });
      if (!hook) throw new NotFoundError('Webhook', name);
      hook.secretHash = hashWebhookSecret(secret);
      const saved = await repo.save(hook);
      await this.audit.record(tx, 'webhook.rotate_secret', { type: 'Webhook', id: hook.id }, { name });
      return saved;
    });
    return { webhook, secret };
  }

  /** The newest accepted calls of a webhook (from its hook:<name> sessions, archived ones too), newest first. */
  async deliveries(ctx: Ctx, hook: Pick<Webhook, 'name'>, limit = 10): Promise<WebhookDelivery[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'webhooks');
    const rows = await this.db
      .repo(ctx, Message)
      .createQueryBuilder('m')
      .innerJoin(Session, 's', 's.id = m.sessionId')
      .where('s.key = :key', { key: `hook:${hook.name}` })
      .andWhere('m.role = :role', { role: MessageRole.USER })
      .orderBy('m.createdAt', 'DESC')
      .addOrderBy('m.id', 'DESC')
      .limit(Math.min(Math.max(limit, 1), 50))
      .getMany();
    return rows.map((m) => Object.assign(new WebhookDelivery(), { id: m.id, receivedAt: m.createdAt, status: m.status, turnId: m.turnId, sessionId: m.sessionId }));
  }

  async delete(ctx: Ctx, name: string): Promise<boolean> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'webhooks');
    return this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, Webhook);
      const hook = await repo.findOneBy({ name });
      if (!hook) throw new NotFoundError('Webhook', name);
      await repo.delete({ id: hook.id });
      await this.audit.record(tx, 'webhook.delete', { type: 'Webhook', id: hook.id }, { name });
      return true;
    });
  }

  private target(input: CreateWebhookInput): { targetChannel: string | null; targetChatId: string | null } {
    const channel = input.targetChannel?.trim() || null;
    const chatId = input.targetChatId?.trim() || null;
    if (!channel && !chatId) return { targetChannel: null, targetChatId: null };
    if (!channel || !chatId) throw new UserInputError('Give both targetChannel and targetChatId, or neither (the owner\'s principal chat).', channel ? 'targetChatId' : 'targetChannel');
    if (!TARGET_CHANNELS.includes(channel)) throw new UserInputError(`targetChannel must be one of ${TARGET_CHANNELS.join(', ')}.`, 'targetChannel');
    return { targetChannel: channel, targetChatId: chatId };
  }
}
