import { randomUUID } from 'node:crypto';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { ToolApprovalService, ToolPipeline, ToolRegistry, type ActivationSource, type Tool, type ToolCallOutcome, type ToolSpec } from '../tools';
import { MCP_SERVE_CHANNEL } from './served-tools';

export interface McpServeDeps {
  tools: readonly Tool[];
  db: Db;
  audit: AuditService;
  /** Per-channel tool switches (plugin_settings); the `/mcp` endpoint is channel `mcp`. */
  activation: ActivationSource;
  timeoutMs: number;
  maxOutputChars: number;
}

/**
 * Muninn's own tools as the `/mcp` endpoint serves them: listed for the caller's trust and the `mcp`
 * channel's switches, and run through a tool pipeline of their own, so trust and the switch are checked
 * again where the call runs and every call and refusal is audited like a call from a chat.
 */
export class McpServeService {
  private readonly registry: ToolRegistry;
  private readonly pipeline: ToolPipeline;

  constructor(deps: McpServeDeps) {
    this.registry = new ToolRegistry(deps.activation);
    for (const tool of deps.tools) this.registry.register(tool);
    const approvals = new ToolApprovalService(deps.db, deps.audit, this.registry, { timeoutMs: 60_000 });
    this.pipeline = new ToolPipeline({ registry: this.registry, approvals, audit: deps.audit }, { timeoutMs: deps.timeoutMs, maxOutputChars: deps.maxOutputChars, maxParallel: 1 });
  }

  /** The tools the caller may use now, as MCP `tools/list` shows them. */
  list(ctx: Ctx): Promise<ToolSpec[]> {
    return this.registry.specsFor(ctx, MCP_SERVE_CHANNEL);
  }

  /** Runs one call as the caller; never throws (refusals and failures are outcomes). */
  call(ctx: Ctx, name: string, args: unknown, signal: AbortSignal): Promise<ToolCallOutcome> {
    return this.pipeline.runOne(
      { ctx, sessionId: `${MCP_SERVE_CHANNEL}:${ctx.userId ?? 'anonymous'}`, channel: MCP_SERVE_CHANNEL, chatId: null, signal },
      { id: randomUUID(), name, arguments: JSON.stringify(args ?? {}) },
    );
  }
}
