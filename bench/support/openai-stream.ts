import http from 'node:http';
import { now } from './stats';

/**
 * A lean streaming client of `POST /v1/chat/completions` (keep-alive, no SDK), timing one request from
 * sending it to the first SSE chunk with content and to `[DONE]`, on the same clock as the GraphQL client.
 */
export class OpenAIStreamClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private readonly url: URL;

  constructor(
    baseUrl: string,
    private readonly token: string,
  ) {
    this.url = new URL(baseUrl);
  }

  firstToken(text: string, sessionKey: string): Promise<{ firstMs: number; totalMs: number; status: number }> {
    const body = JSON.stringify({ model: 'muninn', stream: true, messages: [{ role: 'user', content: text }] });
    const sentAt = now();
    return new Promise((resolve, reject) => {
      let first: number | null = null;
      const req = http.request(
        {
          host: this.url.hostname,
          port: this.url.port,
          path: '/v1/chat/completions',
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${this.token}`, 'x-muninn-session': sessionKey },
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            if (first === null && /"content":"[^"]/.test(chunk)) first = now();
          });
          res.on('end', () => {
            const end = now();
            if (res.statusCode !== 200 || first === null) reject(new Error(`/v1/chat/completions answered ${res.statusCode} without content`));
            else resolve({ firstMs: first - sentAt, totalMs: end - sentAt, status: res.statusCode });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
