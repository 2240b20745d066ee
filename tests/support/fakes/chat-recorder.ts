import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChannelStatus, ChannelTransport, InboundSink, OutboundChunk } from '../../../server/channels/channel.types';

/** One delivered chunk as the fake platform saw it. */
export interface RecordedChunk {
  chatId: string;
  text: string;
  key: string;
  at: number;
}

/**
 * A fake chat platform over real HTTP: transports in any process POST the chunks they send here, so a
 * test can check what reached "the platform" even from a worker process it killed.
 */
export class ChatRecorderServer {
  readonly chunks: RecordedChunk[] = [];
  /** Requests that arrived while held, answered (and recorded) on release. */
  private held: Array<() => void> | null = null;

  private constructor(private readonly server: http.Server) {}

  /**
   * Stops accepting chunks: requests wait unanswered, so no chunk is "accepted by the platform" until
   * `release`. A sender killed meanwhile never had its chunk accepted (it is neither recorded nor answered).
   */
  hold(): void {
    this.held ??= [];
  }

  /** Answers the held requests whose sender is still connected, in arrival order. */
  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const answer of held) answer();
  }

  static async start(): Promise<ChatRecorderServer> {
    const server = http.createServer();
    const recorder = new ChatRecorderServer(server);
    server.on('request', (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const accept = () => {
          if (req.socket.destroyed) return; // the sender died while held: the platform never took it
          const chunk = JSON.parse(body) as Omit<RecordedChunk, 'at'>;
          recorder.chunks.push({ ...chunk, at: Date.now() });
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: recorder.chunks.length }));
        };
        if (recorder.held) recorder.held.push(accept);
        else accept();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return recorder;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A ChannelTransport whose `send` posts to a ChatRecorderServer (no inbound side). */
export class RecorderTransport implements ChannelTransport {
  readonly maxMessageLength = 4096;
  private state: ChannelStatus['state'] = 'STOPPED';

  constructor(
    readonly channel: string,
    private readonly url: string,
  ) {}

  async start(_sink: InboundSink): Promise<void> {
    this.state = 'CONNECTED';
  }

  async stop(): Promise<void> {
    this.state = 'STOPPED';
  }

  async send(chunk: OutboundChunk): Promise<{ platformMessageId?: string }> {
    const res = await fetch(this.url, { method: 'POST', body: JSON.stringify({ chatId: chunk.chatId, text: chunk.text, key: chunk.idempotencyKey }) });
    if (!res.ok) throw new Error(`recorder answered ${res.status}`);
    const { id } = (await res.json()) as { id: number };
    return { platformMessageId: String(id) };
  }

  status(): ChannelStatus {
    return { channel: this.channel, state: this.state, updatedAt: new Date() };
  }
}
