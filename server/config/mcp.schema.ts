import { z } from 'zod';

/** A server name: what tool names start with (`<server>__<tool>`). */
export const MCP_SERVER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

const trustLevel = z.enum(['BLOCKED', 'GUEST', 'MEMBER', 'TRUSTED', 'ADMIN', 'OWNER']);

const toolOverride = z
  .object({
    min_trust: trustLevel.optional().describe("Lowest trust for this tool (overrides the server's min_trust)."),
    requires_approval: z.boolean().optional().describe("Overrides the server's requires_approval for this tool."),
  })
  .strict();

/**
 * One MCP server, as `mcp.servers.<name>` in the config and `upsertMcpServer` store it. stdio servers
 * are started as a child process with `command` and `args` (and only the environment given here, plus
 * PATH/HOME/USER/SHELL/TERM); http servers are reached at `url` over streamable HTTP, falling back to SSE.
 */
export const mcpServerDefinitionSchema = z
  .object({
    transport: z.enum(['stdio', 'http']).describe('stdio: a local process; http: a remote server (streamable HTTP, SSE fallback).'),
    command: z.string().min(1).optional().describe('stdio: program to start (argv[0], no shell).'),
    args: z.array(z.string()).default([]).describe('stdio: its arguments.'),
    env: z.record(z.string(), z.string()).default({}).describe("stdio: environment of the process (nothing of Muninn's own environment is passed on). Stored encrypted."),
    cwd: z.string().optional().describe('stdio: working directory.'),
    url: z.string().url().optional().describe('http: the MCP endpoint, e.g. https://mcp.example.com/mcp.'),
    headers: z.record(z.string(), z.string()).default({}).describe('http: headers sent with every request (e.g. a shared API key). Stored encrypted.'),
    auth: z.enum(['none', 'per_user', 'oauth']).default('none').describe("http: none, per_user (each user's own headers, setMcpCredential) or oauth (each user signs in)."),
    min_trust: trustLevel.default('TRUSTED').describe("Lowest trust that may use the server's tools (never below MEMBER)."),
    requires_approval: z.boolean().optional().describe('Calls pause for approval; default on for stdio servers, off for http.'),
    allow: z.array(z.string()).default([]).describe('Only these tools (names as the server gives them; * matches any text); empty allows all.'),
    deny: z.array(z.string()).default([]).describe('Never these tools (wins over allow).'),
    tools: z.record(z.string(), toolOverride).default({}).describe('Per-tool overrides of min_trust and requires_approval, by the name the server gives the tool.'),
    timeout_ms: z.number().int().min(100).default(60_000).describe('Timeout of one tool call; the server is sent a cancellation.'),
    max_concurrency: z.number().int().min(1).default(4).describe('Calls to this server running at once (more wait).'),
    expose: z.enum(['always', 'on_demand']).default('always').describe("always: the tools' schemas are in every prompt; on_demand: the model finds them with mcp_find_tools."),
    connect: z.enum(['start', 'first_use']).default('first_use').describe('Connect when the server starts, or when its tools are first needed.'),
    enabled: z.boolean().default(true).describe('Turn the server off without removing it.'),
  })
  .strict()
  .superRefine((d, issue) => {
    if (d.transport === 'stdio' && !d.command) issue.addIssue({ code: 'custom', path: ['command'], message: 'a stdio server needs a command (the program to start)' });
    if (d.transport === 'http' && !d.url) issue.addIssue({ code: 'custom', path: ['url'], message: 'an http server needs a url (its MCP endpoint)' });
    if (d.transport === 'stdio' && d.auth !== 'none') issue.addIssue({ code: 'custom', path: ['auth'], message: 'per-user auth and oauth are for http servers; a stdio server gets its secrets through env' });
    if (d.url && !/^https?:\/\//i.test(d.url)) issue.addIssue({ code: 'custom', path: ['url'], message: 'the url must start with http:// or https://' });
  });

/** The config file's `mcp` section. */
export const mcpConfigSchema = z
  .object({
    servers: z.record(z.string().regex(MCP_SERVER_NAME, 'a server name uses lowercase letters, digits, - and _ (at most 32, starting with a letter)'), mcpServerDefinitionSchema)
      .default({})
      .describe('MCP servers whose tools the assistant may use, by name (tools are named <server>__<tool>).'),
    connect_timeout_ms: z.number().int().min(100).default(15_000).describe('How long connecting to a server (start + initialize) may take.'),
    list_wait_ms: z.number().int().min(0).default(3_000).describe('How long a turn waits for a server that is still connecting before it goes on without its tools.'),
    max_result_chars: z.number().int().min(100).default(16_000).describe('An MCP tool result longer than this is cut, with a note.'),
    max_backoff_ms: z.number().int().min(100).default(60_000).describe('Longest wait between reconnection attempts of a failed server.'),
    public_url: z.string().nullable().default(null).describe('Public base URL of this server (e.g. https://muninn.example.com), for the OAuth callback /oauth/mcp/callback; null uses the address it listens on.'),
  })
  .strict()
  .prefault({});

export type McpServerDefinition = z.output<typeof mcpServerDefinitionSchema>;
export type McpServerDefinitionInput = z.input<typeof mcpServerDefinitionSchema>;
export type McpConfig = z.output<typeof mcpConfigSchema>;

/** Approval is on by default for stdio servers (they run on the host), off for http ones. */
export function approvalDefault(def: McpServerDefinition): boolean {
  return def.requires_approval ?? def.transport === 'stdio';
}
