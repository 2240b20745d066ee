// === Commonly used
export { ToolRefusedError, ToolActionRequiredError, defineTool, effectiveMinTrust, mayUseTool, type Tool, type ToolContext, type ToolSource, type ToolSpec } from './tool';
export { ToolRegistry, type ToolDescription, type ActivationSource } from './tool-registry';
export {
  ToolPipeline,
  type ToolCallRequest,
  type ToolCallOutcome,
  type ToolCallStatus,
  type ToolPipelineHooks,
  type ToolPipelineOptions,
  type ToolPipelineDeps,
} from './tool-pipeline';
export { ToolApproval, ToolApprovalStatus } from './tool-approval.entity';
export {
  ToolApprovalService,
  type ToolApprovalOptions,
  type ApprovalRequestInput,
  type ApprovalRequestResult,
  type ToolLookup,
} from './tool-approval.service';
export { ToolApprovalDecision, isApproved, parseToolApprovalDecision } from './tool-approval.types';
export { ToolInfo } from './tool.types';
export type { MessageSender, MessageTarget } from './message-sender';

// === Built-in tools
export {
  createBuiltinTools,
  createCurrentTimeTool,
  createHttpRequestTool,
  createWebSearchTool,
  createSendMessageTool,
  createShellTool,
  isPublicAddress,
  embeddedIPv4,
  isBlockedHostname,
  matchesDomain,
  systemLookup,
  resolveAllowedTarget,
  pinnedLookup,
  AddressRefusedError,
  MAX_REDIRECTS,
  type BuiltinToolDeps,
  type HttpRequestToolOptions,
  type WebSearchToolOptions,
  type SendMessageToolOptions,
  type ShellToolOptions,
  type AddressPolicy,
  type HostLookup,
  type OutboundTarget,
} from './builtin';

// === Helpers
export { summarizeArgs, renderOutput } from './tool-args';
