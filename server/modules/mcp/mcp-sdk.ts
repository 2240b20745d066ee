/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * The parts of the MCP SDK Muninn uses, required when it first talks MCP (connects to a configured
 * server, runs an OAuth step, answers a request at `/mcp`), not at start: the SDK with its zod protocol
 * schemas, ajv and hono is ≈ 400 files and ≈ 0.3 s, which a configuration without MCP never needs.
 * Types are imported as usual (`import type`), they cost nothing at run time.
 */
type ClientIndex = typeof import('@modelcontextprotocol/sdk/client/index.js');
type ClientStdio = typeof import('@modelcontextprotocol/sdk/client/stdio.js');
type ClientStreamable = typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');
type ClientSse = typeof import('@modelcontextprotocol/sdk/client/sse.js');
type ClientAuth = typeof import('@modelcontextprotocol/sdk/client/auth.js');
type ServerMcp = typeof import('@modelcontextprotocol/sdk/server/mcp.js');
type ServerStreamable = typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js');
type Types = typeof import('@modelcontextprotocol/sdk/types.js');

export interface McpClientSdk {
  Client: ClientIndex['Client'];
  StdioClientTransport: ClientStdio['StdioClientTransport'];
  getDefaultEnvironment: ClientStdio['getDefaultEnvironment'];
  StreamableHTTPClientTransport: ClientStreamable['StreamableHTTPClientTransport'];
  SSEClientTransport: ClientSse['SSEClientTransport'];
  ToolListChangedNotificationSchema: Types['ToolListChangedNotificationSchema'];
}

export interface McpServerSdk {
  McpServer: ServerMcp['McpServer'];
  StreamableHTTPServerTransport: ServerStreamable['StreamableHTTPServerTransport'];
  ListToolsRequestSchema: Types['ListToolsRequestSchema'];
  CallToolRequestSchema: Types['CallToolRequestSchema'];
}

let client: McpClientSdk | null = null;
let server: McpServerSdk | null = null;
let oauth: ClientAuth['auth'] | null = null;

/** The client side: `Client`, its transports, the tool-list notification. */
export function mcpClientSdk(): McpClientSdk {
  if (!client) {
    const stdio = require('@modelcontextprotocol/sdk/client/stdio.js') as ClientStdio;
    client = {
      Client: (require('@modelcontextprotocol/sdk/client/index.js') as ClientIndex).Client,
      StdioClientTransport: stdio.StdioClientTransport,
      getDefaultEnvironment: stdio.getDefaultEnvironment,
      StreamableHTTPClientTransport: (require('@modelcontextprotocol/sdk/client/streamableHttp.js') as ClientStreamable).StreamableHTTPClientTransport,
      SSEClientTransport: (require('@modelcontextprotocol/sdk/client/sse.js') as ClientSse).SSEClientTransport,
      ToolListChangedNotificationSchema: (require('@modelcontextprotocol/sdk/types.js') as Types).ToolListChangedNotificationSchema,
    };
  }
  return client;
}

/** The server side of `/mcp`: `McpServer`, the streamable HTTP transport, the two request schemas. */
export function mcpServerSdk(): McpServerSdk {
  if (!server) {
    const types = require('@modelcontextprotocol/sdk/types.js') as Types;
    server = {
      McpServer: (require('@modelcontextprotocol/sdk/server/mcp.js') as ServerMcp).McpServer,
      StreamableHTTPServerTransport: (require('@modelcontextprotocol/sdk/server/streamableHttp.js') as ServerStreamable).StreamableHTTPServerTransport,
      ListToolsRequestSchema: types.ListToolsRequestSchema,
      CallToolRequestSchema: types.CallToolRequestSchema,
    };
  }
  return server;
}

/** The SDK's OAuth driver (`auth`): discovery, registration, the code exchange, refresh. */
export function mcpOAuthDriver(): ClientAuth['auth'] {
  oauth ??= (require('@modelcontextprotocol/sdk/client/auth.js') as ClientAuth).auth;
  return oauth;
}
