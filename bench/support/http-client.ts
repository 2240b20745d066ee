import http from 'node:http';

/** A keep-alive HTTP client with as many sockets as loops: the same client for the floor and for /graphql. */
export class HttpClient {
  private readonly agent: http.Agent;
  private readonly url: URL;

  constructor(baseUrl: string, sockets: number) {
    this.url = new URL(baseUrl);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  }

  post(pathName: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.url.hostname,
          port: this.url.port,
          path: pathName,
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  get(pathName: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: this.url.hostname, port: this.url.port, path: pathName, method: 'GET', agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** A GraphQL operation over HTTP; throws on transport errors or GraphQL errors. */
  async gql<T>(query: string, variables: Record<string, unknown> | undefined, token: string | null): Promise<T> {
    const res = await this.post('/graphql', JSON.stringify({ query, variables }), token ? { authorization: `Bearer ${token}` } : {});
    const parsed = JSON.parse(res.body) as { data?: T; errors?: Array<{ message: string }> };
    if (parsed.errors?.length || !parsed.data) throw new Error(`GraphQL ${res.status}: ${JSON.stringify(parsed.errors ?? parsed)}`);
    return parsed.data;
  }

  close(): void {
    this.agent.destroy();
  }
}
