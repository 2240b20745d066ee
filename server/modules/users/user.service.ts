import { In } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { ConflictError, NotFoundError, UserInputError } from '../../common/errors';
import type { Page, PageArgs } from '../../common/pagination';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import { findPage } from '../../persistence/paginate';
import { selectPlain } from '../../persistence/plain-select';
import type { AuditService } from '../audit';
import { access } from '../../common/access';
import { ChangeCache } from '../../common/change-cache';
import { Identity } from './identity.entity';
import { User } from './user.entity';

export const CHANNELS = ['telegram', 'whatsapp', 'web', 'tui'] as const satisfies readonly string[];
export type ChannelName = (typeof CHANNELS)[number];

export interface CreateUserInput {
  displayName: string;
  trust?: TrustLevel | null;
}

/** Users, their trust and their identities. */
export class UserService {
  /** Users as read recently, by id (dropped on any change of users, in any process). */
  private readonly copies: ChangeCache<User | null>;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly defaultTrust: TrustLevel,
  ) {
    this.copies = new ChangeCache(db.changes, ['users']);
  }

  findOne(ctx: Ctx, id: string): Promise<User | null> {
    return this.db.repo(ctx, User).findOneBy({ id });
  }

  /**
   * {@link findOne} for the hot path of a turn: this process's copy of the user while no user changed
   * (in any process, see ChangeCache); read afresh inside a transaction.
   */
  async current(ctx: Ctx, id: string): Promise<User | null> {
    if (ctx.manager) return this.findOne(ctx, id);
    const user = await this.copies.get(id, () => this.findOne(ctx, id));
    return user ? Object.assign(new User(), user) : null;
  }

  /** The user, or NOT_FOUND. */
  async get(ctx: Ctx, id: string): Promise<User> {
    const user = await this.findOne(ctx, id);
    if (!user) throw new NotFoundError('User', id);
    return user;
  }

  /** A user the actor may see: themselves, or anyone for ADMIN and above. */
  async getVisible(ctx: Ctx, id: string): Promise<User> {
    access.requireOwnOrAdmin(ctx, id, 'user record');
    return this.get(ctx, id);
  }

  findMany(ctx: Ctx, page: PageArgs, trust?: TrustLevel | null): Promise<Page<User>> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'listing users');
    return findPage(this.db.repo(ctx, User), trust ? { trust } : {}, page, 'ASC');
  }

  /** Every user, oldest first (CLI). */
  listAll(ctx: Ctx): Promise<User[]> {
    return this.db.repo(ctx, User).find({ order: { id: 'ASC' } });
  }

  async create(ctx: Ctx, input: CreateUserInput): Promise<User> {
    const displayName = input.displayName.trim();
    if (!displayName) throw new UserInputError('displayName must not be empty.', 'displayName');
    const trust = input.trust ?? this.defaultTrust;
    access.requireMayGrant(ctx, trust, null);
    return this.db.withTransaction(ctx, async (tx) => {
      const repo = this.db.repo(tx, User);
      const user = await repo.save(repo.create({ displayName, trust }));
      await this.audit.record(tx, 'user.create', { type: 'User', id: user.id }, { trust });
      return user;
    });
  }

  /**
   * Changes a user's display name: ADMIN and above for anyone they may manage (an ADMIN cannot rename an
   * ADMIN or OWNER), and every user for themselves. Audited with the old and new name.
   */
  async rename(ctx: Ctx, userId: string, displayName: string): Promise<User> {
    const name = displayName.trim();
    if (!name) throw new UserInputError('displayName must not be empty.', 'displayName');
    return this.db.withTransaction(ctx, async (tx) => {
      const user = await this.get(tx, userId);
      if (tx.userId !== userId) access.requireMayGrant(tx, TrustLevel.GUEST, user.trust);
      const previous = user.displayName;
      user.displayName = name;
      const saved = await this.db.repo(tx, User).save(user);
      this.db.changed(tx, 'users');
      await this.audit.record(tx, 'user.rename', { type: 'User', id: userId }, { from: previous, to: name });
      return saved;
    });
  }

  async setTrust(ctx: Ctx, userId: string, trust: TrustLevel): Promise<User> {
    return this.db.withTransaction(ctx, async (tx) => {
      const user = await this.get(tx, userId);
      access.requireMayGrant(tx, trust, user.trust);
      if (user.trust === TrustLevel.OWNER && trust !== TrustLevel.OWNER) {
        const owners = await this.db.repo(tx, User).countBy({ trust: TrustLevel.OWNER });
        if (owners <= 1) throw new ConflictError('This is the last OWNER; make another user OWNER first.');
      }
      const previous = user.trust;
      user.trust = trust;
      const saved = await this.db.repo(tx, User).save(user);
      this.db.changed(tx, 'users');
      await this.audit.record(tx, 'user.trust.set', { type: 'User', id: userId }, { from: previous, to: trust });
      return saved;
    });
  }

  async linkIdentity(ctx: Ctx, userId: string, channel: string, handle: string, displayName?: string | null): Promise<Identity> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'linking identities');
    if (!(CHANNELS as readonly string[]).includes(channel)) {
      throw new UserInputError(`channel must be one of ${CHANNELS.join(', ')}; got "${channel}".`, 'channel');
    }
    const cleanHandle = handle.trim();
    if (!cleanHandle) throw new UserInputError('handle must not be empty.', 'handle');
    return this.db.withTransaction(ctx, async (tx) => {
      const user = await this.get(tx, userId);
      access.requireMayGrant(tx, user.trust, user.trust);
      const repo = this.db.repo(tx, Identity);
      const existing = await repo.findOneBy({ channel, handle: cleanHandle });
      if (existing && existing.userId !== userId) {
        throw new ConflictError(`${channel}:${cleanHandle} is already linked to another user.`);
      }
      if (existing) return existing;
      const identity = await repo.save(repo.create({ userId, channel, handle: cleanHandle, displayName: displayName ?? null }));
      await this.audit.record(tx, 'identity.link', { type: 'User', id: userId }, { identity: identity.key });
      return identity;
    });
  }

  /**
   * Deletes a user and their data (OWNER only, DESIGN §3): identities, tokens, sessions with messages and
   * images, memories and beats go with the row (foreign keys cascade); usage rows and tool approvals are
   * deleted, pairing requests keep their history without the link. The audit log keeps the entry. CONFLICT
   * for yourself and the last OWNER.
   */
  async delete(ctx: Ctx, id: string): Promise<boolean> {
    access.requireTrust(ctx, TrustLevel.OWNER, 'deleting users');
    if (id === ctx.userId) throw new ConflictError('You cannot delete yourself; another OWNER can.');
    return this.db.withTransaction(ctx, async (tx) => {
      const user = await this.get(tx, id);
      if (user.trust === TrustLevel.OWNER && (await this.db.repo(tx, User).countBy({ trust: TrustLevel.OWNER })) <= 1) {
        throw new ConflictError('This is the last OWNER; make another user OWNER first.');
      }
      const manager = this.db.repo(tx, User).manager;
      for (const table of ['usage', 'tool_approvals']) {
        await manager.createQueryBuilder().delete().from(table).where('"userId" = :id', { id }).execute();
      }
      await manager.createQueryBuilder().update('pairing_requests').set({ userId: null }).where('"userId" = :id', { id }).execute();
      await this.db.repo(tx, User).delete({ id });
      this.db.changed(tx, 'users');
      await this.audit.record(tx, 'user.delete', { type: 'User', id }, { displayName: user.displayName, trust: user.trust });
      return true;
    });
  }

  /** The user behind a channel handle, or null for an unknown sender. */
  /**
   * The user of a channel sender seen for the first time, created with the identity linked (`trust` as
   * the channel's policy says). A concurrent first message from the same sender (another process) may win
   * the race: then the identity exists and its user is returned.
   */
  async createFromSender(ctx: Ctx, channel: string, sender: { handle: string; displayName?: string | null }, trust: TrustLevel): Promise<User> {
    const displayName = (sender.displayName?.trim() || `${channel} ${sender.handle}`).slice(0, 200);
    try {
      return await this.db.withTransaction(ctx, async (tx) => {
        const existing = await this.findByIdentity(tx, channel, sender.handle);
        if (existing) return existing;
        const user = await this.create(tx, { displayName, trust });
        await this.linkIdentity(tx, user.id, channel, sender.handle, sender.displayName ?? null);
        return user;
      });
    } catch (err) {
      const winner = await this.findByIdentity(ctx, channel, sender.handle);
      if (winner) return winner;
      throw err;
    }
  }

  async findByIdentity(ctx: Ctx, channel: string, handle: string): Promise<User | null> {
    const repo = this.db.repo(ctx, Identity);
    // One plain statement for the identity and its user (every inbound platform message asks).
    const found = await selectPlain(repo, [{ channel, handle }], { limit: 1, columns: ['userId'], join: 'user' });
    if (found) return found[0]?.user ?? null;
    const identity = await repo.findOneBy({ channel, handle });
    return identity ? this.findOne(ctx, identity.userId) : null;
  }

  /** Identities of many users at once (DataLoader batch). */
  async identitiesOf(ctx: Ctx, userIds: readonly string[]): Promise<Identity[][]> {
    const rows = await this.db.repo(ctx, Identity).find({ where: { userId: In([...userIds]) }, order: { id: 'ASC' } });
    return userIds.map((id) => rows.filter((r) => r.userId === id));
  }

  /** Many users at once, in the order asked (DataLoader batch). */
  async usersByIds(ctx: Ctx, ids: readonly string[]): Promise<Array<User | null>> {
    const repo = this.db.repo(ctx, User);
    const rows = (await selectPlain(repo, [{ id: [...ids] }])) ?? (await repo.findBy({ id: In([...ids]) }));
    return ids.map((id) => rows.find((r) => r.id === id) ?? null);
  }

  /** The first OWNER, or null on an empty database. */
  findOwner(ctx: Ctx): Promise<User | null> {
    return this.db.repo(ctx, User).findOne({ where: { trust: TrustLevel.OWNER }, order: { id: 'ASC' } });
  }
}
