import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { access } from '../../common/access';
import { Ctx } from '../../common/ctx';
import { ConflictError, ForbiddenError, NotFoundError, UserInputError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import { MCP_SERVER_NAME, mcpServerDefinitionSchema, type McpConfig, type McpServerDefinition } from '../../config';
import type { Db } from '../../persistence/db';
import type { AuditService } from '../audit';
import { McpCredentialService, requireUser, type SecretRegistry, type SecretSealer } from './mcp-credential.service';
import { McpHub, type McpDefinitions, type McpServerEntryInput, type McpServerStatus, type McpUserAuth } from './mcp-hub';
import { McpServerRecord } from './mcp-server.entity';

/** OAuth sign-in of users to `auth: oauth` servers (the `McpOAuth` flow), when the app has it. */
export interface McpOAuthFlow {
  /** The user's provider when they have tokens (or a registered client to refresh with), else null. */
  providerFor(ctx: Ctx, server: string, definition: McpServerDefinition, userId: string): Promise<OAuthClientProvider | null>;
  /** Starts a sign-in and returns the URL the user opens. */
  start(ctx: Ctx, server: string, definition: McpServerDefinition, userId: string): Promise<string>;
}

/** A server as the API shows it to the caller: never env or header values; admins also see command, url and errors. */
export interface McpServerView extends McpServerStatus {
  /** The caller has stored credentials (or signed in) for this server. */
  connected: boolean;
  /** Whether the caller sees the server's setup (ADMIN and above). */
  full: boolean;
}

export interface McpServiceDeps {
  db: Db;
  box: SecretSealer;
  redactor: SecretRegistry;
  audit: AuditService;
  config: McpConfig;
  logger: Logger;
}

/** The fields `upsertMcpServer` takes; env/headers null keep the stored ones. */
export interface McpServerUpsert {
  name: string;
  definition: Record<string, unknown>;
}

/**
 * MCP servers: the config's `mcp.servers` merged with the ones added at run time (stored sealed, they win
 * by name), the hub that connects them, users' credentials, and the trust rules of managing them: ADMIN
 * may add or change http servers, only OWNER stdio servers (they start a process on the host).
 */
export class McpService implements McpDefinitions {
  readonly hub: McpHub;
  readonly credentials: McpCredentialService;
  private oauth: McpOAuthFlow | null = null;

  constructor(private readonly deps: McpServiceDeps) {
    this.credentials = new McpCredentialService(deps.db, deps.box, deps.redactor, deps.audit);
    for (const def of Object.values(deps.config.servers)) this.registerSecrets(def);
    this.hub = new McpHub(this, this.userAuth(), deps.logger.child({ module: 'mcp' }), {
      connectTimeoutMs: deps.config.connect_timeout_ms,
      listWaitMs: deps.config.list_wait_ms,
      maxResultChars: deps.config.max_result_chars,
      maxBackoffMs: deps.config.max_backoff_ms,
    });
  }

  /** Plugs in the OAuth flow (it needs the HTTP server's public URL). */
  useOAuth(flow: McpOAuthFlow): void {
    this.oauth = flow;
  }

  // === Definitions (the hub's port)

  async list(ctx: Ctx): Promise<McpServerEntryInput[]> {
    const byName = new Map<string, McpServerEntryInput>();
    for (const [name, definition] of Object.entries(this.deps.config.servers)) byName.set(name, { name, definition, source: 'config' });
    for (const row of await this.deps.db.repo(ctx, McpServerRecord).find()) {
      try {
        const definition = mcpServerDefinitionSchema.parse(this.deps.box.openJson(row.sealedDefinition));
        this.registerSecrets(definition);
        byName.set(row.name, { name: row.name, definition, source: 'api' });
      } catch (err) {
        this.deps.logger.error({ err: (err as Error).message, server: row.name }, 'a stored MCP server cannot be read; it is skipped');
      }
    }
    return [...byName.values()];
  }

  /** The definition of one server (config or run time), or null. */
  async definitionOf(ctx: Ctx, name: string): Promise<McpServerDefinition | null> {
    return (await this.list(ctx)).find((d) => d.name === name)?.definition ?? null;
  }

  // === API

  /** Servers the caller may see: ADMIN and above all of them with their setup; others those they may use. */
  async servers(ctx: Ctx): Promise<McpServerView[]> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'MCP servers');
    await this.hub.reload(ctx, true);
    const full = access.seesEveryone(ctx);
    const userId = ctx.userId;
    const own = new Set<string>();
    for (const c of userId ? await this.credentials.serversOf(ctx, userId) : []) {
      // An OAuth sign-in that was started but not completed is not a connection.
      if (c.kind === 'oauth') {
        const def = await this.definitionOf(ctx, c.serverName);
        if (!def || !this.oauth || !(await this.oauth.providerFor(ctx, c.serverName, def, userId!))) continue;
      }
      own.add(c.serverName);
    }
    return this.hub
      .status()
      .filter((s) => full || (s.definition.enabled && trustAtLeast(ctx.trust, s.definition.min_trust as TrustLevel)))
      .map((s) => ({ ...s, connected: own.has(s.name), full, lastError: full ? s.lastError : null, pid: full ? s.pid : null }));
  }

  async server(ctx: Ctx, name: string): Promise<McpServerView> {
    const found = (await this.servers(ctx)).find((s) => s.name === name);
    if (!found) throw new NotFoundError('MCP server', name);
    return found;
  }

  /** Adds or changes a server (stored sealed; applies at once, and in other processes within seconds). */
  async upsert(ctx: Ctx, input: McpServerUpsert): Promise<McpServerView> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'adding or changing MCP servers');
    if (!MCP_SERVER_NAME.test(input.name)) throw new UserInputError('name: use lowercase letters, digits, - and _ (at most 32, starting with a letter).', 'name');
    const previous = await this.definitionOf(ctx, input.name);
    const raw: Record<string, unknown> = { ...input.definition };
    // Secrets left out are kept: they are never shown, so a client cannot send them back.
    if (previous && (raw.env === undefined || raw.env === null)) raw.env = previous.env;
    if (previous && (raw.headers === undefined || raw.headers === null)) raw.headers = previous.headers;
    for (const k of Object.keys(raw)) if (raw[k] === null || raw[k] === undefined) delete raw[k];
    const parsed = mcpServerDefinitionSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.map(String).join('.') || 'input';
      throw new UserInputError(`${field}: ${issue.message}`, field);
    }
    const definition = parsed.data;
    if ((definition.transport === 'stdio' || previous?.transport === 'stdio') && !trustAtLeast(ctx.trust, TrustLevel.OWNER)) {
      throw new ForbiddenError('Only an OWNER may add or change a stdio MCP server (it starts a program on the host).');
    }
    const repo = this.deps.db.repo(ctx, McpServerRecord);
    const sealedDefinition = this.deps.box.sealJson(definition);
    const existing = await repo.findOneBy({ name: input.name });
    if (existing) await repo.update({ id: existing.id }, { sealedDefinition, updatedById: ctx.userId, updatedAt: new Date() });
    else await repo.save(repo.create({ name: input.name, sealedDefinition, updatedById: ctx.userId }));
    this.registerSecrets(definition);
    await this.deps.audit.record(ctx, 'mcp.server.upsert', { type: 'McpServer', id: input.name }, {
      transport: definition.transport,
      command: definition.command ?? null,
      url: definition.url ?? null,
      auth: definition.auth,
      minTrust: definition.min_trust,
      envKeys: Object.keys(definition.env),
      headerNames: Object.keys(definition.headers),
      created: !previous,
    });
    await this.hub.reload(ctx, true);
    return this.server(ctx, input.name);
  }

  /** Removes a server added at run time (a config server can only be removed from the config file). */
  async delete(ctx: Ctx, name: string): Promise<boolean> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'removing MCP servers');
    const repo = this.deps.db.repo(ctx, McpServerRecord);
    const row = await repo.findOneBy({ name });
    if (!row) {
      if (this.deps.config.servers[name]) throw new ConflictError(`The MCP server "${name}" is declared in the config file (mcp.servers.${name}); remove it there, or set enabled: false with upsertMcpServer.`);
      throw new NotFoundError('MCP server', name);
    }
    const def = await this.definitionOf(ctx, name);
    if (def?.transport === 'stdio' && !trustAtLeast(ctx.trust, TrustLevel.OWNER)) throw new ForbiddenError('Only an OWNER may remove a stdio MCP server.');
    await repo.delete({ id: row.id });
    if (!this.deps.config.servers[name]) await this.credentials.deleteServer(ctx, name);
    await this.deps.audit.record(ctx, 'mcp.server.delete', { type: 'McpServer', id: name }, {});
    await this.hub.reload(ctx, true);
    return true;
  }

  /** Closes a server's connections and connects again (a stdio server's process is restarted). */
  async restart(ctx: Ctx, name: string): Promise<McpServerView> {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'restarting MCP servers');
    if (!(await this.hub.restart(ctx, name))) throw new NotFoundError('MCP server', name);
    await this.deps.audit.record(ctx, 'mcp.server.restart', { type: 'McpServer', id: name }, {});
    return this.server(ctx, name);
  }

  /** Stores the caller's own headers for an `auth: per_user` server (shown never again). */
  async setCredential(ctx: Ctx, server: string, headers: unknown): Promise<boolean> {
    const userId = requireUser(ctx);
    const def = await this.usableDefinition(ctx, server);
    if (def.auth !== 'per_user') throw new UserInputError(`The MCP server "${server}" does not take per-user headers (its auth is ${def.auth}).`, 'server');
    if (!headers || typeof headers !== 'object' || Array.isArray(headers)) throw new UserInputError('headers: give an object of header names and values, e.g. {"Authorization": "Bearer …"}.', 'headers');
    const entries = Object.entries(headers as Record<string, unknown>);
    if (!entries.length || entries.length > 20) throw new UserInputError('headers: give between 1 and 20 headers.', 'headers');
    const clean: Record<string, string> = {};
    for (const [k, v] of entries) {
      if (!/^[A-Za-z0-9-]{1,64}$/.test(k) || typeof v !== 'string' || v.length > 8192 || /[\r\n]/.test(v)) {
        throw new UserInputError(`headers: "${k.slice(0, 64)}" must be a header name with a one-line string value.`, 'headers');
      }
      clean[k] = v;
    }
    await this.credentials.write(ctx, server, userId, 'headers', clean);
    await this.deps.audit.record(ctx, 'mcp.credential.set', { type: 'McpServer', id: server }, { headerNames: Object.keys(clean) });
    await this.hub.dropUser(server, userId);
    return true;
  }

  async deleteCredential(ctx: Ctx, server: string): Promise<boolean> {
    const userId = requireUser(ctx);
    const deleted = await this.credentials.deleteOwn(ctx, server);
    await this.hub.dropUser(server, userId);
    return deleted;
  }

  /** Starts the OAuth sign-in of the caller to an `auth: oauth` server; returns the URL to open. */
  async startOAuth(ctx: Ctx, server: string): Promise<string> {
    const userId = requireUser(ctx);
    const def = await this.usableDefinition(ctx, server);
    if (def.auth !== 'oauth') throw new UserInputError(`The MCP server "${server}" does not use OAuth (its auth is ${def.auth}).`, 'server');
    if (!this.oauth) throw new UserInputError('OAuth sign-in is not available in this process.', 'server');
    await this.hub.dropUser(server, userId);
    return this.oauth.start(ctx, server, def, userId);
  }

  /** Starts `connect: start` servers. */
  start(): Promise<void> {
    return this.hub.start(Ctx.system(this.deps.logger, 'mcp-start'));
  }

  dispose(): Promise<void> {
    return this.hub.dispose();
  }

  private async usableDefinition(ctx: Ctx, server: string): Promise<McpServerDefinition> {
    const def = await this.definitionOf(ctx, server);
    if (!def || !def.enabled || !trustAtLeast(ctx.trust, def.min_trust as TrustLevel)) throw new NotFoundError('MCP server', server);
    return def;
  }

  private userAuth(): McpUserAuth {
    return {
      headersFor: (ctx, server, userId) => this.credentials.read<Record<string, string>>(ctx, server, userId, 'headers'),
      oauthFor: async (ctx, server, def, userId) => (this.oauth ? this.oauth.providerFor(ctx, server, def, userId) : null),
      connectHint: async (ctx, server, def) => {
        if (def.auth === 'oauth') {
          const userId = ctx.userId;
          if (this.oauth && userId) {
            const url = await this.oauth.start(ctx, server, def, userId).catch(() => null);
            if (url) return `You are not signed in to the MCP server "${server}". Open this link to sign in, then ask again: ${url}`;
          }
          return `You are not signed in to the MCP server "${server}". Sign in from the console (MCP servers page) or with the GraphQL mutation startMcpOAuth(server: "${server}").`;
        }
        return `You have not connected your account to the MCP server "${server}". Store your credentials with the GraphQL mutation setMcpCredential(server: "${server}", headers: {"Authorization": "Bearer <your token>"}) or in the console, then ask again.`;
      },
    };
  }

  private registerSecrets(def: McpServerDefinition): void {
    for (const v of Object.values(def.env)) this.deps.redactor.add(v);
    for (const v of Object.values(def.headers)) this.deps.redactor.add(v);
  }
}
