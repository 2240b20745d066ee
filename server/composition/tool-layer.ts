import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../config';
import type { Db } from '../persistence/db';
import type { NoticeSender } from '../modules/events';
import type { AgentTools } from '../modules/agent';
import type { AuditService } from '../modules/audit';
import type { CommandApprovals, CommandTools } from '../modules/commands';
import type { PluginSettingService } from '../modules/plugins';
import { createBuiltinTools, ToolApprovalDecision, ToolApprovalService, ToolPipeline, ToolRegistry, type MessageSender, type Tool, type ToolSource } from '../modules/tools';
import type { UserService } from '../modules/users';

export interface ToolLayerDeps {
  config: AppConfig;
  db: Db;
  audit: AuditService;
  plugins: PluginSettingService;
  users: UserService;
  notices: NoticeSender;
  /** Tools of other modules (memory_search, memory_save), registered after the built-ins. */
  extraTools?: readonly Tool[];
  /** Tools that come and go at run time (MCP servers). */
  sources?: readonly ToolSource[];
}

export interface ToolLayer {
  registry: ToolRegistry;
  pipeline: ToolPipeline;
  approvals: ToolApprovalService;
  /** What the agent and the slash commands use. */
  agentTools: AgentTools & CommandTools;
  commandApprovals: CommandApprovals;
}

/**
 * Builds the tool registry with the built-in tools of this config, the pipeline that runs calls (trust
 * and activation re-checked there) and approvals; a paused call is announced in its session and, on
 * platform channels, in the chat.
 */
export function createToolLayer(deps: ToolLayerDeps): ToolLayer {
  const { config, notices } = deps;
  const registry = new ToolRegistry(deps.plugins);
  const sender: MessageSender = {
    send: (ctx, target, text) => notices.notify(ctx, { ...target, key: `send_message:${randomUUID()}` }, text),
  };
  for (const tool of createBuiltinTools({ tools: config.tools, users: deps.users, messageSender: sender })) registry.register(tool);
  for (const tool of deps.extraTools ?? []) registry.register(tool);
  for (const source of deps.sources ?? []) registry.addSource(source);
  const approvals = new ToolApprovalService(deps.db, deps.audit, registry, { timeoutMs: config.tools.approval_timeout_minutes * 60_000 });
  const pipeline = new ToolPipeline(
    { registry, approvals, audit: deps.audit },
    { timeoutMs: config.tools.timeout_ms, maxOutputChars: config.tools.max_output_chars, maxParallel: config.tools.max_parallel },
  );
  const agentTools: AgentTools & CommandTools = {
    specsFor: (ctx, channel) => registry.specsFor(ctx, channel),
    describeFor: (ctx, channel) => registry.describeFor(ctx, channel),
    runAll: (tc, calls, hooks) =>
      pipeline.runAll(tc, calls, {
        onStart: hooks?.onStart,
        onEnd: hooks?.onEnd,
        onApprovalRequested: async (approval, call) => {
          const decider = approvals.deciderTrustFor(approval.tool) === 'OWNER' ? 'an OWNER' : 'an ADMIN or OWNER';
          const text = `Approval needed for ${call.name}: /approve ${approval.id} allow_once|allow_always|deny (${decider} decides; denied after ${config.tools.approval_timeout_minutes} minutes).`;
          await notices.notify(tc.ctx, { channel: tc.channel, chatId: tc.chatId ?? null, key: `approval:${approval.id}`, sessionId: tc.sessionId, level: 'warn' }, text);
        },
      }),
  };
  const commandApprovals: CommandApprovals = {
    decide: async (ctx, id, decision) => {
      const approval = await approvals.decide(ctx, id, decision as ToolApprovalDecision);
      return { status: approval.status, tool: approval.tool };
    },
  };
  return { registry, pipeline, approvals, agentTools, commandApprovals };
}
