import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpServerDefinition } from '../../config';
import { Ctx } from '../../common/ctx';
import { UserInputError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import type { AuditService } from '../audit';
import type { McpCredentialService } from './mcp-credential.service';
import type { McpOAuthFlow } from './mcp.service';
import { mcpOAuthDriver } from './mcp-sdk';

/** What is stored (sealed) for one user and one `auth: oauth` server. */
interface StoredOAuth {
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  verifier?: string;
  discovery?: OAuthDiscoveryState;
  /** A sign-in under way: the nonce its `state` carries, and when it began. */
  pending?: { nonce: string; at: number };
}

/** What the `state` parameter of a sign-in carries (base64url JSON); the nonce must match the stored one. */
interface SignInState {
  s: string;
  u: string;
  n: string;
}

export interface McpOAuthDeps {
  credentials: McpCredentialService;
  audit: AuditService;
  logger: Logger;
  /** Base URL of this server as the user's browser reaches it (the callback is `<base>/oauth/mcp/callback`). */
  baseUrl(): string;
  /** The definition of a server by name (config or run time), or null. */
  definitionOf(ctx: Ctx, server: string): Promise<McpServerDefinition | null>;
  /** Closes the user's connection, so the next call uses the new tokens. */
  dropUser(server: string, userId: string): Promise<void>;
  /** How long a sign-in link stays good. @default 10 minutes */
  signInTtlMs?: number;
}

/** A failed callback; the message is safe to show in the browser. */
export class McpOAuthCallbackError extends Error {
  override name = 'McpOAuthCallbackError';
}

export const MCP_OAUTH_CALLBACK_PATH = '/oauth/mcp/callback';

/**
 * One user's OAuth client state for one server, as the SDK's `OAuthClientProvider`: everything it saves
 * (client registration, PKCE verifier, tokens, discovery) is written through, sealed, to that user's
 * credential row, so any process can continue the flow and refresh the tokens.
 */
class StoredOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;

  constructor(
    private readonly deps: McpOAuthDeps,
    private readonly server: string,
    private readonly userId: string,
    readonly stored: StoredOAuth,
    private readonly stateParam?: string,
  ) {}

  get redirectUrl(): string {
    return `${this.deps.baseUrl().replace(/\/+$/, '')}${MCP_OAUTH_CALLBACK_PATH}`;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Muninn',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    return this.stateParam ?? randomBytes(16).toString('base64url');
  }

  clientInformation() {
    return this.stored.client;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    this.stored.client = info;
    await this.save();
  }

  tokens() {
    return this.stored.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.stored.tokens = tokens;
    await this.save();
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    this.stored.verifier = verifier;
    await this.save();
  }

  codeVerifier(): string {
    if (!this.stored.verifier) throw new Error('no sign-in is under way');
    return this.stored.verifier;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    this.stored.discovery = state;
    await this.save();
  }

  discoveryState() {
    return this.stored.discovery;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'all' || scope === 'client') delete this.stored.client;
    if (scope === 'all' || scope === 'tokens') delete this.stored.tokens;
    if (scope === 'all' || scope === 'verifier') delete this.stored.verifier;
    if (scope === 'all' || scope === 'discovery') delete this.stored.discovery;
    await this.save();
  }

  save(): Promise<void> {
    return this.deps.credentials.write(Ctx.system(this.deps.logger, 'mcp-oauth'), this.server, this.userId, 'oauth', this.stored);
  }
}

/**
 * OAuth 2.1 sign-in of users to `auth: oauth` MCP servers, with the SDK's client: discovery (RFC 9728,
 * RFC 8414), dynamic client registration, the authorization-code grant with PKCE, and refresh (the SDK's
 * transport refreshes on a 401). The sign-in `state` names the server and the user and carries a one-time
 * nonce stored (sealed) with that user's credential, so a callback can only ever complete the sign-in of
 * the user who started it, within the link's lifetime, once.
 */
export class McpOAuth implements McpOAuthFlow {
  constructor(private readonly deps: McpOAuthDeps) {}

