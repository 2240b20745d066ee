import http from 'node:http';
import https from 'node:https';
import { z } from 'zod';
import { TrustLevel } from '../../../common/trust';
import { defineTool, ToolRefusedError, type Tool } from '../tool';
import { AddressRefusedError, isPublicAddress, matchesDomain, normalizeHostname, pinnedLookup, resolveAllowedTarget, systemLookup, type AddressPolicy, type HostLookup } from './address-policy';

export const MAX_REDIRECTS = 5;

export interface HttpRequestToolOptions {
  /** Domains that may be fetched (subdomains included); empty allows any public host. `tools.http_request.allow_domains`. */
  allowDomains: readonly string[];
  /** Largest response body read; the rest is cut. `tools.http_request.max_bytes`. */
  maxBytes: number;
  /** Timeout of the whole request, redirects included. `tools.http_request.timeout_ms`. */
  timeoutMs: number;
  /** DNS resolution of host names (all A/AAAA records). @default the system resolver */
  lookup?: HostLookup;
  /** Which resolved addresses may be connected to. @default isPublicAddress */
  isAllowedAddress?: AddressPolicy;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const schema = z
  .object({
    url: z
      .string()
      .max(2000)
      // Any absolute URL parses; a scheme other than http(s) is then refused (and audited) where it runs.
      .refine((value) => URL.canParse(value), 'must be an absolute http:// or https:// URL')
      .describe('Absolute http:// or https:// URL.'),
    method: z.enum(METHODS).default('GET').describe('HTTP method.'),
    headers: z.record(z.string().max(100), z.string().max(4000)).optional().describe('Extra request headers.'),
    body: z.string().max(200_000).optional().describe('Request body (text) for POST, PUT, PATCH.'),
  })
  .strict();

export type HttpRequestArgs = z.output<typeof schema>;

/** Headers the caller may not set: they would break framing or the pinned connection. */
const FORBIDDEN_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'upgrade', 'keep-alive', 'te', 'trailer', 'expect']);
/** Headers dropped when a redirect leaves the origin (as browsers do). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
/** Response headers passed back to the model. */
const SHOWN_HEADERS = ['content-type', 'content-length', 'last-modified', 'location', 'retry-after'];
const BINARY_TYPE = /^(image|audio|video|font)\/|^application\/(octet-stream|pdf|zip|gzip|x-tar|x-7z|wasm)/i;

interface Target {
  address: string;
  family: number;
}

interface RawResponse {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
}

/**
 * `http_request` (TRUSTED): fetches a URL. Only public addresses are reached: the host is checked
 * against the domain allowlist, resolved, and refused when any of its addresses is not allowed; the
 * connection then goes to the address that was checked (no second DNS lookup, so no DNS rebinding).
 * Redirects are followed by hand, at most 5, each hop checked again.
 */
