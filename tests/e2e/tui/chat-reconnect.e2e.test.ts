/**
 * `muninn chat` keeps a streamed reply whole when its WebSocket drops mid-turn: it subscribes again with
 * `afterSeq` = the last seq it printed and shows the rest once. A TCP proxy between client and server
 * cuts every connection (and refuses new ones for a while) and reads the client's graphql-ws frames to
 * see which `afterSeq` each subscription asked for.
 */
import net from 'node:net';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { ChatProcess, PROMPT } from './chat-process';

const TEXT = 'Once upon a time, a raven flew over the hills and remembered everything it saw.';
const CHUNKS = 8;

/** Reads the masked text frames a WebSocket client sends, after the HTTP upgrade request. */
class ClientFrameReader {
  private buffer = Buffer.alloc(0);
  private upgraded = false;

  constructor(private readonly onText: (text: string) => void) {}

  push(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (!this.upgraded) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!this.buffer.subarray(0, end).toString('latin1').toLowerCase().includes('upgrade: websocket')) {
        this.upgraded = true;
        this.buffer = Buffer.alloc(0);
        this.push = () => undefined; // plain HTTP: nothing to read
        return;
      }
      this.upgraded = true;
      this.buffer = this.buffer.subarray(end + 4);
    }
    for (;;) {
      if (this.buffer.length < 2) return;
      const opcode = this.buffer[0]! & 0x0f;
      const masked = (this.buffer[1]! & 0x80) !== 0;
      let length = this.buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return;
        length = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return;
        length = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const maskAt = offset;
      if (masked) offset += 4;
      if (this.buffer.length < offset + length) return;
      const payload = Buffer.from(this.buffer.subarray(offset, offset + length));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= this.buffer[maskAt + (i % 4)]!;
      this.buffer = this.buffer.subarray(offset + length);
      if (opcode === 1) this.onText(payload.toString('utf8'));
    }
  }
}

/** A TCP proxy that can cut all its connections and refuse new ones for a while. */
class DroppingProxy {
  readonly subscribeVariables: Array<Record<string, unknown>> = [];
  private readonly sockets = new Set<net.Socket>();
  private refusing = false;

  private constructor(private readonly server: net.Server) {}

  static async start(target: URL): Promise<DroppingProxy> {
    const server = net.createServer();
    const proxy = new DroppingProxy(server);
    server.on('connection', (client) => proxy.accept(client, Number(target.port), target.hostname));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  private accept(client: net.Socket, port: number, host: string): void {
    if (this.refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(port, host);
    const reader = new ClientFrameReader((text) => {
      const message = JSON.parse(text) as { type?: string; payload?: { variables?: Record<string, unknown> } };
      if (message.type === 'subscribe') this.subscribeVariables.push(message.payload?.variables ?? {});
    });
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (d: Buffer) => reader.push(d));
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  /** Cuts every connection and refuses new ones for `ms`. */
  cut(ms: number): void {
    this.refusing = true;
    for (const s of this.sockets) s.destroy();
    setTimeout(() => (this.refusing = false), ms).unref();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('muninn chat when the connection drops during a turn', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let proxy: DroppingProxy;
  let p: ChatProcess | null = null;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault(() => ({ text: TEXT, chunks: CHUNKS, chunkDelayMs: 300 }));
    t = await startTestApp({ config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' } } } } });
    proxy = await DroppingProxy.start(new URL(t.url));
  });

  afterAll(async () => {
    await p?.dispose();
    await proxy.close();
    await t.close();
    await model.close();
  });

  it('resubscribes with afterSeq and prints the whole reply exactly once', async () => {
    p = ChatProcess.start(['--url', proxy.url, '--token', t.ownerToken]);
    await p.waitForPrompt();
    const mark = p.stdout.length;
    p.writeLine('tell me a story');
    await p.waitForText(`muninn> ${TEXT.slice(0, Math.ceil(TEXT.length / CHUNKS))}`, mark);

    proxy.cut(900);
    await p.waitFor(() => p!.stderr.includes('lost the connection to the server'), 'the connection-lost note');
    await p.waitForText(`muninn> ${TEXT}\n${PROMPT}`, mark, 20_000);

    expect(p.stdout.slice(mark)).toBe(`tell me a story\nmuninn> ${TEXT}\n${PROMPT}`);
    expect(p.stderr).toMatch(/ℹ reconnected; following session \S+ again from seq \d+/);
    // The first subscription read everything kept; the one after the drop asked only for what came later.
    const afterSeqs = proxy.subscribeVariables.map((v) => v.afterSeq as number);
    expect(afterSeqs.length).toBeGreaterThanOrEqual(2);
    expect(afterSeqs[0]).toBe(0);
    expect(afterSeqs.at(-1)!).toBeGreaterThan(0);
    expect(model.chatRequests()).toHaveLength(1);

    // Still usable afterwards.
    expect(await p.say('and another')).toBe(`and another\nmuninn> ${TEXT}\n`);
  }, 60_000);
});
