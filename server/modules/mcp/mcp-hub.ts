import { z } from 'zod';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { approvalDefault, type McpServerDefinition } from '../../config';
import { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import { mayUseTool, ToolActionRequiredError, type Tool, type ToolContext, type ToolSource } from '../tools';
import { AUTH_WANTED, McpAuthRequiredError, McpConnection, McpUnavailableError, type McpConnectionState } from './mcp-connection';
import { renderMcpResult } from './mcp-result';
import { matchesPattern, mcpToolName, uniqueName } from './mcp-tool-names';

/** Where a server's definition comes from. */
export type McpServerSource = 'config' | 'api';

export interface McpServerEntryInput {
  name: string;
  definition: McpServerDefinition;
  source: McpServerSource;
}

/** Port: the servers to run (config merged with the ones added at run time). */
export interface McpDefinitions {
  list(ctx: Ctx): Promise<McpServerEntryInput[]>;
}

/** Port: what a user's connection to an `auth: per_user` or `auth: oauth` server carries. */
export interface McpUserAuth {
  /** The user's own headers for the server, or null when they have none. */
  headersFor(ctx: Ctx, server: string, userId: string): Promise<Record<string, string> | null>;
  /** The user's OAuth state for the server, or null when they have not signed in. */
  oauthFor(ctx: Ctx, server: string, definition: McpServerDefinition, userId: string): Promise<OAuthClientProvider | null>;
  /** A tool error telling the user how to connect (with a sign-in link for OAuth servers). */
  connectHint(ctx: Ctx, server: string, definition: McpServerDefinition): Promise<string>;
}

export interface McpHubOptions {
  connectTimeoutMs: number;
  /** How long listing tools waits for a server still connecting. */
  listWaitMs: number;
  maxResultChars: number;
  maxBackoffMs: number;
  /** How often definitions are read again, so changes made by other processes apply. @default 5000 */
  reloadEveryMs?: number;
}

/** One tool of one server, as `mcpServers` shows it. */
export interface McpToolStatus {
  name: string;
  serverTool: string;
  description: string;
  minTrust: TrustLevel;
  requiresApproval: boolean;
}

/** One server, as `mcpServers` shows it (never its env or header values). */
export interface McpServerStatus {
  name: string;
  source: McpServerSource;
  definition: McpServerDefinition;
  state: McpConnectionState | 'disabled';
  lastError: string | null;
  connectedAt: Date | null;
  tools: McpToolStatus[];
  /** Users with an open connection of their own (per_user and oauth servers). */
  userConnections: number;
  pid: number | null;
}

interface Entry {
  name: string;
  source: McpServerSource;
  definition: McpServerDefinition;
  key: string;
  shared: McpConnection | null;
  users: Map<string, McpConnection>;
  listed: McpToolInfo[];
  tools: Tool[];
  lastError: string | null;
}

const FIND_TOOLS = 'mcp_find_tools';
const NO_DESCRIPTION = 'A tool of an MCP server.';

/**
 * The MCP servers of this process and their tools, as a source of the tool registry. Connections open
 * at start (`connect: start`) or when tools are first listed, and again after failures with back-off;
 * `auth: per_user` and `auth: oauth` servers get one connection per user, carrying only that user's
 * credentials. Tool names are `<server>__<tool>`, unique; trust, approval and channel switches are the
 * pipeline's, where the call runs.
 */
export class McpHub implements ToolSource {
  private readonly entries = new Map<string, Entry>();
  private readonly byName = new Map<string, { entry: Entry; tool: Tool; serverTool: string }>();
  private loadedAt = 0;
  private loading: Promise<void> | null = null;
  private readonly findTool: Tool<{ query: string; server?: string }>;
  private disposed = false;

  constructor(
    private readonly definitions: McpDefinitions,
    private readonly auth: McpUserAuth,
    private readonly logger: Logger,
    private readonly options: McpHubOptions,
  ) {
    this.findTool = {
      name: FIND_TOOLS,
      description:
        'Finds tools of connected services (MCP servers) that are not listed above: give keywords of what you want to do; returns matching tool names with their argument schemas, which you may then call.',
      schema: z.object({ query: z.string().max(200), server: z.string().max(32).optional() }),
      minTrust: TrustLevel.MEMBER,
      run: async (tc, args) => this.find(tc.ctx, args.query, args.server),
    };
  }

  // === ToolSource

  async toolsFor(ctx: Ctx): Promise<Tool[]> {
    await this.reload(ctx);
    const entries = [...this.entries.values()].filter((e) => e.definition.enabled && trustAtLeast(ctx.trust, this.floorOf(e)));
    await Promise.all(entries.map((e) => this.warm(ctx, e)));
    const out: Tool[] = [];
    let onDemand = false;
    for (const e of entries) {
      if (e.definition.expose === 'on_demand') onDemand ||= e.tools.some((t) => mayUseTool(ctx.trust, t));
      else out.push(...e.tools);
    }
    if (onDemand) out.push(this.findTool as Tool);
    return out;
  }

  get(name: string): Tool | undefined {
    if (name === FIND_TOOLS) return this.findTool as Tool;
    return this.byName.get(name)?.tool;
  }

  all(): Tool[] {
    return [...this.byName.values()].map((v) => v.tool);
  }

  // === Management

  /** Reads the definitions again (at most every `reloadEveryMs` unless forced) and applies changes. */
  async reload(ctx: Ctx, force = false): Promise<void> {
    if (this.disposed) return;
    if (!force && Date.now() - this.loadedAt < (this.options.reloadEveryMs ?? 5000)) return;
    if (this.loading) return this.loading;
    this.loading = this.apply(ctx)
      .catch((err) => this.logger.error({ err }, 'could not read the MCP server definitions'))
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  /** Connects the servers marked `connect: start` (in the background; failures are retried on use). */
  async start(ctx: Ctx): Promise<void> {
    await this.reload(ctx, true);
    for (const e of this.entries.values()) {
      if (e.definition.enabled && e.definition.connect === 'start' && e.definition.auth === 'none') void this.shared(e).ensure().catch(() => undefined);
    }
  }

  /** Closes a server's connections; they open again on next use. */
  async restart(ctx: Ctx, name: string): Promise<boolean> {
    await this.reload(ctx, true);
    const e = this.entries.get(name);
    if (!e) return false;
    await this.closeConnections(e);
    if (e.definition.enabled && e.definition.auth === 'none') await this.shared(e).ensure().catch(() => undefined);
    return true;
  }

  /** Drops one user's connection (their credentials changed). */
  async dropUser(server: string, userId: string): Promise<void> {
    const e = this.entries.get(server);
    const conn = e?.users.get(userId);
    if (!e || !conn) return;
    e.users.delete(userId);
    await conn.close();
  }

  status(): McpServerStatus[] {
    return [...this.entries.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((e) => {
        const conns = [e.shared, ...e.users.values()].filter((c): c is McpConnection => !!c);
        const ready = conns.find((c) => c.state === 'ready');
        const state: McpServerStatus['state'] = !e.definition.enabled
          ? 'disabled'
          : ready
            ? 'ready'
            : (conns.find((c) => c.state === 'connecting')?.state ?? conns.find((c) => c.state === 'failed')?.state ?? 'idle');
        const lastError = e.shared?.lastError ?? conns.find((c) => c.lastError)?.lastError ?? e.lastError;
        return {
          name: e.name,
          source: e.source,
          definition: e.definition,
          state,
          lastError,
          connectedAt: ready?.connectedAt ?? null,
          tools: e.tools.map((t) => ({
            name: t.name,
            serverTool: this.serverToolOf(e, t.name),
            description: t.description,
            minTrust: t.minTrust,
            requiresApproval: t.requiresApproval ?? false,
          })),
          userConnections: e.users.size,
          pid: e.shared?.pid ?? null,
        };
      });
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.entries.values()].map((e) => this.closeConnections(e)));
    this.entries.clear();
    this.byName.clear();
  }

  // === Calls

  private async call(tc: ToolContext, e: Entry, serverTool: string, args: Record<string, unknown>): Promise<string> {
    const conn = await this.connectionFor(tc.ctx, e);
    if (!conn) throw new ToolActionRequiredError(await this.auth.connectHint(tc.ctx, e.name, e.definition));
    let result;
    try {
      result = await conn.call(serverTool, args, tc.signal, e.definition.timeout_ms);
    } catch (err) {
      if (tc.signal.aborted) throw err;
      if (err instanceof McpAuthRequiredError || (err as Error).name === 'UnauthorizedError') {
        if (e.definition.auth !== 'none') throw new ToolActionRequiredError(await this.auth.connectHint(tc.ctx, e.name, e.definition));
        throw new Error(`the MCP server "${e.name}" refused the call: it wants authorization (an admin must set its headers)`);
      }
      if (err instanceof McpUnavailableError) throw new Error(`the MCP server "${e.name}" is unavailable: ${err.message}`);
      throw new Error(`the MCP server "${e.name}" answered with an error: ${(err as Error).message}`);
    }
    const rendered = renderMcpResult(result, this.options.maxResultChars, false);
    if (rendered.isError) throw new Error(`the MCP server "${e.name}" reported an error: ${rendered.text.slice(0, 2000)}`);
    return rendered.text;
  }

  private async find(ctx: Ctx, query: string, server?: string): Promise<string> {
    const words = query.toLowerCase().split(/\W+/).filter((w) => w.length > 1);
    const scored: Array<{ score: number; tool: Tool }> = [];
    for (const e of this.entries.values()) {
      if (!e.definition.enabled || e.definition.expose !== 'on_demand' || (server && e.name !== server)) continue;
      for (const tool of e.tools) {
        if (!mayUseTool(ctx.trust, tool)) continue;
        const hay = `${tool.name} ${tool.description}`.toLowerCase();
        const score = words.length ? words.filter((w) => hay.includes(w)).length : 1;
        if (score > 0) scored.push({ score, tool });
      }
    }
    scored.sort((a, b) => b.score - a.score);
    const found = scored.slice(0, 8).map(({ tool }) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
    if (!found.length) return 'No matching tools. Try other keywords.';
    return JSON.stringify({ tools: found, note: 'Call these by name with arguments matching their parameters.' });
  }

  // === Connections

  /** Opens (or waits a little for) the connection that lists tools for this sender. */
  private async warm(ctx: Ctx, e: Entry): Promise<void> {
    try {
      const conn = await this.connectionFor(ctx, e);
      if (!conn || conn.state === 'ready') return;
      if (conn.state === 'failed' && !e.tools.length) {
        await conn.ensure().catch(() => undefined);
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([conn.ensure().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, this.options.listWaitMs)))]);
      clearTimeout(timer);
    } catch (err) {
      this.logger.warn({ err, server: e.name }, 'MCP connection could not be prepared');
    }
  }

  /** The connection a call of this sender uses; null when a per-user server has no credentials of theirs. */
  private async connectionFor(ctx: Ctx, e: Entry): Promise<McpConnection | null> {
    if (e.definition.auth === 'none') return this.shared(e);
    const userId = ctx.userId;
    if (!userId) return null;
    const existing = e.users.get(userId);
    // A connection that failed for want of authorization is made again from the stored credentials,
    // which a sign-in in another process may have renewed.
    if (existing && !(existing.state === 'failed' && existing.lastError === AUTH_WANTED)) return existing;
    if (existing) {
      e.users.delete(userId);
      void existing.close();
    }
    const sys = Ctx.system(this.logger, 'mcp-credentials');
    const options = this.connectionOptions(e);
    let conn: McpConnection;
    if (e.definition.auth === 'per_user') {
      const headers = await this.auth.headersFor(sys, e.name, userId);
      if (!headers) return null;
      conn = new McpConnection({ ...options, headers });
    } else {
      const provider = await this.auth.oauthFor(sys, e.name, e.definition, userId);
      if (!provider) return null;
      conn = new McpConnection({ ...options, authProvider: provider });
    }
    // Another call may have created it meanwhile.
    const raced = e.users.get(userId);
    if (raced) return raced;
    e.users.set(userId, conn);
    return conn;
  }

  private shared(e: Entry): McpConnection {
    e.shared ??= new McpConnection(this.connectionOptions(e));
    return e.shared;
  }

  private connectionOptions(e: Entry) {
    let conn: McpConnection | null = null;
    return {
      name: e.name,
      definition: e.definition,
      connectTimeoutMs: this.options.connectTimeoutMs,
      maxBackoffMs: this.options.maxBackoffMs,
      logger: this.logger.child({ mcpServer: e.name }),
      onToolsChanged: () => {
        conn = [e.shared, ...e.users.values()].find((c) => c && c.state === 'ready' && c.tools.length) ?? null;
        if (conn && this.entries.get(e.name) === e) {
          e.listed = conn.tools;
          this.rebuildNames();
        }
      },
    };
  }

  private async closeConnections(e: Entry): Promise<void> {
    const conns = [e.shared, ...e.users.values()].filter((c): c is McpConnection => !!c);
    e.shared = null;
    e.users.clear();
    await Promise.all(conns.map((c) => c.close()));
  }

  // === Definitions and names

  private async apply(ctx: Ctx): Promise<void> {
    const defs = await this.definitions.list(ctx);
    this.loadedAt = Date.now();
    if (this.disposed) return;
    const seen = new Set<string>();
    for (const d of defs) {
      seen.add(d.name);
      const key = JSON.stringify(d.definition);
      const current = this.entries.get(d.name);
      if (current && current.key === key) {
        current.source = d.source;
        continue;
      }
      if (current) await this.closeConnections(current);
      this.entries.set(d.name, { name: d.name, source: d.source, definition: d.definition, key, shared: null, users: new Map(), listed: current?.listed ?? [], tools: [], lastError: null });
    }
    for (const [name, e] of this.entries) {
      if (seen.has(name)) continue;
      this.entries.delete(name);
      await this.closeConnections(e);
    }
    this.rebuildNames();
  }

  /** Names every listed tool `<server>__<tool>`, unique across servers (servers in name order). */
  private rebuildNames(): void {
    this.byName.clear();
    const taken = new Set<string>([FIND_TOOLS]);
    for (const e of [...this.entries.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      e.tools = [];
      for (const info of e.listed) {
        if (!this.allowed(e.definition, info.name)) continue;
        const name = uniqueName(mcpToolName(e.name, info.name), taken);
        taken.add(name);
        const tool = this.adapt(e, info, name);
        e.tools.push(tool);
        this.byName.set(name, { entry: e, tool, serverTool: info.name });
      }
    }
  }

  private allowed(def: McpServerDefinition, tool: string): boolean {
    if (def.deny.some((p) => matchesPattern(tool, p))) return false;
    return !def.allow.length || def.allow.some((p) => matchesPattern(tool, p));
  }

  private adapt(e: Entry, info: McpToolInfo, name: string): Tool {
    const def = e.definition;
    const override = def.tools[info.name] ?? {};
    const { $schema: _drop, ...parameters } = (info.inputSchema ?? { type: 'object' }) as Record<string, unknown>;
    const serverTool = info.name;
    const description = (info.description || info.title || NO_DESCRIPTION).replace(/\s+/g, ' ').trim().slice(0, 1000);
    return {
      name,
      description: `${description} (MCP server ${e.name})`,
      schema: z.record(z.string(), z.unknown()),
      parameters: { type: 'object', ...parameters },
      minTrust: (override.min_trust ?? def.min_trust) as TrustLevel,
      requiresApproval: override.requires_approval ?? approvalDefault(def),
      timeoutMs: def.timeout_ms,
      run: (tc, args) => this.call(tc, e, serverTool, args as Record<string, unknown>),
    };
  }

  private serverToolOf(e: Entry, name: string): string {
    const found = this.byName.get(name);
    return found?.entry === e ? found.serverTool : name;
  }

  /** The lowest trust any of the server's tools needs (per-tool overrides may go below the server's). */
  private floorOf(e: Entry): TrustLevel {
    const levels = [e.definition.min_trust, ...Object.values(e.definition.tools).map((o) => o.min_trust).filter((x): x is NonNullable<typeof x> => !!x)] as TrustLevel[];
    return levels.reduce((lo, l) => (trustAtLeast(lo, l) ? l : lo), TrustLevel.OWNER);
  }
}