export function createHttpRequestTool(options: HttpRequestToolOptions): Tool<HttpRequestArgs> {
  const lookup = options.lookup ?? systemLookup;
  const allowed = options.isAllowedAddress ?? isPublicAddress;

  /** Checks one URL and returns the address to connect to; throws ToolRefusedError on policy refusals. */
  async function checkTarget(url: URL): Promise<Target> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolRefusedError(`only http and https URLs may be fetched, not ${url.protocol}`);
    const host = normalizeHostname(url.hostname);
    if (options.allowDomains.length && !options.allowDomains.some((d) => matchesDomain(host, d))) {
      throw new ToolRefusedError(`${host} is not in tools.http_request.allow_domains`);
    }
    try {
      return await resolveAllowedTarget(url, lookup, allowed);
    } catch (err) {
      if (err instanceof AddressRefusedError) throw new ToolRefusedError(err.message);
      throw err;
    }
  }

  return defineTool({
    name: 'http_request',
    description:
      'Makes an HTTP request to a public URL and returns the status, a few headers and the body as text. ' +
      'Private, local and metadata addresses are refused.',
    schema,
    minTrust: TrustLevel.TRUSTED,
    summarizeArgs: (args) => `${args.method} ${safeUrl(args.url)}`,
    async run(tc, args) {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = AbortSignal.any([tc.signal, timeout]);
      let url = new URL(args.url);
      let method: string = args.method;
      let body = args.body;
      const headers: Record<string, string> = { 'user-agent': 'Muninn http_request', accept: '*/*' };
      for (const [k, v] of Object.entries(args.headers ?? {})) {
        const key = k.toLowerCase();
        if (!FORBIDDEN_HEADERS.has(key) && !key.startsWith('proxy-')) headers[key] = v;
      }
      try {
        for (let hop = 0; ; hop++) {
          let target: Target;
          try {
            target = await checkTarget(url);
          } catch (err) {
            if (hop > 0 && err instanceof ToolRefusedError) throw new ToolRefusedError(`redirect to ${safeUrl(url.toString())} refused: ${err.message}`);
            throw err;
          }
          const res = await send(url, method, headers, body, target, signal, options.maxBytes);
          const location = res.headers.location;
          if ([301, 302, 303, 307, 308].includes(res.status) && location) {
            if (hop >= MAX_REDIRECTS) throw new Error(`too many redirects (more than ${MAX_REDIRECTS})`);
            const next = new URL(location, url);
            if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
              method = method === 'HEAD' ? 'HEAD' : 'GET';
              body = undefined;
              delete headers['content-type'];
            }
            if (next.origin !== url.origin) for (const h of CREDENTIAL_HEADERS) delete headers[h];
            url = next;
            continue;
          }
          const shown: Record<string, string> = {};
          for (const h of SHOWN_HEADERS) {
            const v = res.headers[h];
            if (v !== undefined) shown[h] = Array.isArray(v) ? v.join(', ') : v;
          }
          const type = shown['content-type'] ?? '';
          return {
            status: res.status,
            statusText: res.statusText,
            url: withoutCredentials(url),
            redirects: hop,
            headers: shown,
            body: BINARY_TYPE.test(type) ? `[binary ${type}, ${res.body.length} bytes]` : res.body.toString('utf8'),
            ...(res.truncated ? { truncated: `body cut at ${options.maxBytes} bytes` } : {}),
          };
        }
      } catch (err) {
        if (timeout.aborted && !tc.signal.aborted) throw new Error(`the request timed out after ${options.timeoutMs} ms`);
        throw err;
      }
    },
  });
}

/** One request to the checked address; reads at most `maxBytes` of the body. */
function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  target: Target,
  signal: AbortSignal,
  maxBytes: number,
): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, {
      method,
      headers,
      signal,
      // A fresh connection per request, made to the address that passed the policy.
      agent: false,
      lookup: pinnedLookup(target),
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const base = { status, statusText: res.statusMessage ?? '', headers: res.headers };
      if ((status >= 300 && status < 400 && res.headers.location) || method === 'HEAD') {
        res.destroy();
        resolve({ ...base, body: Buffer.alloc(0), truncated: false });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (truncated: boolean) => {
        if (settled) return;
        settled = true;
        resolve({ ...base, body: Buffer.concat(chunks), truncated });
      };
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (size + chunk.length > maxBytes) {
          chunks.push(chunk.subarray(0, maxBytes - size));
          size = maxBytes;
          finish(true);
          res.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => finish(false));
      res.on('error', (err) => {
        if (!settled) reject(err);
      });
      res.on('close', () => {
        if (!settled && !res.complete) reject(new Error('the connection closed before the response was complete'));
      });
    });
    req.end(body);
  });
}

/** The URL without credentials or query string, for logs and summaries (queries often carry keys). */
function safeUrl(value: string): string {
  try {
    const u = new URL(value);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

/** The URL as text without user:password. */
function withoutCredentials(url: URL): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
}
