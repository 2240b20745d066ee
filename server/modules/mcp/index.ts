// === Commonly used
export { McpService, type McpServiceDeps, type McpServerView, type McpServerUpsert, type McpOAuthFlow } from './mcp.service';
export { McpHub, type McpServerStatus, type McpToolStatus, type McpServerSource, type McpDefinitions, type McpUserAuth } from './mcp-hub';
export { McpServerRecord } from './mcp-server.entity';
export { McpCredential } from './mcp-credential.entity';
export { McpCredentialService, type SecretSealer, type SecretRegistry } from './mcp-credential.service';
export { McpOAuth, McpOAuthCallbackError, MCP_OAUTH_CALLBACK_PATH, type McpOAuthDeps } from './mcp-oauth';
export { McpServeService, type McpServeDeps } from './mcp-serve.service';
export { createServedTools, MCP_SERVE_CHANNEL, type ServedToolDeps, type McpAsk } from './served-tools';

// === Helpers
export { mcpToolName, uniqueName, matchesPattern } from './mcp-tool-names';
export { renderMcpResult } from './mcp-result';
export { mcpServerSdk, type McpServerSdk } from './mcp-sdk';
export { McpConnection, McpUnavailableError, McpAuthRequiredError, type McpConnectionState } from './mcp-connection';

// === GraphQL types
export { McpServerInfo, McpToolInfo, McpServerInput, definitionOfInput, toMcpServerInfo } from './mcp.types';