  async providerFor(ctx: Ctx, server: string, _definition: McpServerDefinition, userId: string): Promise<OAuthClientProvider | null> {
    const stored = await this.deps.credentials.read<StoredOAuth>(ctx, server, userId, 'oauth');
    if (!stored?.tokens) return null;
    return new StoredOAuthProvider(this.deps, server, userId, stored);
  }

  async start(ctx: Ctx, server: string, definition: McpServerDefinition, userId: string): Promise<string> {
    if (definition.auth !== 'oauth' || !definition.url) throw new UserInputError(`The MCP server "${server}" does not use OAuth.`, 'server');
    const sys = Ctx.system(this.deps.logger, 'mcp-oauth');
    const stored: StoredOAuth = (await this.deps.credentials.read<StoredOAuth>(sys, server, userId, 'oauth')) ?? {};
    const nonce = randomBytes(24).toString('base64url');
    // A new sign-in replaces the tokens; the client registration is kept.
    delete stored.tokens;
    delete stored.verifier;
    stored.pending = { nonce, at: Date.now() };
    const state = Buffer.from(JSON.stringify({ s: server, u: userId, n: nonce } satisfies SignInState)).toString('base64url');
    const provider = new StoredOAuthProvider(this.deps, server, userId, stored, state);
    await provider.save();
    let result: string;
    try {
      result = await mcpOAuthDriver()(provider, { serverUrl: definition.url });
    } catch (err) {
      this.deps.logger.warn({ server, error: (err as Error).message }, 'MCP OAuth sign-in could not start');
      throw new UserInputError(`The sign-in to the MCP server "${server}" could not start: ${(err as Error).message.slice(0, 200)}`, 'server');
    }
    if (result !== 'REDIRECT' || !provider.authorizationUrl) throw new UserInputError(`The MCP server "${server}" did not ask for a sign-in.`, 'server');
    await this.deps.audit.record(ctx, 'mcp.oauth.start', { type: 'McpServer', id: server }, {});
    return provider.authorizationUrl.toString();
  }

  /** Completes a sign-in from the callback's `code` and `state`; returns the server's name. */
  async callback(code: string, state: string): Promise<string> {
    const sys = Ctx.system(this.deps.logger, 'mcp-oauth-callback');
    let parsed: SignInState;
    try {
      parsed = JSON.parse(Buffer.from(state, 'base64url').toString('utf8')) as SignInState;
    } catch {
      throw new McpOAuthCallbackError('This sign-in link is not valid.');
    }
    if (typeof parsed?.s !== 'string' || typeof parsed.u !== 'string' || typeof parsed.n !== 'string') throw new McpOAuthCallbackError('This sign-in link is not valid.');
    const stored = await this.deps.credentials.read<StoredOAuth>(sys, parsed.s, parsed.u, 'oauth').catch(() => null);
    const pending = stored?.pending;
    if (!stored || !pending || !sameSecret(pending.nonce, parsed.n)) throw new McpOAuthCallbackError('This sign-in link is not valid or was already used.');
    if (Date.now() - pending.at > (this.deps.signInTtlMs ?? 10 * 60_000)) throw new McpOAuthCallbackError('This sign-in link has expired; ask for a new one.');
    const definition = await this.deps.definitionOf(sys, parsed.s);
    if (!definition || definition.auth !== 'oauth' || !definition.url) throw new McpOAuthCallbackError('This MCP server no longer uses OAuth.');
    // One use only, whatever happens next.
    delete stored.pending;
    const provider = new StoredOAuthProvider(this.deps, parsed.s, parsed.u, stored);
    await provider.save();
    try {
      const result = await mcpOAuthDriver()(provider, { serverUrl: definition.url, authorizationCode: code });
      if (result !== 'AUTHORIZED') throw new Error('the authorization server gave no tokens');
    } catch (err) {
      this.deps.logger.warn({ server: parsed.s, error: (err as Error).message }, 'MCP OAuth code exchange failed');
      throw new McpOAuthCallbackError('The authorization server did not accept the sign-in; ask for a new link.');
    }
    delete stored.verifier;
    await provider.save();
    await this.deps.dropUser(parsed.s, parsed.u);
    await this.deps.audit.record(sys, 'mcp.oauth.connected', { type: 'McpServer', id: parsed.s }, { userId: parsed.u });
    return parsed.s;
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
