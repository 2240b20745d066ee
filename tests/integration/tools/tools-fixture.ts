import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { App } from '../../../server/app';
import { Ctx } from '../../../server/common/ctx';
import { TrustLevel, TRUST_ORDER } from '../../../server/common/trust';
import { AuditEntry } from '../../../server/modules/audit';
import type { User } from '../../../server/modules/users';
import {
  ToolApprovalService,
  ToolPipeline,
  ToolRegistry,
  type MessageSender,
  type MessageTarget,
  type Tool,
  type ToolContext,
} from '../../../server/modules/tools';
import { LogCapture } from '../../support/log-capture';
import { testConfig } from '../../support/test-app';

/** Records what send_message delivered. */
export class FakeMessageSender implements MessageSender {
  readonly sent: Array<{ target: MessageTarget; text: string; from: string | null }> = [];

  async send(ctx: Ctx, target: MessageTarget, text: string): Promise<void> {
    this.sent.push({ target, text, from: ctx.userId });
  }
}

export interface ToolsFixtureOptions {
  /** Raw config merged over the test defaults (e.g. `{ tools: { shell: { enabled: true } } }`). */
  config?: Record<string, unknown>;
  /** Approval timeout in ms. @default 60000 */
  approvalTimeoutMs?: number;
  pollIntervalMs?: number;
}

/**
 * A real app (SQLite in a temp folder, no Redis) with one user per trust level (each with a telegram
 * identity `tg-<level>`), and a registry, approvals service and pipeline built on its services.
 */
export class ToolsFixture {
  readonly users = new Map<TrustLevel, User>();
  readonly sender = new FakeMessageSender();
  registry!: ToolRegistry;
  approvals!: ToolApprovalService;
  pipeline!: ToolPipeline;

  private constructor(
    readonly app: App,
    readonly dataDir: string,
    readonly logs: LogCapture,
  ) {}

  static async create(options: ToolsFixtureOptions = {}): Promise<ToolsFixture> {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-tools-'));
    const logs = new LogCapture();
    const app = await App.create({ config: testConfig(dataDir, options.config ?? {}), redis: false, logDestination: logs });
    const f = new ToolsFixture(app, dataDir, logs);
    const sys = app.systemCtx('test');
    for (const level of TRUST_ORDER) {
      const user = await app.services.users.create(sys, { displayName: `${level.toLowerCase()} user`, trust: level });
      await app.services.users.linkIdentity(sys, user.id, 'telegram', `tg-${level.toLowerCase()}`);
      f.users.set(level, user);
    }
    f.registry = new ToolRegistry(app.services.plugins);
    f.approvals = new ToolApprovalService(app.db, app.services.audit, f.registry, {
      timeoutMs: options.approvalTimeoutMs ?? 60_000,
      // Long by default: in-process decisions must wake waiters through the event, not the poll.
      pollIntervalMs: options.pollIntervalMs ?? 5000,
    });
    const t = app.config.tools;
    f.pipeline = new ToolPipeline(
      { registry: f.registry, approvals: f.approvals, audit: app.services.audit },
      { timeoutMs: t.timeout_ms, maxOutputChars: t.max_output_chars, maxParallel: t.max_parallel },
    );
    return f;
  }

  register(...tools: Tool[]): this {
    for (const tool of tools) this.registry.register(tool);
    return this;
  }

  user(level: TrustLevel): User {
    return this.users.get(level)!;
  }

  /** A ctx acting as the user of `level`. */
  ctx(level: TrustLevel, channel = 'telegram', signal?: AbortSignal): Ctx {
    const user = this.user(level);
    return new Ctx({ actor: { kind: 'user', userId: user.id, trust: level }, logger: this.app.logger, channel, signal });
  }

  toolContext(level: TrustLevel, overrides: Partial<ToolContext> = {}): ToolContext {
    const channel = overrides.channel ?? 'telegram';
    return {
      ctx: this.ctx(level, channel),
      sessionId: 'session-1',
      channel,
      chatId: `tg-${level.toLowerCase()}`,
      signal: new AbortController().signal,
      turnId: 'turn-1',
      ...overrides,
    };
  }

  systemCtx(): Ctx {
    return this.app.systemCtx('test');
  }

  /** Audit entries of `action`, oldest first. */
  audit(action: string): Promise<AuditEntry[]> {
    return this.app.db.repo(this.systemCtx(), AuditEntry).find({ where: { action }, order: { id: 'ASC' } });
  }

  async close(): Promise<void> {
    await this.app.dispose();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** One call with JSON-encoded arguments. */
export function call(name: string, args: unknown, id = `call-${name}`): { id: string; name: string; arguments: string } {
  return { id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}
