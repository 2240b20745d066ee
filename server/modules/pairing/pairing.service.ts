import { LessThanOrEqual, MoreThan } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { ConflictError, NotFoundError, UserInputError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { access, type User, type UserService } from '../users';
import { generatePairingCode, normalizePairingCode, PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH } from './pairing-code';
import { PairingRequest, PairingStatus } from './pairing-request.entity';

/**
 * Port: tells a requester that they were let in. The composition root wires the outbound queue
 * (`OutboundQueue` implements this shape as `NoticeSender`); `key` makes a retried notice idempotent.
 *
 * @example
 * const notifier: PairingNotifier = outboundQueue;
 */
export interface PairingNotifier {
  notify(ctx: Ctx, target: { channel: string; chatId: string; key: string }, text: string): Promise<void>;
}

export interface PairingOptions {
  /** How long a code stays valid. @default 3_600_000 (1 hour, DESIGN §3) */
  ttlMs?: number;
  /** PENDING requests allowed per channel at a time. @default 3 */
  maxPendingPerChannel?: number;
  /** A sender gets at most one code per this window. @default 3_600_000 (1 hour) */
  resendAfterMs?: number;
  /** Clock, for tests. @default Date.now */
  now?: () => number;
}

/** What `request` did for an unknown sender. */
export type PairingOutcome =
  /** A new code was issued; send it to the sender. */
  | { kind: 'created'; request: PairingRequest }
  /** The sender already got a code within the last hour: no new code (the caller stays silent). */
  | { kind: 'already-requested'; request: PairingRequest }
  /** The channel has the maximum of PENDING requests: no code; the caller says "try later". */
  | { kind: 'full'; pending: number };

/** Who asks to be let in. For DMs on Telegram and WhatsApp the handle is also the chat id. */
export interface PairingRequestInput {
  channel: string;
  handle: string;
  displayName?: string | null;
}

/** An approval: the request, the user now behind the identity, and whether that user is new. */
export interface PairingApproval {
  request: PairingRequest;
  user: User;
  created: boolean;
}

const HOUR = 3_600_000;

/**
 * Pairing of unknown DM senders (DESIGN §3). `request` issues an 8-character code (no 0/O/1/I), valid
 * one hour, at most three PENDING per channel, and at most one code per sender per hour — a sender who
 * writes again within that hour gets no new code and no answer. ADMINs `approve` (the sender becomes a
 * MEMBER with the identity linked, and is told through the {@link PairingNotifier}) or `deny` a code;
 * both are audited. Requests past their expiry are marked EXPIRED lazily, whenever requests are read.
 *
 * The requester is notified at `chatId = handle`: the entity stores no chat id, and for direct messages
 * the two are the same (Telegram: a private chat's id is the user's id; WhatsApp: a 1:1 chat's JID is
 * the other party's JID). Pairing never starts from a group.
 *
 * Stateless apart from the database, so several instances (chat runtime, GraphQL, CLI) may coexist.
 */
export class PairingService {
  private readonly options: Required<PairingOptions>;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly users: UserService,
    /** Null where no chat platform is reachable (the CLI): approvals then tell nobody. */
    private readonly notifier: PairingNotifier | null,
    options: PairingOptions = {},
  ) {
    this.options = {
      ttlMs: options.ttlMs ?? HOUR,
      maxPendingPerChannel: options.maxPendingPerChannel ?? 3,
      resendAfterMs: options.resendAfterMs ?? HOUR,
      now: options.now ?? Date.now,
    };
    if (this.options.maxPendingPerChannel < 1) throw new Error('PairingOptions.maxPendingPerChannel must be at least 1');
  }

  /** How long a code stays valid, in ms. */
  get ttlMs(): number {
    return this.options.ttlMs;
  }

  /**
   * Asks for a code for an unknown DM sender. Called by the channel policy for senders without an
   * identity, so it needs no trust; it never creates users. Serialized per channel, so the PENDING
   * limit holds across processes (SQLite: one writer; PostgreSQL: a transaction-scoped advisory lock).
   */
  async request(ctx: Ctx, input: PairingRequestInput): Promise<PairingOutcome> {
    const handle = input.handle.trim();
    if (!handle) throw new UserInputError('handle must not be empty.', 'handle');
    return this.db.withTransaction(ctx, async (tx) => {
      if (this.db.kind === 'postgres') {
        await tx.manager!.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`muninn:pairing:${input.channel}`]);
      }
      const now = this.options.now();
      await this.expireStale(tx, now);
      const repo = this.db.repo(tx, PairingRequest);
      const recent = await repo.findOne({
        where: { channel: input.channel, handle, createdAt: MoreThan(new Date(now - this.options.resendAfterMs)) },
        order: { createdAt: 'DESC' },
      });
      if (recent) return { kind: 'already-requested', request: recent };
      const pending = await repo.countBy({ channel: input.channel, status: PairingStatus.PENDING });
      if (pending >= this.options.maxPendingPerChannel) return { kind: 'full', pending };
      const request = await repo.save(
        repo.create({
          code: await this.uniqueCode(tx),
          channel: input.channel,
          handle,
          displayName: input.displayName?.trim().slice(0, 200) || null,
          status: PairingStatus.PENDING,
          expiresAt: new Date(now + this.options.ttlMs),
          createdAt: new Date(now),
          updatedAt: new Date(now),
          decidedAt: null,
          decidedBy: null,
          userId: null,
        }),
      );
      await this.audit.record(tx, 'pairing.request', { type: 'PairingRequest', id: request.id }, { channel: input.channel, handle });
      return { kind: 'created', request };
    });
  }

  /** Requests, newest first (at most 200); null status lists all. ADMIN and above. */
  async list(ctx: Ctx, status: PairingStatus | null = null): Promise<PairingRequest[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'pairing requests');
    await this.db.withTransaction(ctx, (tx) => this.expireStale(tx, this.options.now()));
    return this.db.repo(ctx, PairingRequest).find({ where: status ? { status } : {}, order: { createdAt: 'DESC', id: 'DESC' }, take: 200 });
  }

  /**
   * Lets the sender in (ADMIN and above): a new MEMBER user named after the platform display name with
   * the identity linked, or — when the identity exists by now — that user, raised to MEMBER if it was a
   * GUEST. NOT_FOUND for an unknown code, CONFLICT for an expired or already decided one or a BLOCKED
   * user. Audited as `pairing.approve`; afterwards the requester is told (a failed notice is logged,
   * the approval stands).
   */
  async approve(ctx: Ctx, codeInput: string): Promise<PairingApproval> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'approving pairing requests');
    const approval = await this.db.withTransaction(ctx, async (tx) => {
      const request = await this.claim(tx, codeInput, PairingStatus.APPROVED);
      let user = await this.users.findByIdentity(tx, request.channel, request.handle);
      const created = !user;
      if (!user) {
        user = await this.users.create(tx, { displayName: displayNameOf(request), trust: TrustLevel.MEMBER });
        await this.users.linkIdentity(tx, user.id, request.channel, request.handle, request.displayName);
      } else if (user.trust === TrustLevel.BLOCKED) {
        throw new ConflictError(`${request.channel}:${request.handle} belongs to a BLOCKED user (${user.id}); change their trust instead.`);
      } else if (!trustAtLeast(user.trust, TrustLevel.MEMBER)) {
        user = await this.users.setTrust(tx, user.id, TrustLevel.MEMBER);
      }
      request.userId = user.id;
      const saved = await this.db.repo(tx, PairingRequest).save(request);
      await this.audit.record(tx, 'pairing.approve', { type: 'PairingRequest', id: request.id }, {
        identity: `${request.channel}:${request.handle}`,
        userId: user.id,
        createdUser: created,
      });
      return { request: saved, user, created };
    });
    await this.tellRequester(ctx, approval.request);
    return approval;
  }

  /** Turns the request down (ADMIN and above); the sender is not told. Audited as `pairing.deny`. */
  async deny(ctx: Ctx, codeInput: string): Promise<PairingRequest> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'denying pairing requests');
    return this.db.withTransaction(ctx, async (tx) => {
      const request = await this.claim(tx, codeInput, PairingStatus.DENIED);
      await this.audit.record(tx, 'pairing.deny', { type: 'PairingRequest', id: request.id }, {
        identity: `${request.channel}:${request.handle}`,
      });
      return request;
    });
  }

  /**
   * Moves a PENDING request to `status` exactly once: the conditional UPDATE makes a concurrent second
   * decision (another process) fail with CONFLICT instead of deciding twice.
   */
  private async claim(tx: Ctx, codeInput: string, status: PairingStatus.APPROVED | PairingStatus.DENIED): Promise<PairingRequest> {
    const code = normalizePairingCode(codeInput);
    if (!code) {
      throw new UserInputError(`"${codeInput.slice(0, 40)}" is not a pairing code: codes have ${PAIRING_CODE_LENGTH} characters from ${PAIRING_CODE_ALPHABET}.`, 'code');
    }
    const now = this.options.now();
    await this.expireStale(tx, now);
    const repo = this.db.repo(tx, PairingRequest);
    const request = await repo.findOneBy({ code });
    if (!request) throw new NotFoundError('Pairing request', code);
    if (request.status === PairingStatus.EXPIRED) {
      throw new ConflictError(`Pairing code ${code} expired at ${request.expiresAt.toISOString()}; the sender gets a new code when they write again.`);
    }
    if (request.status !== PairingStatus.PENDING) {
      throw new ConflictError(`Pairing code ${code} was already ${request.status.toLowerCase()}.`);
    }
    const decidedAt = new Date(now);
    const decidedBy = tx.userId;
    const result = await repo.update({ id: request.id, status: PairingStatus.PENDING }, { status, decidedAt, decidedBy, updatedAt: decidedAt });
    if (result.affected !== 1) throw new ConflictError(`Pairing code ${code} was decided by someone else just now.`);
    return Object.assign(request, { status, decidedAt, decidedBy, updatedAt: decidedAt });
  }

  /** Marks PENDING requests past their expiry as EXPIRED. */
  private async expireStale(tx: Ctx, now: number): Promise<void> {
    await this.db
      .repo(tx, PairingRequest)
      .update({ status: PairingStatus.PENDING, expiresAt: LessThanOrEqual(new Date(now)) }, { status: PairingStatus.EXPIRED, updatedAt: new Date(now) });
  }

  private async uniqueCode(tx: Ctx): Promise<string> {
    const repo = this.db.repo(tx, PairingRequest);
    for (let attempt = 0; attempt < 10; attempt++) {
      const code = generatePairingCode();
      if (!(await repo.existsBy({ code }))) return code;
    }
    // 40 bits per code: ten collisions in a row mean the random source is broken, not bad luck.
    throw new Error('could not find an unused pairing code');
  }

  private async tellRequester(ctx: Ctx, request: PairingRequest): Promise<void> {
    if (!this.notifier) return;
    try {
      await this.notifier.notify(
        ctx,
        { channel: request.channel, chatId: request.handle, key: `pairing:${request.code}:approved` },
        '✅ You are in: an admin approved your pairing request. Send me your message again and I will answer.',
      );
    } catch (err) {
      ctx.logger.warn({ err, channel: request.channel, pairingRequestId: request.id }, 'could not tell the requester about the approval');
    }
  }
}

function displayNameOf(request: PairingRequest): string {
  return (request.displayName?.trim() || `${request.channel} ${request.handle}`).slice(0, 200);
}
