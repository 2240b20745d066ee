import { EventEmitter } from 'node:events';
import { LessThanOrEqual } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { ConflictError, ForbiddenError, NotFoundError, UserInputError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { access } from '../users';
import { effectiveMinTrust, type Tool } from './tool';
import { ToolApproval, ToolApprovalStatus } from './tool-approval.entity';
import { parseToolApprovalDecision, STATUS_OF_DECISION, type ToolApprovalDecision } from './tool-approval.types';

export interface ToolApprovalOptions {
  /** How long a request waits for a decision before it is EXPIRED (denied). The app passes `tools.approval_timeout_minutes` × 60 000. */
  timeoutMs: number;
  /** How often a waiting turn re-reads the row, so decisions made by another process are seen. @default 500 */
  pollIntervalMs?: number;
  /** Current time in ms. @default Date.now */
  now?: () => number;
}

export interface ApprovalRequestInput {
  sessionId: string;
  tool: string;
  /** Stored on the row so the decider sees what would run. */
  args: unknown;
  turnId?: string | null;
  /** Short, secret-free summary of the arguments for the audit log. */
  argsSummary?: string;
}

export interface ApprovalRequestResult {
  /** The new PENDING row, or — when auto-approved — the earlier ALLOWED_ALWAYS grant. */
  approval: ToolApproval;
  /** True when an earlier ALLOW_ALWAYS of this user and tool approved the call without asking. */
  autoApproved: boolean;
}

/** Where the service learns a tool's floor (to know who may decide); the `ToolRegistry` in the app. */
export type ToolLookup = { get(name: string): Tool | undefined };

/**
 * Approvals of tool calls (DESIGN §3): a paused call waits for an OWNER (or an ADMIN, for tools below
 * OWNER) to decide ALLOW_ONCE, ALLOW_ALWAYS or DENY; undecided requests expire. Waiting works across
 * processes (the row is polled) and wakes up at once for decisions made in this process.
 */
export class ToolApprovalService {
  private readonly events = new EventEmitter();
  private readonly pollIntervalMs: number;
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
    private readonly tools: ToolLookup,
    private readonly options: ToolApprovalOptions,
  ) {
    if (!(options.timeoutMs > 0)) throw new Error(`ToolApprovalOptions.timeoutMs must be > 0, got ${options.timeoutMs}.`);
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.now = options.now ?? Date.now;
    this.events.setMaxListeners(0);
  }

  /**
   * Asks for approval of one call. When this user earlier got ALLOW_ALWAYS for the tool the call is
   * approved at once (audited as `tool.approval.auto`); otherwise a PENDING row is created.
   */
  async request(ctx: Ctx, input: ApprovalRequestInput): Promise<ApprovalRequestResult> {
    const repo = this.db.repo(ctx, ToolApproval);
    const userId = ctx.userId;
    const common = { tool: input.tool, sessionId: input.sessionId, turnId: input.turnId ?? null, args: input.argsSummary };
    if (userId) {
      const grant = await repo.findOne({
        where: { userId, tool: input.tool, status: ToolApprovalStatus.ALLOWED_ALWAYS },
        order: { id: 'DESC' },
      });
      if (grant) {
        await this.audit.record(ctx, 'tool.approval.auto', { type: 'ToolApproval', id: grant.id }, common);
        return { approval: grant, autoApproved: true };
      }
    }
    const approval = await repo.save(
      repo.create({
        sessionId: input.sessionId,
        userId,
        tool: input.tool,
        args: input.args ?? null,
        status: ToolApprovalStatus.PENDING,
        expiresAt: new Date(this.now() + this.options.timeoutMs),
        decidedAt: null,
        decidedBy: null,
        turnId: input.turnId ?? null,
      }),
    );
    await this.audit.record(ctx, 'tool.approval.request', { type: 'ToolApproval', id: approval.id }, common);
    return { approval, autoApproved: false };
  }

  findOne(ctx: Ctx, id: string): Promise<ToolApproval | null> {
    return this.db.repo(ctx, ToolApproval).findOneBy({ id });
  }

  /** The approval, or NOT_FOUND. */
  async get(ctx: Ctx, id: string): Promise<ToolApproval> {
    const row = await this.findOne(ctx, id);
    if (!row) throw new NotFoundError('ToolApproval', id);
    return row;
  }

  /** Approvals, newest first (at most 200); ADMIN and above. */
  async list(ctx: Ctx, status?: ToolApprovalStatus | null): Promise<ToolApproval[]> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'tool approvals');
    return this.db.repo(ctx, ToolApproval).find({ where: status ? { status } : {}, order: { id: 'DESC' }, take: 200 });
  }

  /** Lowest trust that may decide on calls of `tool`: OWNER for OWNER-level (and unknown) tools, else ADMIN. */
  deciderTrustFor(tool: string): TrustLevel {
    const t = this.tools.get(tool);
    if (!t || effectiveMinTrust(t) === TrustLevel.OWNER) return TrustLevel.OWNER;
    return TrustLevel.ADMIN;
  }

  /**
   * Decides a PENDING approval (`decision` is also accepted as `allow_once`, `allow-always`, `deny`;
   * anything else is BAD_USER_INPUT). FORBIDDEN below the decider level of the tool; CONFLICT when it was already
   * decided or has expired. Wakes up the waiting turn in this process at once (others see it on their next poll).
   */
  async decide(ctx: Ctx, id: string, decision: ToolApprovalDecision): Promise<ToolApproval> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'deciding tool approvals');
    // Callers from chat may pass `allow_once` etc.; anything else is a user error, never a silent no-op.
    const parsed = parseToolApprovalDecision(String(decision));
    if (!parsed) throw new UserInputError(`decision must be ALLOW_ONCE, ALLOW_ALWAYS or DENY; got "${String(decision)}".`, 'decision');
    decision = parsed;
    const status = STATUS_OF_DECISION[decision];
    // Checks run before the transaction, so a refusal never opens (and rolls back) one.
    const approval = await this.get(ctx, id);
    const required = this.deciderTrustFor(approval.tool);
    if (!trustAtLeast(ctx.trust, required)) {
      throw new ForbiddenError(`Only an OWNER may decide on "${approval.tool}", an OWNER-level tool.`);
    }
    if (approval.status !== ToolApprovalStatus.PENDING) {
      throw new ConflictError(`Approval ${id} was already decided: ${approval.status}.`);
    }
    if (approval.expiresAt.getTime() <= this.now()) {
      await this.expire(ctx, approval, 'timeout');
      throw new ConflictError(`Approval ${id} has expired; the call was denied.`);
    }
    const decided = await this.db.withTransaction(ctx, async (tx) => {
      const now = new Date(this.now());
      // Conditional on PENDING: of two deciders (even in two processes) exactly one wins.
      const result = await this.db
        .repo(tx, ToolApproval)
        .update({ id, status: ToolApprovalStatus.PENDING }, { status, decidedAt: now, decidedBy: tx.userId, updatedAt: now });
      if (!result.affected) return null;
      await this.audit.record(tx, 'tool.approval.decide', { type: 'ToolApproval', id }, {
        tool: approval.tool,
        decision,
        requestedBy: approval.userId,
        sessionId: approval.sessionId,
      });
      return this.get(tx, id);
    });
    if (!decided) {
      const current = await this.get(ctx, id);
      throw new ConflictError(`Approval ${id} was already decided: ${current.status}.`);
    }
    this.events.emit(id, status);
    return decided;
  }

  /**
   * Waits until approval `id` is no longer PENDING and returns its final status. Once `expiresAt` passes
   * the row is marked EXPIRED (which callers treat as denied). Rejects with the signal's reason on abort.
   */
  async waitForDecision(ctx: Ctx, id: string, signal: AbortSignal | undefined = ctx.signal): Promise<ToolApprovalStatus> {
    for (;;) {
      signal?.throwIfAborted();
      const row = await this.get(ctx, id);
      if (row.status !== ToolApprovalStatus.PENDING) return row.status;
      const left = row.expiresAt.getTime() - this.now();
      if (left <= 0) {
        await this.expire(ctx, row, 'timeout');
        continue;
      }
      await this.sleep(id, Math.min(this.pollIntervalMs, left), signal);
    }
  }

  /**
   * Withdraws a PENDING request whose turn went away (stopped or aborted): it becomes EXPIRED so nobody
   * approves a call that will never run. No-op when already decided.
   */
  async withdraw(ctx: Ctx, id: string): Promise<void> {
    const row = await this.findOne(ctx, id);
    if (row?.status === ToolApprovalStatus.PENDING) await this.expire(ctx, row, 'withdrawn');
  }

  /** Marks every overdue PENDING request EXPIRED (maintenance job); returns how many. */
  async expireOverdue(ctx: Ctx): Promise<number> {
    const overdue = await this.db.repo(ctx, ToolApproval).findBy({
      status: ToolApprovalStatus.PENDING,
      expiresAt: LessThanOrEqual(new Date(this.now())),
    });
    let count = 0;
    for (const row of overdue) if (await this.expire(ctx, row, 'timeout')) count += 1;
    return count;
  }

  /** PENDING → EXPIRED unless someone decided first; true when this call changed the row. */
  private async expire(ctx: Ctx, row: ToolApproval, reason: 'timeout' | 'withdrawn'): Promise<boolean> {
    const now = new Date(this.now());
    const result = await this.db
      .repo(ctx, ToolApproval)
      .update({ id: row.id, status: ToolApprovalStatus.PENDING }, { status: ToolApprovalStatus.EXPIRED, decidedAt: now, updatedAt: now });
    if (!result.affected) return false;
    await this.audit.record(ctx, 'tool.approval.expire', { type: 'ToolApproval', id: row.id }, {
      tool: row.tool,
      reason,
      requestedBy: row.userId,
      sessionId: row.sessionId,
    });
    this.events.emit(row.id, ToolApprovalStatus.EXPIRED);
    return true;
  }

  /** Sleeps `ms`, waking early when a decision for `id` is made in this process; rejects on abort. */
  private sleep(id: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        this.events.off(id, done);
        signal?.removeEventListener('abort', onAbort);
      };
      const done = () => {
        cleanup();
        resolve();
      };
      const onAbort = () => {
        cleanup();
        reject(signal?.reason);
      };
      const timer = setTimeout(done, ms);
      this.events.on(id, done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
