import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// === A fake OAuth 2.1 authorization server on 127.0.0.1:0, speaking the real protocol over HTTP:
// RFC 8414 metadata, RFC 7591 dynamic client registration, the authorization-code grant with PKCE (S256
// only; the "user" consents at once with a 302 back to the redirect URI), refresh tokens, and a check the
// MCP resource server uses to accept or refuse a bearer. Everything it issued and saw is recorded.

export interface IssuedToken {
  access: string;
  refresh: string;
  clientId: string;
  /** Who signed in (the `login_hint` the test adds to the sign-in URL, else "user"). */
  subject: string;
  revoked: boolean;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  subject: string;
  used: boolean;
}

export class FakeOAuthServer {
  readonly clients = new Map<string, { redirectUris: string[] }>();
  readonly tokens: IssuedToken[] = [];
  readonly tokenRequests: Array<{ grantType: string; clientId: string; ok: boolean }> = [];
  readonly authorizeRequests: URLSearchParams[] = [];
  private readonly codes = new Map<string, PendingCode>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeOAuthServer> {
    let self: FakeOAuthServer | null = null;
    const server = http.createServer((req, res) => void self!.handle(req, res).catch(() => res.writeHead(500).end()));
    self = new FakeOAuthServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get issuer(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The token's record when the bearer is a live access token. */
  check(authorization: string | null): IssuedToken | null {
    const token = authorization?.replace(/^Bearer /, '');
    return this.tokens.find((t) => t.access === token && !t.revoked) ?? null;
  }

  /** Makes every access token issued so far invalid (as if expired); refresh tokens stay good. */
  expireAccessTokens(): void {
    for (const t of this.tokens) t.revoked = true;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.issuer);
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname.startsWith('/.well-known/oauth-authorization-server')) {
      return json(200, {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        registration_endpoint: `${this.issuer}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    }
    if (req.method === 'POST' && url.pathname === '/register') {
      const body = JSON.parse(await readBody(req)) as { redirect_uris?: string[] };
      if (!body.redirect_uris?.length) return json(400, { error: 'invalid_redirect_uri' });
      const clientId = `client-${randomBytes(6).toString('hex')}`;
      this.clients.set(clientId, { redirectUris: body.redirect_uris });
      return json(201, { ...body, client_id: clientId, client_id_issued_at: Math.floor(Date.now() / 1000), token_endpoint_auth_method: 'none' });
    }
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const p = url.searchParams;
      this.authorizeRequests.push(p);
      const client = this.clients.get(p.get('client_id') ?? '');
      const redirectUri = p.get('redirect_uri') ?? '';
      if (!client || !client.redirectUris.includes(redirectUri)) return json(400, { error: 'invalid_client' });
      if (p.get('response_type') !== 'code' || p.get('code_challenge_method') !== 'S256' || !p.get('code_challenge')) return json(400, { error: 'invalid_request' });
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, { clientId: p.get('client_id')!, redirectUri, challenge: p.get('code_challenge')!, subject: p.get('login_hint') ?? 'user', used: false });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      if (p.get('state') !== null) back.searchParams.set('state', p.get('state')!);
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const p = new URLSearchParams(await readBody(req));
      const grantType = p.get('grant_type') ?? '';
      const clientId = p.get('client_id') ?? '';
      const fail = (error: string) => {
        this.tokenRequests.push({ grantType, clientId, ok: false });
        json(400, { error });
      };
      if (!this.clients.has(clientId)) return fail('invalid_client');
      let subject: string;
      if (grantType === 'authorization_code') {
        const pending = this.codes.get(p.get('code') ?? '');
        if (!pending || pending.used || pending.clientId !== clientId || pending.redirectUri !== p.get('redirect_uri')) return fail('invalid_grant');
        const verifier = p.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== pending.challenge) return fail('invalid_grant');
        pending.used = true;
        subject = pending.subject;
      } else if (grantType === 'refresh_token') {
        const old = this.tokens.find((t) => t.refresh === p.get('refresh_token') && t.clientId === clientId);
        if (!old) return fail('invalid_grant');
        subject = old.subject;
      } else return fail('unsupported_grant_type');
      const issued: IssuedToken = { access: `at-${randomBytes(12).toString('hex')}`, refresh: `rt-${randomBytes(12).toString('hex')}`, clientId, subject, revoked: false };
      this.tokens.push(issued);
      this.tokenRequests.push({ grantType, clientId, ok: true });
      return json(200, { access_token: issued.access, refresh_token: issued.refresh, token_type: 'Bearer', expires_in: 3600 });
    }
    json(404, { error: 'not_found' });
  }
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
