import { GraphQLJSON } from 'graphql-scalars';
import { Field, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import type { McpServerView } from './mcp.service';

export enum McpTransport {
  STDIO = 'stdio',
  HTTP = 'http',
}
export enum McpAuth {
  NONE = 'none',
  PER_USER = 'per_user',
  OAUTH = 'oauth',
}
export enum McpExpose {
  ALWAYS = 'always',
  ON_DEMAND = 'on_demand',
}
export enum McpConnect {
  START = 'start',
  FIRST_USE = 'first_use',
}
export enum McpServerState {
  IDLE = 'idle',
  CONNECTING = 'connecting',
  READY = 'ready',
  FAILED = 'failed',
  CLOSED = 'closed',
  DISABLED = 'disabled',
}
export enum McpServerSourceKind {
  CONFIG = 'config',
  API = 'api',
}
registerEnumType(McpTransport, { name: 'McpTransport', description: 'stdio: a local process; http: a remote server (streamable HTTP, SSE fallback).' });
registerEnumType(McpAuth, { name: 'McpAuth', description: "none; per_user: each user's own headers; oauth: each user signs in." });
registerEnumType(McpExpose, { name: 'McpExpose', description: 'always: schemas in every prompt; on_demand: found with mcp_find_tools.' });
registerEnumType(McpConnect, { name: 'McpConnect', description: 'Connect at start or when the tools are first needed.' });
registerEnumType(McpServerState, { name: 'McpServerState', description: 'Connection state in the process that answers.' });
registerEnumType(McpServerSourceKind, { name: 'McpServerSource', description: 'config: mcp.servers in the config file; api: added with upsertMcpServer.' });

@ObjectType({ description: 'A tool of an MCP server, as the model sees it.' })
export class McpToolInfo {
  @Field({ description: '<server>__<tool>, in the model\'s name rules.' }) name!: string;
  @Field({ description: 'The name the server gives the tool.' }) serverTool!: string;
  @Field() description!: string;
  @Field(() => TrustLevel) minTrust!: TrustLevel;
  @Field() requiresApproval!: boolean;
}

@ObjectType({ description: 'An MCP server: its setup (ADMIN and above; env and header values are never shown), state and tools.' })
export class McpServerInfo {
  @Field() name!: string;
  @Field(() => McpTransport) transport!: McpTransport;
  @Field(() => McpServerSourceKind) source!: McpServerSourceKind;
  @Field(() => McpServerState) state!: McpServerState;
  @Field(() => String, { nullable: true, description: 'What went wrong last (ADMIN and above).' }) lastError!: string | null;
  @Field(() => Date, { nullable: true }) connectedAt!: Date | null;
  @Field(() => String, { nullable: true }) command!: string | null;
  @Field(() => [String]) args!: string[];
  @Field(() => String, { nullable: true }) cwd!: string | null;
  @Field(() => String, { nullable: true }) url!: string | null;
  @Field(() => [String], { description: 'Names of the environment variables set (values are never shown).' }) envKeys!: string[];
  @Field(() => [String], { description: 'Names of the headers set (values are never shown).' }) headerNames!: string[];
  @Field(() => McpAuth) auth!: McpAuth;
  @Field(() => TrustLevel) minTrust!: TrustLevel;
  @Field() requiresApproval!: boolean;
  @Field(() => [String]) allow!: string[];
  @Field(() => [String]) deny!: string[];
  @Field(() => GraphQLJSON, { description: 'Per-tool overrides: { "<tool>": { "min_trust", "requires_approval" } }.' }) toolOverrides!: unknown;
  @Field(() => Int) timeoutMs!: number;
  @Field(() => Int) maxConcurrency!: number;
  @Field(() => McpExpose) expose!: McpExpose;
  @Field(() => McpConnect) connect!: McpConnect;
  @Field() enabled!: boolean;
  @Field(() => [McpToolInfo]) tools!: McpToolInfo[];
  @Field(() => Int, { description: 'Users with a connection of their own (per_user and oauth servers).' }) userConnections!: number;
  @Field({ description: 'You have stored credentials for this server, or signed in.' }) connected!: boolean;
  @Field(() => Int, { nullable: true, description: 'Process id of a running stdio server (ADMIN and above).' }) pid!: number | null;
}

@InputType({ description: 'An MCP server to add or change. Left-out env/headers keep the stored ones.' })
export class McpServerInput {
  @Field({ description: 'Lowercase letters, digits, - and _ (tool names start with it).' }) name!: string;
  @Field(() => McpTransport) transport!: McpTransport;
  @Field(() => String, { nullable: true }) command?: string | null;
  @Field(() => [String], { nullable: true }) args?: string[] | null;
  @Field(() => GraphQLJSON, { nullable: true, description: 'Environment of a stdio server: { "NAME": "value" }.' }) env?: unknown;
  @Field(() => String, { nullable: true }) cwd?: string | null;
  @Field(() => String, { nullable: true }) url?: string | null;
  @Field(() => GraphQLJSON, { nullable: true, description: 'Headers sent to an http server: { "Name": "value" }.' }) headers?: unknown;
  @Field(() => McpAuth, { nullable: true }) auth?: McpAuth | null;
  @Field(() => TrustLevel, { nullable: true }) minTrust?: TrustLevel | null;
  @Field(() => Boolean, { nullable: true }) requiresApproval?: boolean | null;
  @Field(() => [String], { nullable: true }) allow?: string[] | null;
  @Field(() => [String], { nullable: true }) deny?: string[] | null;
  @Field(() => GraphQLJSON, { nullable: true, description: 'Per-tool overrides: { "<tool>": { "min_trust": "MEMBER", "requires_approval": false } }.' }) toolOverrides?: unknown;
  @Field(() => Int, { nullable: true }) timeoutMs?: number | null;
  @Field(() => Int, { nullable: true }) maxConcurrency?: number | null;
  @Field(() => McpExpose, { nullable: true }) expose?: McpExpose | null;
  @Field(() => McpConnect, { nullable: true }) connect?: McpConnect | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
}

/** The config-shaped definition of an input (snake_case keys; null fields left out). */
export function definitionOfInput(input: McpServerInput): Record<string, unknown> {
  return {
    transport: input.transport,
    command: input.command,
    args: input.args,
    env: input.env,
    cwd: input.cwd,
    url: input.url,
    headers: input.headers,
    auth: input.auth,
    min_trust: input.minTrust,
    requires_approval: input.requiresApproval,
    allow: input.allow,
    deny: input.deny,
    tools: input.toolOverrides,
    timeout_ms: input.timeoutMs,
    max_concurrency: input.maxConcurrency,
    expose: input.expose,
    connect: input.connect,
    enabled: input.enabled,
  };
}

/** A server for the API: setup only when the caller may see it. */
export function toMcpServerInfo(v: McpServerView): McpServerInfo {
  const d = v.definition;
  return Object.assign(new McpServerInfo(), {
    name: v.name,
    transport: d.transport as McpTransport,
    source: v.source as McpServerSourceKind,
    state: v.state as McpServerState,
    lastError: v.lastError,
    connectedAt: v.connectedAt,
    command: v.full ? (d.command ?? null) : null,
    args: v.full ? d.args : [],
    cwd: v.full ? (d.cwd ?? null) : null,
    url: v.full ? (d.url ?? null) : null,
    envKeys: v.full ? Object.keys(d.env) : [],
    headerNames: v.full ? Object.keys(d.headers) : [],
    auth: d.auth as McpAuth,
    minTrust: d.min_trust as TrustLevel,
    requiresApproval: d.requires_approval ?? d.transport === 'stdio',
    allow: d.allow,
    deny: d.deny,
    toolOverrides: v.full ? d.tools : {},
    timeoutMs: d.timeout_ms,
    maxConcurrency: d.max_concurrency,
    expose: d.expose as McpExpose,
    connect: d.connect as McpConnect,
    enabled: d.enabled,
    tools: v.tools.map((t) => Object.assign(new McpToolInfo(), t)),
    userConnections: v.full ? v.userConnections : 0,
    connected: v.connected,
    pid: v.pid,
  });
}
