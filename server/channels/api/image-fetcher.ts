import http from 'node:http';
import https from 'node:https';
import { AddressRefusedError, isPublicAddress, pinnedLookup, resolveAllowedTarget, systemLookup, type AddressPolicy, type HostLookup } from '../../modules/tools';
import type { InboundImage } from '../../modules/conversation';
import { OpenAIError } from './openai-errors';
import { IMAGE_TYPES } from './openai-request';

export interface ImageFetcherOptions {
  maxBytes: number;
  /** @default 10 000 ms */
  timeoutMs?: number;
  /** @default the system resolver */
  lookup?: HostLookup;
  /** @default public unicast addresses only (the tools' SSRF policy) */
  isAllowedAddress?: AddressPolicy;
}

const MAX_REDIRECTS = 3;

/**
 * Fetches an image an API client names by http(s) URL, through the same SSRF guard as the `http_request`
 * tool (local, private and metadata targets refused after DNS, the checked address pinned, every redirect
 * checked again), within the size limit and only for image types. Failures are the client's 400 (413 when
 * too large), naming the content part.
 */
export class ImageFetcher {
  private readonly lookup: HostLookup;
  private readonly allowed: AddressPolicy;
  private readonly timeoutMs: number;

  constructor(private readonly options: ImageFetcherOptions) {
    this.lookup = options.lookup ?? systemLookup;
    this.allowed = options.isAllowedAddress ?? isPublicAddress;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async fetch(rawUrl: string, param: string, signal?: AbortSignal): Promise<InboundImage> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const all = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let url = new URL(rawUrl);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw OpenAIError.invalid(`${param}.url redirects to a ${url.protocol} URL.`, `${param}.url`, 'invalid_image_url');
      let target;
      try {
        target = await resolveAllowedTarget(url, this.lookup, this.allowed);
      } catch (err) {
        const why = err instanceof AddressRefusedError ? `is refused: ${err.message}` : `cannot be fetched: ${(err as Error).message}`;
        throw OpenAIError.invalid(`${param}.url ${why}.`, `${param}.url`, 'invalid_image_url');
      }
      const res = await this.get(url, target, all, param);
      if (res.location) {
        url = new URL(res.location, url);
        continue;
      }
      return res.image!;
    }
    throw OpenAIError.invalid(`${param}.url redirects more than ${MAX_REDIRECTS} times.`, `${param}.url`, 'invalid_image_url');
  }

  private get(url: URL, target: { address: string; family: number }, signal: AbortSignal, param: string): Promise<{ location?: string; image?: InboundImage }> {
    const max = this.options.maxBytes;
    return new Promise((resolve, reject) => {
      const mod = url.protocol === 'https:' ? https : http;
      const fail = (message: string) => reject(OpenAIError.invalid(`${param}.url ${message}.`, `${param}.url`, 'invalid_image_url'));
      const req = mod.request(url, { method: 'GET', headers: { 'user-agent': 'Muninn image fetch', accept: IMAGE_TYPES.join(', ') }, lookup: pinnedLookup(target) as never, signal }, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          resolve({ location: res.headers.location });
          return;
        }
        if (status !== 200) {
          res.resume();
          fail(`answered HTTP ${status}`);
          return;
        }
        const mimeType = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (!IMAGE_TYPES.includes(mimeType)) {
          res.resume();
          fail(`is not an image (${mimeType || 'no content type'}); images must be one of ${IMAGE_TYPES.join(', ')}`);
          return;
        }
        if (Number(res.headers['content-length'] ?? 0) > max) {
          res.destroy();
          reject(OpenAIError.tooLarge(`${param} is larger than ${Math.round(max / 1024)} KiB (channels.api.max_image_kb).`, `${param}.url`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > max) {
            res.destroy();
            reject(OpenAIError.tooLarge(`${param} is larger than ${Math.round(max / 1024)} KiB (channels.api.max_image_kb).`, `${param}.url`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ image: { mimeType, dataBase64: Buffer.concat(chunks).toString('base64') } }));
        res.on('error', (err) => fail(`could not be read: ${err.message}`));
      });
      req.on('error', (err) => fail(`cannot be fetched: ${signal.aborted ? 'timed out' : err.message}`));
      req.end();
    });
  }
}
